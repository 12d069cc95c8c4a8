package runner

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
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
	stageTable   = "_weir_a"   // a post-phase check: the typed output judged by the pre rules
	preColumn    = "_weir_p"   // in _weir_a: the pre rules' reasons
)

// checkColumn matches the names of the check's own columns, which an
// output column must not take (it would be read as the check's, or make
// the quarantine table's schema invalid).
var checkColumn = regexp.MustCompile(`^(` + reasonColumn + `|` + runColumn + `|` + rowColumn + `|` + stageTable + `|` + preColumn + `|_weir_[rtu][0-9]+)$`)

// checked is the outcome of a contract check.
type checked struct {
	total, bad int64
	goodSQL    string // the rows for the sink
	badSQL     string // the rows for the quarantine table
	contract   *dagfile.Contract
}

// checkContract materializes the SQL's result, marks the rows that break
// the contract, and fails when their share is above max_bad_ratio.
func (run *modelRun) checkContract(ctx context.Context, c *dagfile.Contract, text string) (*checked, error) {
	if pre := c.Pre(); len(pre) > 0 {
		var err error
		if text, err = compileChain(text, pre, false, contractTypes(c), dbCols(ctx, run.db)); err != nil {
			return nil, routes.BadInput("contract of %s: %v", run.t.Name, err)
		}
	}
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
	var plan contractPlan
	if hasPost(c) {
		plan, err = postPlan(ctx, run.db, c, cols, run.rep.RunID, run.sinkKey())
		if err != nil {
			return nil, routes.BadInput("contract of %s: %v", run.t.Name, err)
		}
	} else if plan, err = contractSQLAsIs(c, cols, run.rep.RunID, run.sinkKey(), asIsColumns(ctx, run.db, c, outTable)); err != nil {
		return nil, fmt.Errorf("contract of %s: %w", run.t.Name, err)
	}
	if err := run.db.Exec(ctx, plan.checkSQL); err != nil {
		return nil, routes.BadInput("contract of %s: %s%v", run.t.Name, ruleBlame(c, cols, err), err)
	}
	if m := c.Materialization; m != nil && m.SCD2 != nil {
		plan.goodSQL = scd2SQL(c, plan.goodWhere)
	}
	chk := &checked{goodSQL: plan.goodSQL, badSQL: plan.badSQL, contract: c}
	if err := run.countBad(ctx, chk); err != nil {
		return nil, err
	}
	if run.t.Contract != nil { // not the key check of an upsert without one
		if err := noteContract(ctx, run.db, c, plan, "", run.rep, chk.total, chk.bad); err != nil {
			return nil, err
		}
		if err := run.judgeDataset(ctx, c, plan); err != nil {
			return nil, err
		}
	}
	return chk, run.checkRatio(ctx, c, chk)
}

// contractTypes maps the contract's columns to their types.
func contractTypes(c *dagfile.Contract) map[string]string {
	out := map[string]string{}
	for _, col := range c.Columns {
		out[col.Name] = col.Type
	}
	return out
}

// judgeDataset judges the dataset rules over the good rows: a failure is
// reported (contract.dataset_rules, passed false) and warned about; it
// fails the run, before anything is written, only with
// fail_pipeline_on_dataset_error and severity error. No row is quarantined.
func (run *modelRun) judgeDataset(ctx context.Context, c *dagfile.Contract, plan contractPlan) error {
	if len(c.DatasetRules) == 0 {
		return nil
	}
	outs, err := datasetRules(ctx, run.db, c, plan.datasetSQL)
	if err != nil {
		return routes.BadInput("contract of %s: %v", run.t.Name, err)
	}
	res := run.rep.Contract
	var failed []string
	for _, o := range outs {
		res.DatasetRules = append(res.DatasetRules, o)
		if !o.Passed {
			run.r.warnf("task %s: dataset rule %s failed (%s, value %s)", run.t.Name, o.Name, o.Severity, o.Value)
			if o.Severity == "error" {
				res.Passed = false
				failed = append(failed, fmt.Sprintf("%s (value %s)", o.Name, o.Value))
			}
		}
	}
	if len(failed) > 0 && c.FailOnDatasetError {
		return fmt.Errorf("contract of %s: dataset rules failed: %s (fail_pipeline_on_dataset_error); nothing was committed", run.t.Name, strings.Join(failed, ", "))
	}
	return nil
}

func (run *modelRun) countBad(ctx context.Context, chk *checked) error {
	// A post transformation may make several rows of one output row (or
	// none): rows are counted as the output had them.
	q := fmt.Sprintf("SELECT (SELECT count(*) FROM %s), count(DISTINCT %s) FROM %s WHERE %s IS NOT NULL", outTable, rowColumn, checkedTable, reasonColumn)
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
	checkSQL   string   // CREATE TEMP TABLE _weir_checked: the typed output and its reasons
	goodSQL    string   // the good rows, typed (the last of each key in the output's order, for an upsert)
	datasetSQL string   // the good rows, before an upsert keeps the last of each key (dataset rules judge them)
	goodWhere  string   // the condition of a good row of _weir_checked
	badSQL     string   // the bad rows as the output had them, with their reasons
	rules      []string // the rule of each _weir_r<i> column (type(col), required(col), a rule's label)
}

// check is one check of a contract: a CASE expression that is its label
// when the row breaks it, and the rule it counts under in the report's
// contract.rules.
type check struct{ expr, rule string }

// contractSQL renders the check of contract c over an output with columns
// cols; runID fills _weir_run. With a key, the good rows are the last of
// each key in the output's order (an upsert batch must not repeat a key).
// A contract with post transformations or post rules (OLC) is planned by
// postPlan instead, which needs the engine.
func contractSQL(c *dagfile.Contract, cols []string, runID string, key []string) (contractPlan, error) {
	return contractSQLAsIs(c, cols, runID, key, nil)
}

// contractSQLAsIs is contractSQL for an output whose columns in asIs
// already have their contract type: they are not cast (a cast to the
// type a value has is the value, and never fails).
func contractSQLAsIs(c *dagfile.Contract, cols []string, runID string, key []string, asIs map[string]bool) (contractPlan, error) {
	if hasPost(c) {
		return contractPlan{}, fmt.Errorf("the contract has post transformations or rules, which only a model task runs")
	}
	types, err := columnTypes(c, cols, false)
	if err != nil {
		return contractPlan{}, err
	}
	for name := range asIs {
		if _, ok := types[name]; ok {
			types[name] = ""
		}
	}
	ty := newTyping(c, types, "_weir_t")
	checks := ty.columnChecks(c, cols)
	for _, r := range c.Rules {
		checks = append(checks, ty.ruleChecks(r)...)
	}
	plan := contractPlan{}
	sel, reasons := checkSelect(checks, 0, &plan)
	plan.checkSQL = fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, %s AS %s FROM (SELECT %s FROM (%s))",
		checkedTable, reasonOf(reasons), reasonColumn, strings.Join(sel, ", "), ty.typedSQL())
	plan.setGood(outputCols(c, cols), key, false)
	raw := make([]string, len(cols))
	for i, col := range cols {
		raw[i] = "o." + duck.Ident(col)
	}
	plan.badSQL = fmt.Sprintf("SELECT %s, k.%s, %s AS %s FROM %s k JOIN %s o ON o.rowid = k.%s WHERE k.%s IS NOT NULL ORDER BY k.%s",
		strings.Join(raw, ", "), reasonColumn, duck.Literal(runID), runColumn, checkedTable, outTable, rowColumn, reasonColumn, rowColumn)
	return plan, nil
}

// asIsColumns are the contract's typed columns that table already holds
// in exactly their contract type (DuckDB's name of the declared type is
// the column's). Casting those is the identity, yet strictCast's guards
// render each value as text and match it against a pattern: on a 2M-row
// batch of four such columns, most of the check's CPU. A type DuckDB
// cannot name here is left to the cast (and its error) as before.
func asIsColumns(ctx context.Context, db *duck.DB, c *dagfile.Contract, table string) map[string]bool {
	out := map[string]bool{}
	for _, col := range c.Columns {
		if col.Type == "" {
			continue
		}
		var same bool
		q := fmt.Sprintf("SELECT coalesce((SELECT type FROM pragma_table_info(%s) WHERE name = %s) = typeof(CAST(NULL AS %s)), false)",
			duck.Literal(table), duck.Literal(col.Name), col.Type)
		if err := db.QueryRow(ctx, q, &same); err == nil && same {
			out[col.Name] = true
		}
	}
	return out
}

// hasPost: the contract has a post phase (OLC post transformations or
// rules, judged after the good/bad split).
func hasPost(c *dagfile.Contract) bool {
	if len(c.Post()) > 0 {
		return true
	}
	for _, r := range c.Rules {
		if r.Post {
			return true
		}
	}
	return false
}

// checkSelect names the checks _weir_r<first+i> and records their rules.
func checkSelect(checks []check, first int, plan *contractPlan) (sel, names []string) {
	sel = []string{"*"}
	for i, ch := range checks {
		name := fmt.Sprintf("_weir_r%d", first+i)
		sel = append(sel, ch.expr+" AS "+name)
		names = append(names, name)
		plan.rules = append(plan.rules, ch.rule)
	}
	return sel, names
}

// reasonOf joins the labels of the check columns: NULL for a good row.
func reasonOf(cols []string) string {
	if len(cols) == 0 {
		return "NULL::VARCHAR"
	}
	return "NULLIF(concat_ws('; ', " + strings.Join(cols, ", ") + "), '')"
}

// outputCols are the sink's columns: an OLC contract's model fields, in
// its order (the declared shape); else the output's columns.
func outputCols(c *dagfile.Contract, cols []string) []string {
	if c.Format != dagfile.FormatOLC || len(c.Columns) == 0 {
		return cols
	}
	var out []string
	for _, col := range c.Columns {
		if !slices.Contains(generated(c), col.Name) {
			out = append(out, col.Name)
		}
	}
	return out
}

// generated are the columns an scd2 materialization writes (none else).
func generated(c *dagfile.Contract) []string {
	if m := c.Materialization; m != nil && m.SCD2 != nil {
		return m.SCD2.Generated()
	}
	return nil
}

// setGood renders the good rows: every row of a source row none of whose
// rows is bad (a post transformation may make several of one); with a
// key, the last of each key. datasetSQL is the same rows before that.
func (p *contractPlan) setGood(cols, key []string, post bool) {
	p.goodWhere = reasonColumn + " IS NULL"
	if post {
		p.goodWhere += fmt.Sprintf(" AND %s NOT IN (SELECT %s FROM %s WHERE %s IS NOT NULL)", rowColumn, rowColumn, checkedTable, reasonColumn)
	}
	p.datasetSQL = fmt.Sprintf("SELECT %s FROM %s WHERE %s", identList(cols), checkedTable, p.goodWhere)
	p.goodSQL = p.datasetSQL
	if len(key) > 0 {
		p.goodSQL += fmt.Sprintf(" QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s DESC) = 1", identList(key), rowColumn)
	}
}

// postPlan checks a contract with a post phase, in OLC's order: the
// output (after the pre transformations) is typed and judged by the pre
// rules into _weir_a (_weir_p: the pre reasons); the post transformations
// run over the rows that passed; their result is typed again to the
// contract's types and judged by the post rules. A bad row of either
// phase is quarantined once, as the output had it, with every reason.
func postPlan(ctx context.Context, db *duck.DB, c *dagfile.Contract, cols []string, runID string, key []string) (contractPlan, error) {
	types, err := columnTypes(c, cols, true)
	if err != nil {
		return contractPlan{}, err
	}
	plan := contractPlan{}
	ty := newTyping(c, types, "_weir_t")
	var pre, post []dagfile.ContractRule
	for _, r := range c.Rules {
		if r.Post {
			post = append(post, r)
		} else {
			pre = append(pre, r)
		}
	}
	checks := ty.columnChecks(c, cols)
	for _, r := range pre {
		checks = append(checks, ty.ruleChecks(r)...)
	}
	sel, names := checkSelect(checks, 0, &plan)
	stage := fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, %s AS %s FROM (SELECT %s FROM (%s))",
		stageTable, reasonOf(names), preColumn, strings.Join(sel, ", "), ty.typedSQL())
	if err := db.Exec(ctx, stage); err != nil {
		return contractPlan{}, err
	}
	allTypes := map[string]string{}
	for _, col := range c.Columns {
		allTypes[col.Name] = col.Type
	}
	q, err := compileChain(fmt.Sprintf("SELECT * FROM %s WHERE %s IS NULL", stageTable, preColumn), c.Post(), true, allTypes, dbCols(ctx, db))
	if err != nil {
		return contractPlan{}, err
	}
	after, err := dbCols(ctx, db)(q)
	if err != nil {
		return contractPlan{}, err
	}
	// The post phase's typing: the contract's columns as the post
	// transformations left them (a cast is reconciled with the declared type).
	types2 := map[string]string{}
	for _, col := range c.Columns {
		if !slices.Contains(after, col.Name) {
			return contractPlan{}, routes.BadInput("the output has no column %q after the post transformations (it has %s)", col.Name, strings.Join(userCols(after), ", "))
		}
		types2[col.Name] = col.Type
	}
	ty2 := newTyping(c, types2, "_weir_u")
	union := fmt.Sprintf("%s UNION ALL BY NAME SELECT COLUMNS('^_weir_') FROM %s WHERE %s IS NOT NULL", q, stageTable, preColumn)
	var checks2 []check
	for _, col := range c.Columns {
		if f := ty2.flags[col.Name]; f != "" {
			checks2 = append(checks2, check{fmt.Sprintf("CASE WHEN %s THEN %s END", f, duck.Literal(fmt.Sprintf("type(%s): not %s", col.Name, col.Type))), "type(" + col.Name + ")"})
		}
		if col.Required && !slices.Contains(cols, col.Name) { // made by a post transformation
			checks2 = append(checks2, ty2.when(duck.Ident(col.Name)+" IS NULL", "required("+col.Name+")", col.Name))
		}
	}
	for _, r := range post {
		checks2 = append(checks2, ty2.ruleChecks(r)...)
	}
	for i := range checks2 { // bad rows of the pre phase are judged there only
		checks2[i].expr = fmt.Sprintf("CASE WHEN %s IS NULL THEN %s END", preColumn, checks2[i].expr)
	}
	sel2, names2 := checkSelect(checks2, len(checks), &plan)
	plan.checkSQL = fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, %s AS %s FROM (SELECT %s FROM (%s))",
		checkedTable, reasonOf(append([]string{preColumn}, names2...)), reasonColumn, strings.Join(sel2, ", "), ty2.typedFrom("("+union+")", false))
	plan.setGood(outputCols(c, userCols(after)), key, true)
	raw := make([]string, len(cols))
	for i, col := range cols {
		raw[i] = "o." + duck.Ident(col)
	}
	plan.badSQL = fmt.Sprintf("SELECT %s, k.%s, %s AS %s FROM (SELECT %s, string_agg(DISTINCT %s, '; ' ORDER BY %s) AS %s FROM %s WHERE %s IS NOT NULL GROUP BY 1) k JOIN %s o ON o.rowid = k.%s ORDER BY k.%s",
		strings.Join(raw, ", "), reasonColumn, duck.Literal(runID), runColumn, rowColumn, reasonColumn, reasonColumn, reasonColumn, checkedTable, reasonColumn, outTable, rowColumn, rowColumn)
	return plan, nil
}

// userCols drops weir's own _weir_ columns.
func userCols(cols []string) []string {
	var out []string
	for _, c := range cols {
		if !strings.HasPrefix(c, "_weir_") {
			out = append(out, c)
		}
	}
	return out
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
		counts[i] = fmt.Sprintf("count(DISTINCT %s) FILTER (WHERE _weir_r%d IS NOT NULL)", rowColumn, i)
		dest[i] = &ns[i]
	}
	// Only a bad row breaks a rule: the counts read those rows alone, not
	// the whole batch (a count(DISTINCT) per rule over every row cost a
	// fifth of a 2M-row silver model's CPU).
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NOT NULL", strings.Join(counts, ", "), checkedTable, reasonColumn)
	if where != "" {
		q += " AND (" + where + ")"
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
// With post, a column the output lacks is left to the post
// transformations to make (postPlan checks they did).
func columnTypes(c *dagfile.Contract, cols []string, post bool) (map[string]string, error) {
	have := map[string]bool{}
	for _, name := range cols {
		if checkColumn.MatchString(name) {
			return nil, routes.BadInput("the output has a column named %q, a name the contract check gives its own columns (%s, %s, %s, _weir_r<n>, _weir_t<n>): rename it in the SQL", name, reasonColumn, runColumn, rowColumn)
		}
		have[name] = true
	}
	types := map[string]string{}
	for _, col := range c.Columns {
		if !have[col.Name] && (post || slices.Contains(generated(c), col.Name)) {
			continue
		}
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

func newTyping(c *dagfile.Contract, types map[string]string, prefix string) *typing {
	ty := &typing{flags: map[string]string{}}
	for _, col := range c.Columns {
		if types[col.Name] != "" {
			ty.flags[col.Name] = fmt.Sprintf("%s%d", prefix, len(ty.cols))
			ty.cols = append(ty.cols, col)
		}
	}
	return ty
}

// typedSQL selects _weir_out with the typed columns cast, the row's place
// and the flags.
func (ty *typing) typedSQL() string { return ty.typedFrom(outTable, true) }

// typedFrom selects from with the typed columns cast and the flags (and
// the row's place, when from is _weir_out).
func (ty *typing) typedFrom(from string, place bool) string {
	var repl, flags []string
	for _, col := range ty.cols {
		id := duck.Ident(col.Name)
		cast := strictCast(id, col.Type)
		repl = append(repl, cast+" AS "+id)
		flags = append(flags, fmt.Sprintf("(%s IS NOT NULL AND %s IS NULL) AS %s", id, cast, ty.flags[col.Name]))
	}
	star := "*"
	if len(repl) > 0 {
		star = "* REPLACE (" + strings.Join(repl, ", ") + ")"
	}
	sel := append([]string{star}, flags...)
	if place {
		sel = append(sel, "rowid AS "+rowColumn)
	}
	return fmt.Sprintf("SELECT %s FROM %s", strings.Join(sel, ", "), from)
}

// The type names strictCast guards.
var (
	integerType   = regexp.MustCompile(`(?i)^\s*(u?(tiny|small|big|huge)?int(eger)?|int[1248]|int(16|32|64|128)|long|short|signed)\s*$`)
	timestampType = regexp.MustCompile(`(?i)^\s*(timestamp(_s|_ms|_ns)?|datetime)\s*$`)
	dateType      = regexp.MustCompile(`(?i)^\s*date\s*$`)
	decimalType   = regexp.MustCompile(`(?i)^\s*(decimal|numeric)\s*(\(\s*\d+\s*(,\s*(\d+)\s*)?\))?\s*$`)
)

// strictCast is TRY_CAST(id AS typ), NULL (does not cast) where DuckDB's
// cast would change the value without a word: a number with a fraction
// into an integer type (DuckDB rounds 7.5 to 8), a digit past a decimal
// type's scale (1.005 into DECIMAL(10,2)), a time of day into DATE, and a timestamp text
// with a UTC offset into TIMESTAMP (DuckDB drops the offset: 10:00+02:00
// became 10:00; it is 08:00 UTC).
func strictCast(id, typ string) string {
	cast := fmt.Sprintf("TRY_CAST(%s AS %s)", id, typ)
	switch {
	case integerType.MatchString(typ):
		// A fraction digit in the value's text, as for a decimal of scale
		// 0: a double drops the .5 of 12345678901234567.5, which DuckDB
		// rounds up; an exponent form is checked through DOUBLE.
		d := fmt.Sprintf("TRY_CAST(%s AS DOUBLE)", id)
		v := fmt.Sprintf("CAST(%s AS VARCHAR)", id)
		frac := fmt.Sprintf(`(NOT regexp_matches(%s, '[eE]') AND regexp_matches(%s, '^\s*[+-]?\d*\.\d*[1-9]'))`, v, v)
		return fmt.Sprintf("CASE WHEN %s OR %s <> floor(%s) THEN NULL ELSE %s END", frac, d, d, cast)
	case decimalType.MatchString(typ):
		// DuckDB rounds 1.005 into DECIMAL(10,2) as 1.01 (or 1.00 from a
		// double): a digit past the scale does not cast. Plain DECIMAL is
		// DuckDB's DECIMAL(18,3); an exponent form is checked through DOUBLE.
		scale := decimalType.FindStringSubmatch(typ)[4]
		switch {
		case scale == "" && !strings.Contains(typ, "("):
			scale = "3"
		case scale == "":
			scale = "0"
		}
		v := fmt.Sprintf("CAST(%s AS VARCHAR)", id)
		lost := fmt.Sprintf(`regexp_matches(%s, '^\s*[+-]?\d*\.\d{%s}0*[1-9]') OR (regexp_matches(%s, '[eE]') AND TRY_CAST(%s AS DOUBLE) <> TRY_CAST(%s AS DOUBLE))`, v, scale, v, cast, id)
		return fmt.Sprintf("CASE WHEN %s THEN NULL ELSE %s END", lost, cast)
	case dateType.MatchString(typ):
		// DuckDB drops the time of day of a timestamp (or its text).
		ts := fmt.Sprintf("TRY_CAST(%s AS TIMESTAMP)", id)
		return fmt.Sprintf("CASE WHEN %s <> CAST(%s AS TIMESTAMP) THEN NULL ELSE %s END", ts, cast, cast)
	case timestampType.MatchString(typ):
		return fmt.Sprintf(`CASE WHEN regexp_matches(CAST(%s AS VARCHAR), '[T ]\d\d:\d\d(:\d\d(\.\d+)?)?\s*(Z|[+-]\d\d(:?\d\d)?)$') THEN TRY_CAST(timezone('UTC', TRY_CAST(%s AS TIMESTAMPTZ)) AS %s) ELSE %s END`, id, id, typ, cast)
	}
	return cast
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
// Columns the output does not have (made by post transformations) are
// checked after them.
func (ty *typing) columnChecks(c *dagfile.Contract, have []string) []check {
	var out []check
	for _, col := range c.Columns {
		if !slices.Contains(have, col.Name) {
			continue
		}
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
	if r.Column != "" { // an sql rule of one column (OLC shorthands): skipped only where that column did not cast
		return []check{ty.when(fmt.Sprintf("NOT coalesce((%s), false)", r.SQL), l, r.Column)}
	}
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

var missingColumn = regexp.MustCompile(`Referenced column "([^"]+)" not found`)

// ruleBlame names the sql rules that read the column a DuckDB binder
// error says the rows lack, where they are written, and the columns the
// rows have ("" when the error is another one): DuckDB's own message
// quotes weir's generated check SQL, not the contract.
func ruleBlame(c *dagfile.Contract, cols []string, err error) string {
	m := missingColumn.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	file := c.File
	if file == "" {
		file = "the dagfile"
	}
	var rules []string
	for _, r := range c.Rules {
		if r.SQL != "" && strings.Contains(r.SQL, m[1]) {
			rules = append(rules, fmt.Sprintf("rule %s (%s:%d)", ruleLabel(r), file, r.Line))
		}
	}
	if len(rules) == 0 {
		return ""
	}
	return fmt.Sprintf("%s reads column %q, which the rows to check do not have (they have %s): fix the rule or the SQL: ",
		strings.Join(rules, ", "), m[1], strings.Join(userCols(cols), ", "))
}

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
	ty := newTyping(c, types, "_weir_t")
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
