package dagfile

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Aggregate declares a model's output as measures over groups of its SQL's
// rows; weir writes the aggregation and, for an incremental model, the
// merge of each batch with the stored groups (docs/runner.md).
type Aggregate struct {
	GroupBy   []string  // columns of the SQL's output; none: one row for the whole table
	GroupByAt []Pos     // where each group_by column is written
	Measures  []Measure // in the order written
	Line, Col int       // the aggregate: key
}

// Pos is a place in the dagfile.
type Pos struct{ Line, Col int }

// Measure is one output column of an aggregate: Func over the SQL's column
// Arg ("*" for count(*)), cast to Type when one is declared.
type Measure struct {
	Name      string
	Func      string // one of MeasureFuncs
	Arg       string
	Type      string // a DuckDB type; "": the type DuckDB binds
	Line, Col int
}

// MeasureFuncs are the measure functions an aggregate may use. All but
// count_distinct merge a batch into stored totals; count_distinct needs the
// whole table (mode: replace).
var MeasureFuncs = []string{"sum", "count", "min", "max", "avg", "count_distinct"}

// RuleModelAggregate: a declared aggregate that cannot be computed.
const RuleModelAggregate = "MODEL-005"

var measureRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(\*|[A-Za-z_][A-Za-z0-9_]*|"[^"]+")\s*\)\s*$`)

var aggregateKeys = []string{"group_by", "measures"}

var measureKeys = []string{"agg", "type"}

// modelAggregate decodes aggregate: {group_by: [...], measures: {name:
// fn(col) | {agg: fn(col), type: T}}}. The model's mode becomes upsert on
// the group_by columns unless it says replace.
func (p *parser) modelAggregate(m *Model, fs map[string]field) {
	g, ok := fs["aggregate"]
	if !ok {
		return
	}
	a := &Aggregate{Line: g.key.Line, Col: g.key.Column}
	written := 0
	for _, f := range p.d.fields(g.val, g.path, aggregateKeys) {
		switch f.name {
		case "group_by":
			if f.val.Kind == yaml.SequenceNode && len(f.val.Content) == 0 {
				continue // one group: the whole table
			}
			for _, item := range p.d.items(f) {
				if s, ok := p.d.scalar(item, "a column name"); ok {
					a.GroupBy = append(a.GroupBy, s)
					a.GroupByAt = append(a.GroupByAt, Pos{item.val.Line, item.val.Column})
				}
			}
		case "measures":
			for _, mf := range p.d.fields(f.val, f.path, nil) {
				written++
				if ms, ok := p.measure(mf, m.Mode); ok {
					a.Measures = append(a.Measures, ms)
				}
			}
		}
	}
	if written == 0 {
		p.d.failAt(nodePos(g.key), g.path, RuleModelAggregate, "aggregate needs measures: {name: sum(column) | count(*) | count(column) | min(column) | max(column) | avg(column)}")
	}
	if g, ok := fs["key"]; ok {
		p.d.fail(g.key, g.path, "with aggregate:, the key is group_by; drop key:")
	}
	switch mode, set := fs["mode"]; {
	case !set:
		m.Mode = "upsert"
	case m.Mode == "append":
		p.d.fail(mode.val, mode.path, "an aggregate is upsert (merged into the stored groups) or replace (recomputed); not append")
	}
	m.Key = a.GroupBy
	m.Aggregate = a
}

// measure decodes one measure: fn(col), or {agg: fn(col), type: T}.
func (p *parser) measure(f field, mode string) (Measure, bool) {
	ms := Measure{Name: f.name, Line: f.val.Line, Col: f.val.Column}
	expr := f
	if f.val.Kind == yaml.MappingNode {
		expr = field{}
		for _, o := range p.d.fields(f.val, f.path, measureKeys) {
			switch o.name {
			case "agg":
				expr = o
			case "type":
				ms.Type = p.d.str(o)
			}
		}
		if expr.val == nil {
			p.d.failAt(nodePos(f.key), f.path, RuleModelAggregate, "measure %s needs agg: (e.g. avg(price))", f.name)
			return ms, false
		}
	}
	text, ok := p.d.scalar(expr, "a measure such as sum(amount)")
	if !ok {
		return ms, false
	}
	ms.Line, ms.Col = expr.val.Line, expr.val.Column
	sub := measureRE.FindStringSubmatch(text)
	if sub == nil {
		p.d.failAt(nodePos(expr.val), expr.path, RuleModelAggregate, "measure %s: %q is not function(column): use %s over one column of the SQL's output (count(*) counts rows)", f.name, text, strings.Join(MeasureFuncs, ", "))
		return ms, false
	}
	ms.Func, ms.Arg = strings.ToLower(sub[1]), strings.Trim(sub[2], `"`)
	switch {
	case !slicesContains(MeasureFuncs, ms.Func):
		p.d.failAt(nodePos(expr.val), expr.path, RuleModelAggregate, "measure %s: unknown function %q%s", f.name, sub[1], didYouMean(ms.Func, MeasureFuncs))
		return ms, false
	case ms.Arg == "*" && ms.Func != "count":
		p.d.failAt(nodePos(expr.val), expr.path, RuleModelAggregate, "measure %s: %s(*) is not a measure; only count(*) takes *", f.name, ms.Func)
		return ms, false
	case ms.Func == "count_distinct" && mode != "replace":
		p.d.failAt(nodePos(expr.val), expr.path, RuleModelAggregate, "measure %s: count_distinct does not merge (the distinct values of earlier batches are not kept): use mode: replace, which recomputes the whole table each run", f.name)
		return ms, false
	}
	return ms, true
}

// IsNumeric reports whether a measure function needs a numeric column.
func (ms Measure) IsNumeric() bool { return ms.Func == "sum" || ms.Func == "avg" }
