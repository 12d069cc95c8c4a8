package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
)

// OLC transformations (dagfile.Transform) compile to DuckDB SQL, one
// nested SELECT per op over the relation before it (named source). Pre
// transformations wrap the model's SQL, before the contract check; post
// ones run over the rows that passed the pre rules (contractSQL), and
// keep weir's own _weir_ columns through. docs/contracts.md says what
// each op renders to.

// colsOf returns the columns of a query (DuckDB binds it, runs nothing).
type colsOf func(q string) ([]string, error)

func dbCols(ctx context.Context, db *duck.DB) colsOf {
	return func(q string) ([]string, error) {
		s, err := db.Schema(ctx, q)
		if err != nil {
			return nil, err
		}
		out := make([]string, s.NumFields())
		for i, f := range s.Fields() {
			out[i] = f.Name
		}
		return out, nil
	}
}

// compileChain renders ts over the query from; post keeps the _weir_
// columns a select would drop. types are the contract's column types
// (split renders a list as JSON text for a VARCHAR field).
func compileChain(from string, ts []dagfile.Transform, post bool, types map[string]string, cols colsOf) (string, error) {
	q := from
	for _, t := range ts {
		have, err := cols(q)
		if err != nil {
			return "", opErr(t, err)
		}
		if q, err = compileOp(q, have, t, post, types); err != nil {
			return "", opErr(t, err)
		}
	}
	if _, err := cols(q); err != nil && len(ts) > 0 {
		return "", opErr(ts[len(ts)-1], err)
	}
	return q, nil
}

func opErr(t dagfile.Transform, err error) error {
	return fmt.Errorf("transformation %s (line %d): %w", t.Op, t.Line, err)
}

// compileOp renders one op over the query q, whose columns are cols.
func compileOp(q string, cols []string, t dagfile.Transform, post bool, types map[string]string) (string, error) {
	src := "(" + q + ") AS source"
	id := duck.Ident
	set := func(name, expr string) string {
		if slices.Contains(cols, name) {
			return fmt.Sprintf("SELECT * REPLACE (%s AS %s) FROM %s", expr, id(name), src)
		}
		return fmt.Sprintf("SELECT *, %s AS %s FROM %s", expr, id(name), src)
	}
	out := func() string { return cmpOr(t.Output, t.Field) }
	def := func(l *dagfile.Literal) string {
		if l == nil {
			return ""
		}
		return l.SQL()
	}
	switch t.Op {
	case "select":
		list := identList(t.Columns)
		if post {
			list += ", COLUMNS('^_weir_')"
		}
		return fmt.Sprintf("SELECT %s FROM %s", list, src), nil
	case "drop":
		return fmt.Sprintf("SELECT * EXCLUDE (%s) FROM %s", identList(t.Columns), src), nil
	case "rename":
		var from, to []string
		for _, p := range t.Pairs {
			from = append(from, id(p[0]))
			to = append(to, id(p[0])+" AS "+id(p[1]))
		}
		return fmt.Sprintf("SELECT * EXCLUDE (%s), %s FROM %s", strings.Join(from, ", "), strings.Join(to, ", "), src), nil
	case "cast":
		var repl []string
		for _, p := range t.Pairs {
			repl = append(repl, fmt.Sprintf("CAST(%s AS %s) AS %s", id(p[0]), p[1], id(p[0])))
		}
		return fmt.Sprintf("SELECT * REPLACE (%s) FROM %s", strings.Join(repl, ", "), src), nil
	case "trim", "lower", "upper":
		fn := map[string]string{"trim": map[string]string{"both": "trim", "left": "ltrim", "right": "rtrim"}[t.Side], "lower": "lower", "upper": "upper"}[t.Op]
		var repl []string
		for _, c := range t.Columns {
			repl = append(repl, fmt.Sprintf("%s(%s) AS %s", fn, id(c), id(c)))
		}
		return fmt.Sprintf("SELECT * REPLACE (%s) FROM %s", strings.Join(repl, ", "), src), nil
	case "coalesce":
		args := identList(t.Columns)
		if t.Default != nil {
			args += ", " + def(t.Default)
		}
		return set(out(), "COALESCE("+args+")"), nil
	case "split":
		expr := fmt.Sprintf("string_split(CAST(%s AS VARCHAR), %s)", id(t.Field), duck.Literal(t.Delimiter))
		if types[out()] == "VARCHAR" { // the list as JSON text, as OLC's engines write it
			expr = "CAST(to_json(" + expr + ") AS VARCHAR)"
		}
		return set(out(), expr), nil
	case "explode":
		if out() == t.Field {
			return fmt.Sprintf("SELECT * EXCLUDE (%s), unnest(%s) AS %s FROM %s", id(t.Field), id(t.Field), id(t.Field), src), nil
		}
		return set(out(), "unnest("+id(t.Field)+")"), nil
	case "map_values":
		var whens []string
		for _, p := range t.Pairs {
			whens = append(whens, fmt.Sprintf("WHEN %s THEN %s", duck.Literal(p[0]), p[1]))
		}
		els := id(t.Field) // unmapped values are kept, unless a default is given
		if t.Default != nil {
			els = def(t.Default)
		}
		return set(out(), fmt.Sprintf("CASE CAST(%s AS VARCHAR) %s ELSE %s END", id(t.Field), strings.Join(whens, " "), els)), nil
	case "bucket":
		return set(t.Field, bucketSQL(t)), nil
	case "date_diff":
		unit := map[string]string{"days": "day", "hours": "hour", "months": "month"}[t.Unit]
		return set(t.Field, fmt.Sprintf("date_diff('%s', %s, %s)", unit, asTime(t.Columns[0], types), asTime(t.Columns[1], types))), nil
	case "date_range_explode":
		return dateRangeExplode(t, types, set)
	case "json_extract":
		expr := fmt.Sprintf("json_extract_string(CAST(%s AS VARCHAR), %s)", id(t.Source), duck.Literal(t.Path))
		if t.Cast != "" {
			expr = fmt.Sprintf("CAST(%s AS %s)", expr, t.Cast)
		}
		return set(t.Field, expr), nil
	case "lookup":
		val := "d._weir_v"
		if t.Default != nil {
			val = "COALESCE(d._weir_v, " + def(t.Default) + ")"
		}
		star := "s.*"
		if slices.Contains(cols, t.Field) {
			star = fmt.Sprintf("s.* REPLACE (%s AS %s)", val, id(t.Field))
		} else {
			star += ", " + val + " AS " + id(t.Field)
		}
		// One value per key (the least, so a run is repeatable): a lookup
		// never multiplies rows.
		return fmt.Sprintf("SELECT %s FROM (%s) AS s LEFT JOIN (SELECT %s AS _weir_k, min(%s) AS _weir_v FROM %s GROUP BY 1) d ON s.%s = d._weir_k",
			star, q, id(t.Key), id(t.Value), id(t.Reference), id(t.On)), nil
	case "join":
		var sel []string
		for _, f := range t.Columns {
			v := "d." + id(f)
			if l, ok := t.Defaults[f]; ok {
				v = "COALESCE(" + v + ", " + l.SQL() + ")"
			}
			sel = append(sel, v+" AS "+id(t.Prefix+f))
		}
		return fmt.Sprintf("SELECT s.*, %s FROM (%s) AS s %s JOIN %s d ON s.%s = d.%s",
			strings.Join(sel, ", "), q, strings.ToUpper(t.JoinType), id(t.Reference), id(t.On), id(t.Key)), nil
	case "derive":
		return set(t.Field, "("+t.SQL+")"), nil
	case "filter":
		return fmt.Sprintf("SELECT * FROM %s WHERE coalesce((%s), false)", src, t.SQL), nil
	case "deduplicate":
		var order []string
		dir := " DESC"
		if !t.Desc {
			dir = " ASC"
		}
		for _, c := range t.SortBy {
			order = append(order, id(c)+dir+" NULLS LAST")
		}
		if post { // ties: the last row in the output's order
			order = append(order, rowColumn+" DESC")
		}
		by := ""
		if len(order) > 0 {
			by = " ORDER BY " + strings.Join(order, ", ")
		}
		return fmt.Sprintf("SELECT * FROM %s QUALIFY row_number() OVER (PARTITION BY %s%s) = 1", src, identList(t.Columns), by), nil
	case "sql":
		return fmt.Sprintf("WITH source AS (%s) %s", q, t.SQL), nil
	}
	return "", fmt.Errorf("op %s is not compiled", t.Op)
}

// asTime reads a column as a time: as is when the contract types it as a
// date or time, else cast from text, which may also be compact YYYYMMDD.
func asTime(col string, types map[string]string) string {
	id := duck.Ident(col)
	if t := strings.ToUpper(types[col]); strings.HasPrefix(t, "DATE") || strings.HasPrefix(t, "TIMESTAMP") {
		return id
	}
	return fmt.Sprintf("coalesce(TRY_CAST(%s AS TIMESTAMP), try_strptime(CAST(%s AS VARCHAR), '%%Y%%m%%d'))", id, id)
}

// dateRangeExplode renders one row per step from start_col to end_col
// (today when end_col is unset or NULL), both ends included; daily steps
// give dates.
func dateRangeExplode(t dagfile.Transform, types map[string]string, set func(name, expr string) string) (string, error) {
	iv, _ := intervalSQL(t.Interval)
	end := "current_date::TIMESTAMP"
	if t.Columns[1] != "" {
		end = "coalesce(" + asTime(t.Columns[1], types) + ", current_date::TIMESTAMP)"
	}
	series := fmt.Sprintf("generate_series(%s, %s, %s)", asTime(t.Columns[0], types), end, iv)
	if strings.HasSuffix(iv, "DAY") {
		series = "list_transform(" + series + ", lambda x: CAST(x AS DATE))"
	}
	return set(t.Output, "unnest("+series+")"), nil
}

// intervalSQL renders Nd / Nh.
func intervalSQL(s string) (string, bool) {
	var n int
	var u string
	if _, err := fmt.Sscanf(strings.TrimSpace(s), "%d%s", &n, &u); err != nil {
		return "", false
	}
	switch u {
	case "d":
		return fmt.Sprintf("INTERVAL %d DAY", n), true
	case "h":
		return fmt.Sprintf("INTERVAL %d HOUR", n), true
	}
	return "", false
}

// bucketSQL renders the bins as a CASE: the first bin whose bounds all
// hold gives the label.
func bucketSQL(t dagfile.Transform) string {
	v := duck.Ident(t.Source)
	var whens []string
	for _, b := range t.Bins {
		var conds []string
		for _, c := range []struct{ op, bound string }{{"<", b.LT}, {"<=", b.LTE}, {">", b.GT}, {">=", b.GTE}} {
			if c.bound != "" {
				conds = append(conds, v+" "+c.op+" "+c.bound)
			}
		}
		if b.EQ != nil {
			conds = append(conds, v+" = "+b.EQ.SQL())
		}
		if len(conds) == 0 {
			conds = []string{"true"}
		}
		whens = append(whens, fmt.Sprintf("WHEN %s THEN %s", strings.Join(conds, " AND "), duck.Literal(b.Label)))
	}
	els := "NULL"
	if t.Default != nil {
		els = t.Default.SQL()
	}
	return fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL %s ELSE %s END", v, strings.Join(whens, " "), els)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// DatasetOutcome is one dataset rule's result over a batch's good rows.
type DatasetOutcome struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`     // unique | null_ratio | row_count_between | sql
	Severity string `json:"severity"` // error | warning | info
	Passed   bool   `json:"passed"`
	Value    string `json:"value"` // unique: rows sharing a key; null_ratio: the ratio; row_count_between: the count; sql: the query's value
}

// datasetRules judges the contract's dataset rules over the rows of good
// (a query: the rows that passed, before an upsert keeps the last of each
// key).
func datasetRules(ctx context.Context, db *duck.DB, c *dagfile.Contract, good string) ([]DatasetOutcome, error) {
	var out []DatasetOutcome
	for _, r := range c.DatasetRules {
		q := datasetSQL(r, good)
		var v *string
		if err := db.QueryRow(ctx, q, &v); err != nil {
			return nil, fmt.Errorf("dataset rule %s: %w", r.Name, err)
		}
		o := DatasetOutcome{Name: r.Name, Kind: r.Kind, Severity: r.Severity}
		if v != nil {
			o.Value = *v
		}
		o.Passed = datasetPassed(r, v)
		out = append(out, o)
	}
	return out, nil
}

// datasetSQL renders a dataset rule's value as text.
func datasetSQL(r dagfile.DatasetRule, good string) string {
	src := "(" + good + ") AS source"
	switch r.Kind {
	case "unique": // rows whose key (all parts non-NULL: NULLs are distinct) another row has
		var nn []string
		for _, c := range r.Columns {
			nn = append(nn, duck.Ident(c)+" IS NOT NULL")
		}
		return fmt.Sprintf("SELECT CAST(coalesce(sum(n), 0) AS VARCHAR) FROM (SELECT count(*) AS n FROM %s WHERE %s GROUP BY %s HAVING count(*) > 1)",
			src, strings.Join(nn, " AND "), identList(r.Columns))
	case "null_ratio":
		return fmt.Sprintf("SELECT CAST(count(*) FILTER (WHERE %s IS NULL) / nullif(count(*), 0)::DOUBLE AS VARCHAR) FROM %s", duck.Ident(r.Columns[0]), src)
	case "row_count_between":
		return fmt.Sprintf("SELECT CAST(count(*) AS VARCHAR) FROM %s", src)
	}
	return fmt.Sprintf("WITH source AS (%s) SELECT CAST(_weir_v AS VARCHAR) FROM (%s) AS _weir_q(_weir_v) LIMIT 1", good, r.SQL)
}

// datasetPassed judges a dataset rule's value.
func datasetPassed(r dagfile.DatasetRule, v *string) bool {
	switch r.Kind {
	case "unique":
		return v != nil && *v == "0"
	case "null_ratio": // an empty batch has no ratio: it passes
		return v == nil || lessEq(*v, r.Max, false)
	}
	if v == nil {
		return false
	}
	if r.Kind == "sql" && r.Min == "" && r.Max == "" {
		return *v == "true"
	}
	return (r.Min == "" || lessEq(r.Min, *v, r.MinOpen)) && (r.Max == "" || lessEq(*v, r.Max, r.MaxOpen))
}

// lessEq compares two numbers written as text: a <= b (a < b when strict).
func lessEq(a, b string, strict bool) bool {
	var x, y float64
	if _, err := fmt.Sscan(a, &x); err != nil {
		return false
	}
	if _, err := fmt.Sscan(b, &y); err != nil {
		return false
	}
	if strict {
		return x < y
	}
	return x <= y
}

// scd2SQL renders the rows an scd2 materialization upserts (keyed by the
// business key and effective_from) for the good rows of _weir_checked
// (where): per business key, the batch's latest row (by timestamp_field,
// then the output's order) opens a new version when the key has no
// current version in this (the sink) or a tracked column changed: its
// effective_from is timestamp_field (effective_from_default for a key's
// first version, when given), effective_to effective_to_default (else
// NULL), current true, version the previous one + 1; the previous
// current version is written again closed: effective_to = the new
// version's timestamp_field, current false. An unchanged key writes
// nothing.
func scd2SQL(c *dagfile.Contract, where string) string {
	s := c.Materialization.SCD2
	types := contractTypes(c)
	id := duck.Ident
	as := func(expr, col string) string {
		if t := types[col]; t != "" {
			expr = fmt.Sprintf("CAST(%s AS %s)", expr, t)
		}
		return expr + " AS " + id(col)
	}
	var fields, all []string
	for _, col := range c.Columns {
		all = append(all, id(col.Name))
		if !slices.Contains(s.Generated(), col.Name) {
			fields = append(fields, col.Name)
		}
	}
	track := s.Track
	if len(track) == 0 {
		for _, f := range fields {
			if !slices.Contains(s.BusinessKey, f) && f != s.Timestamp {
				track = append(track, f)
			}
		}
	}
	var on, changed, gFields, cFields []string
	for _, k := range s.BusinessKey {
		on = append(on, fmt.Sprintf("a.%s = b.%s", id(k), id(k)))
	}
	for _, t := range track {
		changed = append(changed, fmt.Sprintf("g.%s IS DISTINCT FROM c.%s", id(t), id(t)))
	}
	if len(changed) == 0 {
		changed = []string{"false"}
	}
	for _, f := range fields {
		gFields = append(gFields, "g."+id(f))
		cFields = append(cFields, "c."+id(f))
	}
	lit := func(v string) string {
		if v == "" {
			return "NULL"
		}
		return duck.Literal(v)
	}
	ts := id(s.Timestamp)
	from := "g." + ts
	if s.FromDefault != "" {
		from = fmt.Sprintf("CASE WHEN g._weir_has IS NULL THEN %s ELSE g.%s END", lit(s.FromDefault), ts)
	}
	open := []string{strings.Join(gFields, ", "), as(from, s.From), as(lit(s.ToDefault), s.To), as("true", s.Current)}
	closed := []string{strings.Join(cFields, ", "), "c." + id(s.From), as("g."+ts, s.To), as("false", s.Current)}
	oldV := ""
	if s.Version != "" {
		oldV = ", c." + id(s.Version) + " AS _weir_oldv"
		open = append(open, as("coalesce(g._weir_oldv, 0) + 1", s.Version))
		closed = append(closed, "c."+id(s.Version))
	}
	onGC := strings.NewReplacer("a.", "g.", "b.", "c.").Replace(strings.Join(on, " AND "))
	return fmt.Sprintf(`WITH _weir_g AS (SELECT * FROM %[1]s WHERE %[2]s QUALIFY row_number() OVER (PARTITION BY %[3]s ORDER BY %[4]s DESC NULLS LAST, %[5]s DESC) = 1),
_weir_c AS (SELECT *, true AS _weir_has FROM %[6]s WHERE coalesce(%[7]s, false)),
_weir_ch AS (SELECT g.*, c._weir_has%[8]s FROM _weir_g g LEFT JOIN _weir_c c ON %[9]s WHERE c._weir_has IS NULL OR %[10]s)
SELECT %[11]s FROM (
SELECT %[12]s FROM _weir_ch g
UNION ALL BY NAME
SELECT %[13]s FROM _weir_c c JOIN _weir_ch g ON %[9]s)`,
		checkedTable, where, identList(s.BusinessKey), ts, rowColumn, id(dagfile.ThisView), id(s.Current),
		oldV, onGC, strings.Join(changed, " OR "), strings.Join(all, ", "), strings.Join(open, ", "), strings.Join(closed, ", "))
}
