package dagfile

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// transformArgs are the keys of each OLC transformation weir compiles
// (their meaning: docs/contracts.md).
var transformArgs = map[string][]string{
	"select":             {"columns"},
	"drop":               {"columns"},
	"rename":             {"from", "to", "mappings"},
	"cast":               {"columns"},
	"trim":               {"fields", "side"},
	"lower":              {"fields"},
	"upper":              {"fields"},
	"coalesce":           {"field", "sources", "default", "output"},
	"split":              {"field", "delimiter", "output"},
	"explode":            {"field", "output"},
	"map_values":         {"field", "mapping", "default", "output"},
	"bucket":             {"field", "source", "bins", "default"},
	"date_diff":          {"field", "from_col", "to_col", "unit"},
	"date_range_explode": {"output", "start_col", "end_col", "interval"},
	"json_extract":       {"field", "source", "path", "cast"},
	"lookup":             {"field", "reference", "on", "key", "value", "default_value"},
	"join":               {"reference", "on", "key", "fields", "type", "prefix", "defaults"},
	"derive":             {"field", "sql"},
	"filter":             {"sql"},
	"deduplicate":        {"on", "sort_by", "order"},
}

var transformRefused = map[string]string{
	"deduplicate_by_latest": "use deduplicate: {on: [...], sort_by: [ts], order: desc}",
	"rollup":                "aggregate in the model's SQL",
	"pivot":                 "pivot in the model's SQL",
	"unpivot":               "unpivot in the model's SQL",
}

// transform decodes one transformation: one op key and phase.
func (o *olcParser) transform(item field) (Transform, bool) {
	t := Transform{Line: item.val.Line, Col: item.val.Column, Post: true}
	var ops []field
	keys := []string{"phase", "sql"}
	for k := range transformArgs {
		keys = append(keys, k)
	}
	for _, h := range o.fields(item.val, item.path, keys, nil, transformRefused) {
		if h.name == "phase" {
			t.Post = o.d.enum(h, "phase", "pre", "post") != "pre"
			continue
		}
		ops = append(ops, h)
	}
	if len(ops) != 1 {
		if item.val.Kind == yaml.MappingNode && len(ops) > 1 {
			o.d.fail(item.val, item.path, "a transformation has one op: found %s", fieldNames(ops))
		} else if item.val.Kind == yaml.MappingNode && onlyKeys(item.val, []string{"phase"}) {
			// (an op refused or unknown is reported already)
			o.d.fail(item.val, item.path, "a transformation needs an op (select, rename, derive, …)")
		}
		return t, false
	}
	h := ops[0]
	t.Op = h.name
	if h.name == "sql" {
		t.SQL = o.d.str(h)
		if t.Post {
			o.unsupported(h, "a sql transformation in phase post (it would have to carry weir's check columns); use phase: pre or the model's SQL")
			return t, false
		}
		return t, t.SQL != ""
	}
	fs := map[string]field{}
	for _, g := range o.fields(h.val, h.path, transformArgs[h.name], nil, nil) {
		fs[g.name] = g
	}
	return t, o.transformArgs(&t, h, fs)
}

// need reports a missing argument.
func (o *olcParser) need(h field, fs map[string]field, names ...string) bool {
	ok := true
	for _, n := range names {
		if _, has := fs[n]; !has {
			o.d.fail(h.key, h.path, "%s needs %s:", h.name, n)
			ok = false
		}
	}
	return ok
}

func (o *olcParser) strOf(fs map[string]field, name string) string {
	if g, ok := fs[name]; ok {
		return o.d.str(g)
	}
	return ""
}

// transformArgs decodes the arguments of op h into t.
func (o *olcParser) transformArgs(t *Transform, h field, fs map[string]field) bool {
	t.Field, t.Output, t.Source = o.strOf(fs, "field"), o.strOf(fs, "output"), o.strOf(fs, "source")
	if g, ok := fs["default"]; ok {
		l := literal(g.val)
		t.Default = &l
	}
	switch h.name {
	case "select", "drop":
		if !o.need(h, fs, "columns") {
			return false
		}
		t.Columns = o.d.strs(fs["columns"])
	case "trim", "lower", "upper":
		if !o.need(h, fs, "fields") {
			return false
		}
		t.Columns = o.d.strs(fs["fields"])
		t.Side = "both"
		if g, ok := fs["side"]; ok {
			t.Side = o.d.enum(g, "side", "both", "left", "right")
		}
	case "rename":
		return o.rename(t, h, fs)
	case "cast":
		if !o.need(h, fs, "columns") {
			return false
		}
		for _, g := range o.fields(fs["columns"].val, fs["columns"].path, nil, nil, nil) {
			t.Pairs = append(t.Pairs, [2]string{g.name, DuckType(o.d.str(g))})
		}
	case "coalesce":
		if !o.need(h, fs, "field", "sources") {
			return false
		}
		t.Columns = o.d.strs(fs["sources"])
	case "split":
		if !o.need(h, fs, "field") {
			return false
		}
		t.Delimiter = ","
		if g, ok := fs["delimiter"]; ok {
			t.Delimiter = g.val.Value
		}
	case "explode":
		return o.need(h, fs, "field")
	case "map_values":
		if !o.need(h, fs, "field", "mapping") {
			return false
		}
		for _, g := range o.fields(fs["mapping"].val, fs["mapping"].path, nil, nil, nil) {
			l := literal(g.val)
			t.Pairs = append(t.Pairs, [2]string{g.name, l.sql()})
		}
	case "bucket":
		return o.need(h, fs, "field", "source", "bins") && o.bins(t, fs["bins"])
	case "date_diff":
		if !o.need(h, fs, "field", "from_col", "to_col") {
			return false
		}
		t.Columns = []string{o.strOf(fs, "from_col"), o.strOf(fs, "to_col")}
		t.Unit = "days"
		if g, ok := fs["unit"]; ok {
			t.Unit = o.d.enum(g, "unit", "days", "hours", "months")
		}
	case "date_range_explode":
		if !o.need(h, fs, "output", "start_col") {
			return false
		}
		t.Columns = []string{o.strOf(fs, "start_col"), o.strOf(fs, "end_col")}
		t.Interval = "1d"
		if g, ok := fs["interval"]; ok {
			t.Interval = o.d.str(g)
		}
		if _, ok := interval(t.Interval); !ok {
			o.d.fail(h.key, h.path, "date_range_explode interval %q: use a count of days or hours, e.g. 1d", t.Interval)
			return false
		}
	case "json_extract":
		if !o.need(h, fs, "field", "source", "path") {
			return false
		}
		t.Path = o.strOf(fs, "path")
		if g, ok := fs["cast"]; ok {
			t.Cast = DuckType(o.d.str(g))
		}
	case "lookup":
		if !o.need(h, fs, "field", "reference", "on", "key", "value") {
			return false
		}
		t.Reference, t.On, t.Key, t.Value = o.strOf(fs, "reference"), o.strOf(fs, "on"), o.strOf(fs, "key"), o.strOf(fs, "value")
		if g, ok := fs["default_value"]; ok {
			l := literal(g.val)
			t.Default = &l
		}
	case "join":
		return o.join(t, h, fs)
	case "derive":
		if !o.need(h, fs, "field", "sql") {
			return false
		}
		t.SQL = o.strOf(fs, "sql")
	case "filter":
		if !o.need(h, fs, "sql") {
			return false
		}
		t.SQL = o.strOf(fs, "sql")
	case "deduplicate":
		if !o.need(h, fs, "on") {
			return false
		}
		t.Columns = o.d.strs(fs["on"])
		if g, ok := fs["sort_by"]; ok {
			t.SortBy = o.d.strs(g)
		}
		t.Desc = true
		if g, ok := fs["order"]; ok {
			t.Desc = o.d.enum(g, "order", "asc", "desc") != "asc"
		}
	}
	return true
}

// rename decodes {from, to} or {mappings: {from: to}}.
func (o *olcParser) rename(t *Transform, h field, fs map[string]field) bool {
	if g, ok := fs["mappings"]; ok {
		for _, m := range o.fields(g.val, g.path, nil, nil, nil) {
			t.Pairs = append(t.Pairs, [2]string{m.name, o.d.str(m)})
		}
	}
	if from, to := o.strOf(fs, "from"), o.strOf(fs, "to"); from != "" || to != "" {
		if from == "" || to == "" {
			o.d.fail(h.key, h.path, "rename needs both from: and to:")
			return false
		}
		t.Pairs = append(t.Pairs, [2]string{from, to})
	}
	if len(t.Pairs) == 0 {
		o.d.fail(h.key, h.path, "rename needs from: and to:, or mappings:")
	}
	return len(t.Pairs) > 0
}

// join decodes a join.
func (o *olcParser) join(t *Transform, h field, fs map[string]field) bool {
	if !o.need(h, fs, "reference", "on", "key", "fields") {
		return false
	}
	t.Reference, t.On, t.Key = o.strOf(fs, "reference"), o.strOf(fs, "on"), o.strOf(fs, "key")
	t.Columns = o.d.strs(fs["fields"])
	t.Prefix = o.strOf(fs, "prefix")
	t.JoinType = "left"
	if g, ok := fs["type"]; ok {
		t.JoinType = o.d.enum(g, "join type", "left", "inner")
	}
	if g, ok := fs["defaults"]; ok {
		t.Defaults = map[string]Literal{}
		for _, d := range o.fields(g.val, g.path, t.Columns, nil, nil) {
			t.Defaults[d.name] = literal(d.val)
		}
	}
	return true
}

// bins decodes bucket bins.
func (o *olcParser) bins(t *Transform, g field) bool {
	for _, item := range o.d.items(g) {
		b := Bin{}
		for _, h := range o.fields(item.val, item.path, []string{"label", "lt", "lte", "gt", "gte", "eq"}, nil, nil) {
			switch h.name {
			case "label":
				b.Label = o.d.str(h)
			case "lt":
				b.LT = o.number(h)
			case "lte":
				b.LTE = o.number(h)
			case "gt":
				b.GT = o.number(h)
			case "gte":
				b.GTE = o.number(h)
			case "eq":
				l := literal(h.val)
				b.EQ = &l
			}
		}
		if b.Label == "" {
			o.d.fail(item.val, item.path, "a bin needs label:")
			return false
		}
		t.Bins = append(t.Bins, b)
	}
	return len(t.Bins) > 0
}

// literal reads a YAML scalar as a SQL literal.
func literal(n *yaml.Node) Literal {
	switch {
	case n.Tag == "!!null":
		return Literal{Null: true}
	case n.Tag == "!!int" || n.Tag == "!!float" || n.Tag == "!!bool":
		return Literal{Text: n.Value}
	}
	return Literal{Text: n.Value, String: true}
}

// SQL renders the literal for DuckDB.
func (l Literal) SQL() string { return l.sql() }

func (l Literal) sql() string {
	switch {
	case l.Null:
		return "NULL"
	case l.String:
		return "'" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	}
	return l.Text
}
