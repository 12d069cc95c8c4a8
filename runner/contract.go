package runner

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner/duck"
)

// A contract is checked in DuckDB over the model's output batch (or a
// stream's flattened batch), one code path for both: the output is
// materialized as _weir_out; the contract's columns are cast to their
// types (TRY_CAST) and a value that does not cast is marked; then every
// rule is evaluated on the typed columns, except on the values that did
// not cast (their one reason is type(col)). _weir_checked holds the typed
// rows, one _weir_r<i> column per check (its label, or NULL) and their
// _weir_reason ("; "-separated, NULL for a good row). Good rows go to the
// sink as typed, bad rows to <sink>__quarantine as the output had them,
// with _weir_reason and _weir_run.

// The temporary tables and columns of a contract check.
const (
	outTable     = "_weir_out"
	checkedTable = "_weir_checked"
	reasonColumn = "_weir_reason"
	runColumn    = "_weir_run"
	rowColumn    = "_weir_row" // the row's place in _weir_out (its rowid)
)

// checkColumn matches the names of the check's own columns, which an
// output column must not take (it would be read as the check's, or make
// the quarantine table's schema invalid).
var checkColumn = regexp.MustCompile(`^(` + reasonColumn + `|` + runColumn + `|` + rowColumn + `|_weir_[rt][0-9]+)$`)

// checked is the outcome of a contract check.
type checked struct {
	total, bad int64
	goodSQL    string // the rows for the sink
	badSQL     string // the rows for the quarantine table
}

// checkContract materializes the SQL's result, marks the rows that break
// the contract, and fails when their share is above max_bad_ratio.
func (run *modelRun) checkContract(ctx context.Context, c *dagfile.Contract, text string) (*checked, error) {
	if err := run.db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS %s", outTable, text)); err != nil {
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
	plan, err := contractSQL(c, cols, run.rep.RunID, run.sinkKey())
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
	if run.t.Contract != nil { // not the key check of an upsert without one
		if err := noteContract(ctx, run.db, c, plan, "", run.rep, chk.total, chk.bad); err != nil {
			return nil, err
		}
	}
	return chk, run.checkRatio(ctx, c, chk)
}

func (run *modelRun) countBad(ctx context.Context, chk *checked) error {
	q := fmt.Sprintf("SELECT count(*), count(%s) FROM %s", reasonColumn, checkedTable)
	return run.db.QueryRow(ctx, q, &chk.total, &chk.bad)
}

// checkRatio fails the run, before anything is written, when too many
// rows break the contract; the message shows the commonest reasons.
func (run *modelRun) checkRatio(ctx context.Context, c *dagfile.Contract, chk *checked) error {
	limit := c.MaxBadRatio
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
	checkSQL string   // CREATE TEMP TABLE _weir_checked: the typed output and its reasons
	goodSQL  string   // the good rows, typed (the last of each key in the output's order, for an upsert)
	badSQL   string   // the bad rows as the output had them, with their reasons
	rules    []string // the rule of each _weir_r<i> column (type(col), required(col), a rule's label)
}

// check is one check of a contract: a CASE expression that is its label
// when the row breaks it, and the rule it counts under in the report's
// contract.rules.
type check struct{ expr, rule string }

// contractSQL renders the check of contract c over an output with columns
// cols; runID fills _weir_run. With a key, the good rows are the last of
// each key in the output's order (an upsert batch must not repeat a key).
func contractSQL(c *dagfile.Contract, cols []string, runID string, key []string) (contractPlan, error) {
	types, err := columnTypes(c, cols)
	if err != nil {
		return contractPlan{}, err
	}
	ty := newTyping(c, types)
	checks := ty.columnChecks(c)
	for _, r := range c.Rules {
		checks = append(checks, ty.ruleChecks(r)...)
	}
	plan := contractPlan{}
	sel, reasons := []string{"*"}, []string{}
	for i, ch := range checks {
		name := fmt.Sprintf("_weir_r%d", i)
		sel = append(sel, ch.expr+" AS "+name)
		reasons = append(reasons, name)
		plan.rules = append(plan.rules, ch.rule)
	}
	reason := "NULL::VARCHAR"
	if len(reasons) > 0 {
		reason = "NULLIF(concat_ws('; ', " + strings.Join(reasons, ", ") + "), '')"
	}
	plan.checkSQL = fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, %s AS %s FROM (SELECT %s FROM (%s))",
		checkedTable, reason, reasonColumn, strings.Join(sel, ", "), ty.typedSQL())
	plan.goodSQL = fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NULL", identList(cols), checkedTable, reasonColumn)
	if len(key) > 0 {
		plan.goodSQL += fmt.Sprintf(" QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s DESC) = 1", identList(key), rowColumn)
	}
	raw := make([]string, len(cols))
	for i, col := range cols {
		raw[i] = "o." + duck.Ident(col)
	}
	plan.badSQL = fmt.Sprintf("SELECT %s, k.%s, %s AS %s FROM %s k JOIN %s o ON o.rowid = k.%s WHERE k.%s IS NOT NULL ORDER BY k.%s",
		strings.Join(raw, ", "), reasonColumn, duck.Literal(runID), runColumn, checkedTable, outTable, rowColumn, reasonColumn, rowColumn)
	return plan, nil
}

// countRules counts, per rule, the rows of _weir_checked (those matching
// where, when given) that break it: a row that breaks two rules counts
// under both. Rules no row broke are left out.
func (p contractPlan) countRules(ctx context.Context, db *duck.DB, where string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(p.rules) == 0 {
		return out, nil
	}
	counts := make([]string, len(p.rules))
	dest := make([]any, len(p.rules))
	ns := make([]int64, len(p.rules))
	for i := range p.rules {
		counts[i] = fmt.Sprintf("count(_weir_r%d)", i)
		dest[i] = &ns[i]
	}
	q := fmt.Sprintf("SELECT %s FROM %s", strings.Join(counts, ", "), checkedTable)
	if where != "" {
		q += " WHERE " + where
	}
	if err := db.QueryRow(ctx, q, dest...); err != nil {
		return nil, fmt.Errorf("count the contract's failures: %w", err)
	}
	for i, rule := range p.rules {
		if ns[i] > 0 {
			out[rule] += ns[i]
		}
	}
	return out, nil
}

// columnTypes maps each output column to its contract type ("" = as is)
// and checks the contract's columns are all in the output.
func columnTypes(c *dagfile.Contract, cols []string) (map[string]string, error) {
	have := map[string]bool{}
	for _, name := range cols {
		if checkColumn.MatchString(name) {
			return nil, routes.BadInput("the output has a column named %q, a name the contract check gives its own columns (%s, %s, %s, _weir_r<n>, _weir_t<n>): rename it in the SQL", name, reasonColumn, runColumn, rowColumn)
		}
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

// typing is the first step of a check: the typed columns and, for each,
// the flag column that marks a value that does not cast.
type typing struct {
	cols  []dagfile.Column  // the contract's columns with a type, in its order
	flags map[string]string // column → its flag column
}

func newTyping(c *dagfile.Contract, types map[string]string) *typing {
	ty := &typing{flags: map[string]string{}}
	for _, col := range c.Columns {
		if types[col.Name] != "" {
			ty.flags[col.Name] = fmt.Sprintf("_weir_t%d", len(ty.cols))
			ty.cols = append(ty.cols, col)
		}
	}
	return ty
}

// typedSQL selects _weir_out with the typed columns cast, the row's place
// and the flags.
func (ty *typing) typedSQL() string {
	var repl, flags []string
	for _, col := range ty.cols {
		id := duck.Ident(col.Name)
		cast := fmt.Sprintf("TRY_CAST(%s AS %s)", id, col.Type)
		repl = append(repl, cast+" AS "+id)
		flags = append(flags, fmt.Sprintf("(%s IS NOT NULL AND %s IS NULL) AS %s", id, cast, ty.flags[col.Name]))
	}
	star := "*"
	if len(repl) > 0 {
		star = "* REPLACE (" + strings.Join(repl, ", ") + ")"
	}
	return fmt.Sprintf("SELECT %s, rowid AS %s FROM %s", strings.Join(append([]string{star}, flags...), ", "), rowColumn, outTable)
}

// skip is true on a row where one of cols did not cast: the rules on
// those columns are not evaluated there. With no columns given, any typed
// column counts (an sql: rule may read any of them).
func (ty *typing) skip(cols ...string) string {
	var fs []string
	if cols == nil {
		for _, col := range ty.cols {
			fs = append(fs, ty.flags[col.Name])
		}
	}
	for _, col := range cols {
		if f := ty.flags[col]; f != "" {
			fs = append(fs, f)
		}
	}
	if len(fs) == 0 {
		return "false"
	}
	return "(" + strings.Join(fs, " OR ") + ")"
}

// when renders one check: the label when cond holds on a row where none
// of the columns the check reads failed its type.
func (ty *typing) when(cond, label string, cols ...string) check {
	if s := ty.skip(cols...); s != "false" {
		cond = "NOT " + s + " AND " + cond
	}
	return check{fmt.Sprintf("CASE WHEN %s THEN %s END", cond, duck.Literal(label)), label}
}

// columnChecks checks the contract's columns: type and required.
func (ty *typing) columnChecks(c *dagfile.Contract) []check {
	var out []check
	for _, col := range c.Columns {
		id := duck.Ident(col.Name)
		if f := ty.flags[col.Name]; f != "" {
			out = append(out, check{fmt.Sprintf("CASE WHEN %s THEN %s END", f, duck.Literal(fmt.Sprintf("type(%s): not %s", col.Name, col.Type))),
				"type(" + col.Name + ")"})
		}
		if col.Required {
			out = append(out, ty.when(id+" IS NULL", "required("+col.Name+")", col.Name))
		}
	}
	return out
}

// ruleChecks renders one rule's checks (an unnamed not_null: one per column).
func (ty *typing) ruleChecks(r dagfile.ContractRule) []check {
	label := func(def string) string {
		if r.Name != "" {
			return r.Name
		}
		return def
	}
	v := duck.Ident(r.Column)
	switch r.Kind {
	case dagfile.RuleNotNull:
		if r.Name != "" {
			var nulls []string
			for _, col := range r.Columns {
				nulls = append(nulls, duck.Ident(col)+" IS NULL")
			}
			return []check{ty.when("("+strings.Join(nulls, " OR ")+")", r.Name, r.Columns...)}
		}
		var out []check
		for _, col := range r.Columns {
			out = append(out, ty.when(duck.Ident(col)+" IS NULL", "not_null("+col+")", col))
		}
		return out
	case dagfile.RuleUnique:
		return []check{ty.unique(r, label("unique("+strings.Join(r.Columns, ", ")+")"))}
	case dagfile.RuleAcceptedValues:
		// The values are literals, which DuckDB casts to the column's type:
		// a number column compares numbers (1.0 is in [1, 2]).
		return []check{ty.when(fmt.Sprintf("%s IS NOT NULL AND %s NOT IN (%s)", v, v, literalList(r.Values)), label("accepted_values("+r.Column+")"), r.Column)}
	case dagfile.RuleRange:
		return []check{ty.when(rangeCond(v, r.Min, r.Max), label("range("+r.Column+")"), r.Column)}
	case dagfile.RuleRegex:
		return []check{ty.when(fmt.Sprintf("%s IS NOT NULL AND NOT regexp_matches(CAST(%s AS VARCHAR), %s)", v, v, duck.Literal(r.Pattern)), label("regex("+r.Column+")"), r.Column)}
	}
	l := label("sql(" + r.SQL + ")")
	return []check{ty.when(fmt.Sprintf("NOT coalesce((%s), false)", r.SQL), l)}
}

// unique marks every row of a key that more than one row has. A key with
// a NULL is distinct from every other (as in SQL) unless the rule says
// nulls_distinct: false; a key that did not cast takes no part.
func (ty *typing) unique(r dagfile.ContractRule, label string) check {
	part := identList(r.Columns)
	if !r.NullsEqual {
		var notNull []string
		for _, col := range r.Columns {
			notNull = append(notNull, duck.Ident(col)+" IS NOT NULL")
		}
		return ty.when(fmt.Sprintf("%s AND count(*) OVER (PARTITION BY %s) > 1", strings.Join(notNull, " AND "), part), label, r.Columns...)
	}
	return ty.when(fmt.Sprintf("sum(CASE WHEN %s THEN 0 ELSE 1 END) OVER (PARTITION BY %s) > 1", ty.skip(r.Columns...), part), label, r.Columns...)
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

// lintTable holds one row of NULLs of a contract's column types while
// weir lint binds its rules: table columns, not constants, so that DuckDB
// folds the rules' literals (an accepted value of the wrong type) instead
// of the whole check.
const lintTable = "_weir_lint"

// bindSQL renders the statements that evaluate rule r's checks as
// contractSQL renders them, over one row of NULLs of the contract's column
// types (an untyped NULL for a column without one): weir lint runs them to
// find rules DuckDB cannot parse or bind.
func bindSQL(c *dagfile.Contract, r dagfile.ContractRule) []string {
	types := map[string]string{}
	typed, cols := []string{"NULL AS _weir_none"}, []string{"t.*"}
	for _, col := range c.Columns {
		types[col.Name] = col.Type
		if col.Type != "" {
			typed = append(typed, "NULL::"+col.Type+" AS "+duck.Ident(col.Name))
		} else {
			cols = append(cols, "NULL AS "+duck.Ident(col.Name))
		}
	}
	ty := newTyping(c, types)
	for _, col := range ty.cols {
		cols = append(cols, "false AS "+ty.flags[col.Name])
	}
	var exprs []string
	for _, ch := range ty.ruleChecks(r) {
		exprs = append(exprs, ch.expr)
	}
	return []string{
		fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT %s", lintTable, strings.Join(typed, ", ")),
		fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s t)", strings.Join(exprs, ", "), strings.Join(cols, ", "), lintTable),
	}
}
