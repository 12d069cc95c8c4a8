package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// A declared aggregate (model aggregate:) is compiled into SQL over the
// model's own SQL, whose rows are the aggregate's input:
//
//	WITH _weir_rows AS (<the model's SQL>),
//	     _weir_batch AS (SELECT <group_by>, <measures of the batch> FROM _weir_rows GROUP BY <group_by>)
//	SELECT <group_by>, <each measure merged with the stored group's> FROM _weir_batch b LEFT JOIN this t ON <same group>
//
// Every output column is cast to its type: the declared one, else the one
// DuckDB binds for the measure over the batch (sum of DECIMAL(p,s) is
// DECIMAL(38,s), count BIGINT), so a merge never widens or narrows a
// column. avg is kept as two hidden columns, _weir_sum_<name> and
// _weir_count_<name> (the merged sum and count of non-NULL values), and
// computed from them, never as an average of averages. A replace model
// computes the measures over the whole table, with no merge and no hidden
// columns.

// aggPlan is an aggregate compiled against the model's SQL.
type aggPlan struct {
	final string        // the SQL the run executes
	this  []duck.Column // the stored groups' columns (nil for replace: no merge)
}

// aggError is a declared aggregate that cannot be computed, at its place
// in the dagfile.
type aggError struct {
	pos dagfile.Pos
	msg string
}

func (e *aggError) Error() string { return e.msg }

const (
	hiddenSum   = "_weir_sum_"
	hiddenCount = "_weir_count_"
)

// planAggregate checks the aggregate against the columns the model's SQL
// outputs (bound over the loaded inputs) and writes its SQL.
func planAggregate(ctx context.Context, db *duck.DB, a *dagfile.Aggregate, mode, text string) (*aggPlan, error) {
	read, err := db.TablesRead(ctx, text)
	if err != nil {
		return nil, err
	}
	at := dagfile.Pos{Line: a.Line, Col: a.Col}
	if slices.Contains(read, dagfile.ThisView) {
		return nil, &aggError{at, "the SQL reads this: with aggregate:, weir merges the batch with the stored groups itself; write the SQL over the new rows only"}
	}
	cols, err := db.Describe(ctx, text)
	if err != nil {
		return nil, err
	}
	rows := map[string]duck.Column{}
	var names []string
	for _, c := range cols {
		rows[strings.ToLower(c.Name)] = c
		names = append(names, c.Name)
	}
	column := func(name string, pos dagfile.Pos, what string) (duck.Column, error) {
		c, ok := rows[strings.ToLower(name)]
		if !ok {
			return c, &aggError{pos, fmt.Sprintf("%s %q is not a column of the SQL's output (%s)", what, name, strings.Join(names, ", "))}
		}
		return c, nil
	}
	var groups []string
	for i, g := range a.GroupBy {
		c, err := column(g, a.GroupByAt[i], "group_by column")
		if err != nil {
			return nil, err
		}
		groups = append(groups, duck.Ident(c.Name))
	}
	// Output names compare as DuckDB and the sinks compare them: without
	// case. A group column, a measure and an avg's hidden columns each
	// take one.
	taken := map[string]bool{}
	for _, g := range a.GroupBy {
		taken[strings.ToLower(g)] = true
	}
	args := make([]string, len(a.Measures))
	for i, ms := range a.Measures {
		pos := dagfile.Pos{Line: ms.Line, Col: ms.Col}
		names := []string{ms.Name}
		if ms.Func == "avg" {
			names = append(names, hiddenSum+ms.Name, hiddenCount+ms.Name)
		}
		lower := strings.ToLower(ms.Name)
		for _, n := range names {
			if taken[strings.ToLower(n)] || strings.HasPrefix(lower, hiddenSum) || strings.HasPrefix(lower, hiddenCount) {
				return nil, &aggError{pos, fmt.Sprintf("measure name %q is taken (a group_by column, another measure — names compare without case — or weir's hidden %s…/%s… columns)", ms.Name, hiddenSum, hiddenCount)}
			}
			taken[strings.ToLower(n)] = true
		}
		if ms.Arg == "*" {
			args[i] = "*"
			continue
		}
		c, err := column(ms.Arg, pos, "measure "+ms.Name+": column")
		if err != nil {
			return nil, err
		}
		if ms.IsNumeric() && !numericType(c.Type) {
			return nil, &aggError{pos, fmt.Sprintf("measure %s: %s(%s) needs a number, and %s is %s; cast it in the SQL", ms.Name, ms.Func, c.Name, c.Name, c.Type)}
		}
		args[i] = duck.Ident(c.Name)
	}
	p := &aggBuilder{a: a, groups: groups, args: args, rows: "WITH _weir_rows AS (" + text + ")"}
	types, err := p.bind(ctx, db)
	if err != nil {
		return nil, &aggError{at, err.Error()}
	}
	if mode == "replace" {
		return &aggPlan{final: p.replaceSQL(types)}, nil
	}
	return p.mergeSQL(cols, types), nil
}

// numericType reports whether a DuckDB type name is a number.
func numericType(t string) bool {
	t = strings.ToUpper(t)
	switch t {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
		"UHUGEINT", "FLOAT", "DOUBLE", "REAL":
		return true
	}
	return strings.HasPrefix(t, "DECIMAL")
}

type aggBuilder struct {
	a      *dagfile.Aggregate
	groups []string // quoted
	args   []string // quoted column per measure, or *
	rows   string   // WITH _weir_rows AS (…)
}

// call is a measure's aggregate over the batch's rows.
func (p *aggBuilder) call(i int) string {
	ms := p.a.Measures[i]
	switch ms.Func {
	case "count_distinct":
		return "count(DISTINCT " + p.args[i] + ")"
	case "avg":
		return "avg(" + p.args[i] + ")"
	}
	return ms.Func + "(" + p.args[i] + ")"
}

func (p *aggBuilder) groupBy() string {
	if len(p.groups) == 0 {
		return ""
	}
	return " GROUP BY " + strings.Join(p.groups, ", ")
}

// batchSelect is the batch's groups and measures; an avg also gets its
// hidden sum and count.
func (p *aggBuilder) batchSelect() string {
	out := slices.Clone(p.groups)
	for i, ms := range p.a.Measures {
		out = append(out, p.call(i)+" AS "+duck.Ident(ms.Name))
		if ms.Func == "avg" {
			out = append(out, "sum("+p.args[i]+") AS "+duck.Ident(hiddenSum+ms.Name), "count("+p.args[i]+") AS "+duck.Ident(hiddenCount+ms.Name))
		}
	}
	return "SELECT " + strings.Join(out, ", ") + " FROM _weir_rows" + p.groupBy()
}

// bind returns the type of every output column by name: a measure's
// declared type, else DuckDB's for the measure over the batch.
func (p *aggBuilder) bind(ctx context.Context, db *duck.DB) (map[string]string, error) {
	cols, err := db.Describe(ctx, p.rows+" "+p.batchSelect())
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	for _, c := range cols {
		types[c.Name] = c.Type
	}
	for _, ms := range p.a.Measures {
		if ms.Type != "" {
			// DuckDB parses the type name here, so a bad one is caught
			// before the run (and by weir lint).
			if _, err := db.Describe(ctx, "SELECT CAST(NULL AS "+ms.Type+") AS x"); err != nil {
				return nil, fmt.Errorf("measure %s: type %q: %s", ms.Name, ms.Type, firstLine(err))
			}
			types[ms.Name] = ms.Type
		}
	}
	return types, nil
}

// replaceSQL computes the measures over every row, with no merge.
func (p *aggBuilder) replaceSQL(types map[string]string) string {
	out := slices.Clone(p.groups)
	for i, ms := range p.a.Measures {
		out = append(out, cast(p.call(i), types[ms.Name])+" AS "+duck.Ident(ms.Name))
	}
	return p.rows + " SELECT " + strings.Join(out, ", ") + " FROM _weir_rows" + p.groupBy()
}

// mergeSQL merges the batch's measures with the stored groups' (this).
func (p *aggBuilder) mergeSQL(rows []duck.Column, types map[string]string) *aggPlan {
	plan := &aggPlan{}
	var out, on []string
	for _, g := range p.a.GroupBy {
		name := g
		for _, c := range rows {
			if strings.EqualFold(c.Name, g) {
				name = c.Name
			}
		}
		q := duck.Ident(name)
		// A group is the sink's key (a PostgreSQL primary key, an Iceberg
		// identifier field), which cannot be NULL: refuse the batch, before
		// a row is written, saying how to name the NULL group.
		msg := fmt.Sprintf("aggregate: group_by column %s is NULL in a row: a group is the sink's key, which cannot be NULL; name the NULL group in the SQL, e.g. coalesce(%s, <a value>) AS %s", name, name, name)
		out = append(out, "CASE WHEN b."+q+" IS NULL THEN error("+duck.Literal(msg)+") ELSE b."+q+" END AS "+q)
		on = append(on, "b."+q+" IS NOT DISTINCT FROM t."+q)
		plan.this = append(plan.this, duck.Column{Name: name, Type: types[name]})
	}
	add := func(name, expr string) {
		out = append(out, cast(expr, types[name])+" AS "+duck.Ident(name))
		plan.this = append(plan.this, duck.Column{Name: name, Type: types[name]})
	}
	var hidden []func()
	for _, ms := range p.a.Measures {
		b, t := "b."+duck.Ident(ms.Name), "t."+duck.Ident(ms.Name)
		switch ms.Func {
		case "sum":
			add(ms.Name, mergeNullable(b, t, t+" + "+b))
		case "count":
			add(ms.Name, "coalesce("+t+", 0) + "+b)
		case "min":
			add(ms.Name, mergeNullable(b, t, "least("+t+", "+b+")"))
		case "max":
			add(ms.Name, mergeNullable(b, t, "greatest("+t+", "+b+")"))
		case "avg":
			s, n := hiddenSum+ms.Name, hiddenCount+ms.Name
			bs, ts, bn, tn := "b."+duck.Ident(s), "t."+duck.Ident(s), "b."+duck.Ident(n), "t."+duck.Ident(n)
			sum, count := mergeNullable(bs, ts, ts+" + "+bs), "coalesce("+tn+", 0) + "+bn
			add(ms.Name, "CAST("+cast(sum, types[s])+" AS DOUBLE) / nullif("+count+", 0)")
			hidden = append(hidden, func() { add(s, sum) }, func() { add(n, count) })
		}
	}
	for _, h := range hidden {
		h()
	}
	cond := "true"
	if len(on) > 0 {
		cond = strings.Join(on, " AND ")
	}
	plan.final = p.rows + ", _weir_batch AS (" + p.batchSelect() + ") SELECT " + strings.Join(out, ", ") +
		" FROM _weir_batch AS b LEFT JOIN " + duck.Ident(dagfile.ThisView) + " AS t ON " + cond
	return plan
}

// mergeNullable merges two values of which either may be NULL (a sum, min
// or max over no non-NULL value): the other one, else both merged.
func mergeNullable(b, t, both string) string {
	return "CASE WHEN " + t + " IS NULL THEN " + b + " WHEN " + b + " IS NULL THEN " + t + " ELSE " + both + " END"
}

func cast(expr, typ string) string { return "CAST(" + expr + " AS " + typ + ")" }

// aggregate compiles the model's declared aggregate over its SQL and, for
// a merge, loads the stored groups as this; it returns the SQL to run.
func (run *modelRun) aggregate(ctx context.Context, text string) (string, error) {
	plan, err := planAggregate(ctx, run.db, run.m.Aggregate, run.m.Mode, text)
	var ae *aggError
	if errors.As(err, &ae) {
		return "", routes.BadInput("%s:%d:%d: model %s: aggregate: %s", run.r.file.Path, ae.pos.Line, ae.pos.Col, run.t.Name, ae.msg)
	}
	if err != nil {
		return "", routes.BadInput("model %s: %v", run.t.Name, err)
	}
	if plan.this != nil {
		if err := run.loadStoredGroups(ctx, plan.this); err != nil {
			return "", err
		}
	}
	if run.resetting { // a reset commits no rows (a global aggregate has one even over nothing)
		return "SELECT * FROM (" + plan.final + ") LIMIT 0", nil
	}
	return plan.final, nil
}

// loadStoredGroups loads the sink's rows as this; it is empty (with the
// aggregate's columns) before the sink exists, and empty with the sink's
// columns when every source is read from its start, so a replay
// recomputes instead of adding the history to itself twice. A sink that
// exists must store every column the merge writes, with its type (the
// merge upserts the groups over the rows it holds, the first run too).
func (run *modelRun) loadStoredGroups(ctx context.Context, cols []duck.Column) error {
	src, err := run.r.source(ctx, run.m.Sink.Conn)
	if err != nil {
		return err
	}
	info, err := src.Probe(ctx, run.ref)
	switch {
	case errors.Is(err, routes.ErrNotFound):
	case err != nil:
		return fmt.Errorf("stored groups (%s): %w", run.m.Sink, err)
	default:
		return run.loadSink(ctx, src, info, cols)
	}
	defs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = duck.Ident(c.Name) + " " + c.Type
	}
	q := fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s (%s)", duck.Ident(dagfile.ThisView), strings.Join(defs, ", "))
	if err := run.db.Exec(ctx, q); err != nil {
		return routes.BadInput("model %s: aggregate: %v", run.t.Name, err)
	}
	return nil
}

// loadSink loads the sink's rows as this (none when the run reads from
// the start or resets), and checks that it stores every column the merge
// writes, with the type the merge writes (measures or their input types
// changed since it was built, or another task or tool built it: rebuild).
func (run *modelRun) loadSink(ctx context.Context, src routes.Source, info *routes.TableInfo, cols []duck.Column) error {
	var s array.RecordReader
	var err error
	if run.resetting || run.fromStart() {
		s, err = array.NewRecordReader(info.Schema(), nil)
	} else {
		s, err = incremental.ReadTable(ctx, src, info, run.r.opts.Budget, run.r.opts.Allocator)
	}
	if err != nil {
		return fmt.Errorf("stored groups (%s): %w", run.m.Sink, err)
	}
	if _, err := run.db.Load(ctx, dagfile.ThisView, s); err != nil {
		return fmt.Errorf("stored groups (%s): %w", run.m.Sink, err)
	}
	stored, err := run.db.Describe(ctx, "SELECT * FROM "+duck.Ident(dagfile.ThisView))
	if err != nil {
		return fmt.Errorf("stored groups (%s): %w", run.m.Sink, err)
	}
	have := map[string]string{}
	for _, c := range stored {
		have[strings.ToLower(c.Name)] = c.Type
	}
	rebuild := fmt.Sprintf("rebuild it with weir reset --task %s --to earliest --full-refresh", run.t.Name)
	for _, c := range cols {
		typ, ok := have[strings.ToLower(c.Name)]
		if !ok {
			return routes.BadInput("model %s: %s has no column %s, which the aggregate merges (its measures changed since the sink was built, or another task built it): %s",
				run.t.Name, run.m.Sink, c.Name, rebuild)
		}
		if !sameStoredType(typ, c.Type) {
			return routes.BadInput("model %s: %s column %s is %s, and the aggregate writes %s (its types changed since the sink was built, or another task built it): %s",
				run.t.Name, run.m.Sink, c.Name, typ, c.Type, rebuild)
		}
	}
	return nil
}

// sameStoredType reports whether a column the sink stores (its type as
// DuckDB reads it back) holds the aggregate's type as it is: the same
// type, up to what a sink stores it as (a HUGEINT as DECIMAL(38,0)).
func sameStoredType(stored, wrote string) bool {
	norm := func(t string) string {
		t = strings.ToUpper(strings.ReplaceAll(t, " ", ""))
		if t == "HUGEINT" {
			return "DECIMAL(38,0)"
		}
		return t
	}
	return norm(stored) == norm(wrote)
}
