package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner/duck"
)

// A contract is checked in DuckDB over the model's output batch: the SQL's
// result is materialized as _weir_out, every row gets a _weir_reason (the
// rules it breaks, "; "-separated, NULL for a good row) in _weir_checked,
// good rows go to the sink (cast to the contract's column types) and bad
// rows to <sink>__quarantine with _weir_reason and _weir_run.

// The temporary tables of a contract check.
const (
	outTable     = "_weir_out"
	checkedTable = "_weir_checked"
	reasonColumn = "_weir_reason"
	runColumn    = "_weir_run"
)

// checked is the outcome of a contract check.
type checked struct {
	total, bad int64
	goodSQL    string // the rows for the sink
	badSQL     string // the rows for the quarantine table
}

// checkContract materializes the SQL's result, marks the rows that break
// the contract, and fails when their share is above max_bad_ratio.
func (run *modelRun) checkContract(ctx context.Context, text string) (*checked, error) {
	c := run.t.Contract
	if err := run.db.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE %s AS %s", outTable, text)); err != nil {
		return nil, routes.BadInput("model %s: %v", run.t.Name, err)
	}
	schema, err := run.db.Schema(ctx, "SELECT * FROM "+outTable)
	if err != nil {
		return nil, err
	}
	cols := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = f.Name
	}
	plan, err := contractSQL(c, cols, run.rep.RunID)
	if err != nil {
		return nil, fmt.Errorf("contract of %s: %w", run.t.Name, err)
	}
	if err := run.db.Exec(ctx, plan.checkSQL); err != nil {
		return nil, routes.BadInput("contract of %s: %v", run.t.Name, err)
	}
	chk := &checked{goodSQL: plan.goodSQL, badSQL: plan.badSQL}
	if err := run.countBad(ctx, chk); err != nil {
		return nil, err
	}
	if err := noteContract(ctx, run.db, c, run.rep, chk.total, chk.bad); err != nil {
		return nil, err
	}
	return chk, run.checkRatio(ctx, chk)
}

func (run *modelRun) countBad(ctx context.Context, chk *checked) error {
	q := fmt.Sprintf("SELECT count(*), count(%s) FROM %s", reasonColumn, checkedTable)
	return run.db.QueryRow(ctx, q, &chk.total, &chk.bad)
}

// checkRatio fails the run, before anything is written, when too many
// rows break the contract; the message shows the commonest reasons.
func (run *modelRun) checkRatio(ctx context.Context, chk *checked) error {
	limit := run.t.Contract.MaxBadRatio
	if chk.total == 0 || float64(chk.bad)/float64(chk.total) <= limit {
		return nil
	}
	return fmt.Errorf("contract of %s: %d of %d rows (%.1f%%) break it, above max_bad_ratio %g; nothing was committed; reasons: %s",
		run.t.Name, chk.bad, chk.total, 100*float64(chk.bad)/float64(chk.total), limit, run.topReasons(ctx))
}

func (run *modelRun) topReasons(ctx context.Context) string {
	q := fmt.Sprintf("SELECT string_agg(r || ' (' || n || ')', ', ') FROM (SELECT %[1]s AS r, count(*) AS n FROM %[2]s WHERE %[1]s IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5)",
		reasonColumn, checkedTable)
	var s string
	if err := run.db.QueryRow(ctx, q, &s); err != nil {
		return "unknown"
	}
	return s
}

// contractPlan is the SQL of one contract check.
type contractPlan struct {
	checkSQL string // CREATE TEMP TABLE _weir_checked: the output and its reasons
	goodSQL  string
	badSQL   string
}

// contractSQL renders the check of contract c over an output with columns
// cols; runID fills _weir_run.
func contractSQL(c *dagfile.Contract, cols []string, runID string) (contractPlan, error) {
	types, err := columnTypes(c, cols)
	if err != nil {
		return contractPlan{}, err
	}
	conds := columnConds(c, types)
	for _, r := range c.Rules {
		conds = append(conds, ruleConds(r, types)...)
	}
	reason := "NULL::VARCHAR"
	if len(conds) > 0 {
		reason = "NULLIF(concat_ws('; ', " + strings.Join(conds, ", ") + "), '')"
	}
	return contractPlan{
		checkSQL: fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, %s AS %s FROM %s", checkedTable, reason, reasonColumn, outTable),
		goodSQL:  fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NULL", goodColumns(cols, types), checkedTable, reasonColumn),
		badSQL: fmt.Sprintf("SELECT %s, %s, %s AS %s FROM %s WHERE %s IS NOT NULL",
			identList(cols), reasonColumn, duck.Literal(runID), runColumn, checkedTable, reasonColumn),
	}, nil
}

// columnTypes maps each output column to its contract type ("" = as is)
// and checks the contract's columns are all in the output.
func columnTypes(c *dagfile.Contract, cols []string) (map[string]string, error) {
	have := map[string]bool{}
	for _, name := range cols {
		have[name] = true
	}
	types := map[string]string{}
	for _, col := range c.Columns {
		if !have[col.Name] {
			return nil, routes.BadInput("the output has no column %q (it has %s)", col.Name, strings.Join(cols, ", "))
		}
		types[col.Name] = col.Type
	}
	return types, nil
}

// when renders one check: the label when cond holds.
func when(cond, label string) string {
	return fmt.Sprintf("CASE WHEN %s THEN %s END", cond, duck.Literal(label))
}

// value is a column as the rules see it: cast to its contract type.
func value(col string, types map[string]string) string {
	if t := types[col]; t != "" {
		return fmt.Sprintf("TRY_CAST(%s AS %s)", duck.Ident(col), t)
	}
	return duck.Ident(col)
}

// columnConds checks the contract's columns: type and required.
func columnConds(c *dagfile.Contract, types map[string]string) []string {
	var conds []string
	for _, col := range c.Columns {
		id := duck.Ident(col.Name)
		if col.Type != "" {
			conds = append(conds, when(fmt.Sprintf("%s IS NOT NULL AND %s IS NULL", id, value(col.Name, types)),
				fmt.Sprintf("type(%s): not %s", col.Name, col.Type)))
		}
		if col.Required {
			conds = append(conds, when(id+" IS NULL", "required("+col.Name+")"))
		}
	}
	return conds
}

// ruleConds renders one rule's checks (one per column for not_null).
func ruleConds(r dagfile.ContractRule, types map[string]string) []string {
	label := func(def string) string {
		if r.Name != "" {
			return r.Name
		}
		return def
	}
	v := value(r.Column, types)
	switch r.Kind {
	case dagfile.RuleNotNull:
		var out []string
		for _, col := range r.Columns {
			out = append(out, when(value(col, types)+" IS NULL", label("not_null("+col+")")))
		}
		return out
	case dagfile.RuleUnique:
		return []string{when(fmt.Sprintf("count(*) OVER (PARTITION BY %s) > 1", identList(r.Columns)), label("unique("+strings.Join(r.Columns, ", ")+")"))}
	case dagfile.RuleAcceptedValues:
		return []string{when(fmt.Sprintf("%s IS NOT NULL AND CAST(%s AS VARCHAR) NOT IN (%s)", v, v, literalList(r.Values)), label("accepted_values("+r.Column+")"))}
	case dagfile.RuleRange:
		return []string{when(rangeCond(v, r.Min, r.Max), label("range("+r.Column+")"))}
	case dagfile.RuleRegex:
		return []string{when(fmt.Sprintf("%s IS NOT NULL AND NOT regexp_matches(CAST(%s AS VARCHAR), %s)", v, v, duck.Literal(r.Pattern)), label("regex("+r.Column+")"))}
	case dagfile.RuleSQL:
		return []string{when(fmt.Sprintf("NOT coalesce((%s), false)", r.SQL), label("sql("+r.SQL+")"))}
	}
	return nil
}

// rangeCond is true when v lies outside [lo, hi] (either bound optional).
func rangeCond(v, lo, hi string) string {
	var parts []string
	if lo != "" {
		parts = append(parts, v+" < "+bound(lo))
	}
	if hi != "" {
		parts = append(parts, v+" > "+bound(hi))
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// bound renders a range bound: a number as is, anything else as a literal
// DuckDB casts to the column's type ('2020-01-01').
func bound(s string) string {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return duck.Literal(s)
}

// goodColumns projects the output, cast to the contract's types.
func goodColumns(cols []string, types map[string]string) string {
	out := make([]string, len(cols))
	for i, col := range cols {
		out[i] = duck.Ident(col)
		if t := types[col]; t != "" {
			out[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", duck.Ident(col), t, duck.Ident(col))
		}
	}
	return strings.Join(out, ", ")
}

func identList(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = duck.Ident(c)
	}
	return strings.Join(out, ", ")
}

func literalList(vals []string) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = duck.Literal(v)
	}
	return strings.Join(out, ", ")
}
