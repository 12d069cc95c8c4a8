package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

// LintModels parses every model's SQL in DuckDB (a syntax error is
// MODEL-002) and binds it where its inputs' schemas are knowable offline:
// a source written by an upstream model of the dagfile whose own SQL bound
// has that model's bound output as its schema. A typo or an unknown column
// is then MODEL-002 at the SQL's position; a model whose inputs cannot be
// known without connecting (a table a transfer writes, or one outside the
// dagfile) gets MODEL-004 (info) saying which, instead of passing
// silently. Without the engine it checks nothing.
func LintModels(ctx context.Context, f *dagfile.File, tasks []*dagfile.Task) ([]dagfile.Finding, error) {
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if errors.Is(err, duck.ErrNoEngine) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	writer := map[string]*dagfile.Task{}
	for _, t := range f.Tasks {
		for _, s := range t.Sinks() {
			writer[strings.ToLower(s.String())] = t
		}
	}
	l := &modelLinter{f: f, db: db, writer: writer, out: map[string]*modelBinding{}}
	picked := map[string]bool{}
	for _, t := range tasks {
		picked[t.Name] = true
	}
	var findings []dagfile.Finding
	for _, t := range f.Tasks {
		if t.Model == nil {
			continue
		}
		b := l.bind(ctx, t)
		if picked[t.Name] {
			findings = append(findings, b.findings...)
		}
	}
	dagfile.SortFindings(findings, f.Path)
	return findings, nil
}

type modelLinter struct {
	f      *dagfile.File
	db     *duck.DB
	writer map[string]*dagfile.Task
	out    map[string]*modelBinding // by task
}

// modelBinding is what lint learned of one model: its output schema when
// its SQL bound (nil otherwise), and its findings.
type modelBinding struct {
	schema   *arrow.Schema
	why      string // why schema is nil: the unknown input
	findings []dagfile.Finding
}

func (l *modelLinter) bind(ctx context.Context, t *dagfile.Task) *modelBinding {
	if b, ok := l.out[t.Name]; ok {
		if b == nil {
			return &modelBinding{why: "a dependency cycle"}
		}
		return b
	}
	l.out[t.Name] = nil // a cycle stops here (DAG-001 reports it)
	b := &modelBinding{}
	defer func() { l.out[t.Name] = b }()
	m := t.Model
	file, line, col := l.f.Path, 0, 0
	text := m.SQL
	if m.SQLPath != "" {
		file, line, col = m.SQLPath, 1, 1
		data, err := os.ReadFile(m.SQLPath)
		if err != nil {
			b.why = "its sql_file does not read"
			return b
		}
		text = string(data)
	} else {
		line, col = t.Pos("model.sql")
	}
	text = strings.TrimRight(strings.TrimSpace(text), "; \t\r\n")
	add := func(rule, format string, args ...any) {
		b.findings = append(b.findings, dagfile.Finding{Rule: rule, Severity: severity(rule), File: file, Line: line, Col: col,
			Task: t.Name, Message: fmt.Sprintf("task %s: SQL: ", t.Name) + fmt.Sprintf(format, args...)})
	}
	read, err := l.db.TablesRead(ctx, text)
	if err != nil {
		add(dagfile.RuleModelSQL, "does not parse: %s", firstLine(err))
		b.why = "its SQL does not parse"
		return b
	}
	srcs := modelSources(m)
	schemas := map[string]*arrow.Schema{}
	for _, name := range sortedNames(srcs) {
		if !slices.Contains(read, name) {
			continue // a source the SQL does not read needs no schema
		}
		s, why := l.sourceSchema(ctx, srcs[name])
		if s == nil {
			b.why = fmt.Sprintf("the schema of %s (%s) is not knowable offline: %s", name, srcs[name], why)
			add(dagfile.RuleModelUnbound, "not bound: %s; weir once checks it when it runs", b.why)
			return b
		}
		schemas[name] = s
	}
	if slices.Contains(read, dagfile.ThisView) {
		s, why := l.lakeSchema(ctx, m.Sink)
		if s == nil {
			b.why = "it reads this (the sink's rows), whose schema is not knowable offline: " + why
			add(dagfile.RuleModelUnbound, "not bound: %s; weir once checks it when it runs", b.why)
			return b
		}
		schemas[dagfile.ThisView] = s
	}
	if err := l.db.Reset(ctx); err != nil {
		b.why = err.Error()
		return b
	}
	for name, s := range schemas {
		rd, err := array.NewRecordReader(s, nil)
		if err == nil {
			_, err = l.db.Load(ctx, name, rd)
		}
		if err != nil {
			b.why = fmt.Sprintf("source %s: %v", name, err)
			return b
		}
	}
	out, err := l.db.Schema(ctx, text)
	if err != nil {
		add(dagfile.RuleModelSQL, "%s", firstLine(err))
		b.why = "its SQL does not bind"
		return b
	}
	b.schema = out
	if m.Mode != "replace" {
		if plan, err := rawPlan(ctx, l.db, text); err == nil {
			if why := wholeReason(m, read, plan); why != "" {
				add(dagfile.RuleModelWhole, "runs whole: %s; a batch (its first run: the whole source) is read in one piece, within DuckDB's memory_limit, spilling to disk past it", why)
			}
		}
	}
	if m.Aggregate != nil {
		b.schema = l.bindAggregate(ctx, t, text, b)
	}
	return b
}

// bindAggregate checks a model's declared aggregate against its SQL's
// bound output (rule MODEL-005, at the aggregate's place in the dagfile)
// and returns the aggregate's output schema, or nil.
func (l *modelLinter) bindAggregate(ctx context.Context, t *dagfile.Task, text string, b *modelBinding) *arrow.Schema {
	a := t.Model.Aggregate
	fail := func(pos dagfile.Pos, msg string) *arrow.Schema {
		b.findings = append(b.findings, dagfile.Finding{Rule: dagfile.RuleModelAggregate, Severity: severity(dagfile.RuleModelAggregate),
			File: l.f.Path, Line: pos.Line, Col: pos.Col, Task: t.Name, Message: fmt.Sprintf("task %s: aggregate: %s", t.Name, msg)})
		b.why = "its aggregate does not bind"
		return nil
	}
	plan, err := planAggregate(ctx, l.db, a, t.Model.Mode, text)
	var ae *aggError
	if errors.As(err, &ae) {
		return fail(ae.pos, ae.msg)
	}
	if err == nil && plan.this != nil {
		defs := make([]string, len(plan.this))
		for i, c := range plan.this {
			defs[i] = duck.Ident(c.Name) + " " + c.Type
		}
		err = l.db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s (%s)", duck.Ident(dagfile.ThisView), strings.Join(defs, ", ")))
	}
	var out *arrow.Schema
	if err == nil {
		out, err = l.db.Schema(ctx, plan.final)
	}
	if err != nil {
		return fail(dagfile.Pos{Line: a.Line, Col: a.Col}, firstLine(err))
	}
	return out
}

// sourceSchema is the schema of a source when it is knowable offline: the
// table's schema in a local Iceberg lake (a SQLite catalog, read-only),
// else the bound output of the model of the dagfile that writes it.
func (l *modelLinter) sourceSchema(ctx context.Context, a dagfile.TableAddr) (*arrow.Schema, string) {
	s, why := l.lakeSchema(ctx, a)
	if s != nil {
		return s, ""
	}
	w := l.writer[strings.ToLower(a.String())]
	switch {
	case w == nil:
		return nil, why + ", and no task of the dagfile writes it"
	case w.Model == nil:
		return nil, why + ", and task " + w.Name + " (not a model) writes it"
	}
	b := l.bind(ctx, w)
	if b.schema == nil {
		return nil, why + ", and model " + w.Name + " writes it, but " + b.why
	}
	return b.schema, ""
}

// lakeSchema is a table's schema in a local Iceberg lake, read-only, or
// why it is not knowable that way.
func (l *modelLinter) lakeSchema(ctx context.Context, a dagfile.TableAddr) (*arrow.Schema, string) {
	c := l.f.Connections[a.Conn]
	raw := ""
	switch {
	case c == nil:
		return nil, "connection " + a.Conn + " is not defined"
	case c.Expanded():
		raw = c.URL()
	case len(c.Vars) == 0:
		raw = c.Raw // nothing to expand
	default:
		return nil, "connection " + a.Conn + " uses ${" + strings.Join(c.Vars, "}, ${") + "}, which lint does not read"
	}
	s, ok, why, err := routes.OfflineSchema(ctx, ResolveURL(raw, l.f.Dir), tableRef(a))
	switch {
	case err != nil:
		return nil, err.Error()
	case !ok:
		return nil, why
	}
	return s, ""
}

// firstLine is DuckDB's error without its prefix, first line only.
func firstLine(err error) string {
	msg, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "duckdb: "), "\n")
	return strings.TrimSpace(msg)
}
