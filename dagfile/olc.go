package dagfile

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The Open Lakehouse Contract (OLC, v0.4 schema): a contract file named
// *.olc.yaml is read as OLC and translated into the same Contract weir's
// own format gives — one engine checks both. What weir does with each OLC
// element is in docs/contracts.md. A key OLC defines that weir does not
// implement is refused (OLC-001, naming the key), never ignored; a key OLC
// does not define is refused as unknown, as OLC's own validator does.

// RuleOLCUnsupported: an OLC contract uses an element weir does not implement.
const RuleOLCUnsupported = "OLC-001"

// IsOLC reports whether a contract path names an OLC file.
func IsOLC(path string) bool {
	return strings.HasSuffix(path, ".olc.yaml") || strings.HasSuffix(path, ".olc.yml")
}

// Transform is one OLC transformation, compiled to DuckDB SQL by the runner.
// Op says which fields are set.
type Transform struct {
	Op        string // select drop rename cast trim lower upper coalesce split explode map_values bucket date_diff date_range_explode json_extract lookup join derive filter deduplicate sql
	Post      bool   // phase: post (the schema's default) — after the good/bad split
	Field     string
	Output    string
	Source    string
	Columns   []string    // select/drop, trim/lower/upper fields, coalesce sources, join fields, deduplicate on
	Pairs     [][2]string // rename from→to, cast column→type, map_values key→value (literal)
	Default   *Literal    // coalesce, map_values, bucket default; lookup default_value
	Defaults  map[string]Literal
	Bins      []Bin
	SQL       string
	Delimiter string
	Side      string // trim: both | left | right
	Unit      string // date_diff: days | hours | months
	Interval  string // date_range_explode: Nd
	Path      string // json_extract
	Cast      string // json_extract: a DuckDB type, after DuckType
	Reference string // lookup/join: a model source (read whole: lookup:)
	On, Key   string
	Value     string
	JoinType  string // left | inner
	Prefix    string
	SortBy    []string
	Desc      bool
	Line, Col int
}

// Literal is a YAML scalar as SQL needs it: a number or boolean bare, a
// string quoted.
type Literal struct {
	Text   string
	String bool
	Null   bool
}

// Bin is one bucket bin: label when every bound set holds.
type Bin struct {
	Label            string
	LT, LTE, GT, GTE string // numbers as written, "" when unset
	EQ               *Literal
}

// DatasetRule is a rule over the whole batch of good rows: it is reported
// (contract.dataset_rules) and, with FailOnDatasetError, fails the run; it
// never quarantines a row.
type DatasetRule struct {
	Kind     string // unique | null_ratio | row_count_between | sql
	Name     string
	Columns  []string // unique; null_ratio (one)
	Min, Max string   // row_count_between; null_ratio max; sql bounds (must_be_*)
	MinOpen  bool     // must_be_greater_than: Min is exclusive
	MaxOpen  bool     // must_be_less_than: Max is exclusive
	SQL      string   // sql: a query over the view source
	Severity string   // error (default) | warning | info
	Line     int
	Col      int
}

// Materialization is what an OLC contract says about the sink's writes.
type Materialization struct {
	Strategy string   // append | merge | overwrite | scd2
	Key      []string // primary_key
	SCD2     *SCD2
	Line     int
	Col      int
}

// SCD2 is the slowly changing dimension an scd2 strategy keeps.
type SCD2 struct {
	BusinessKey []string // natural_key, else primary_key
	Timestamp   string   // timestamp_field: the change's time, effective_from of a new version
	From, To    string   // effective_from_field, effective_to_field
	Current     string   // current_flag_field
	Version     string   // version_column
	Track       []string // track_columns: a change in one opens a new version (all other fields when empty)
	FromDefault string   // effective_from of a key's first version
	ToDefault   string   // effective_to of the current version
}

// olcDescriptive are keys weir accepts and does not act on: they describe
// the data product and change nothing a run does.
var olcDescriptive = []string{"version", "info", "extensions", "metadata", "tier", "contract_file_name",
	"compliance", "upstream", "downstream", "upstream_contracts", "dataset"}

var olcUnsupported = map[string]string{
	"server":         "weir writes to the task's sink connection",
	"source":         "weir reads the task's sources (model source:/sources:, stream source)",
	"environments":   "use one contract file per environment or ${VAR} in the dagfile",
	"links":          "declare a reference table as a model source read whole (lookup:) and name it in reference:",
	"lineage":        "provenance columns are not injected",
	"logic":          "put the logic in the model's SQL",
	"external_logic": "put the logic in the model's SQL",
	"observatory":    "no observability hooks",
	"extraction":     "LLM / regex extraction is not run; use regexp_extract in the model's SQL or a derive transformation",
	"schedule":       "the dagfile's schedule: decides when a task runs",
	"service_levels": "SLOs are not tracked",
	"schema_policy":  "the sink gets the model's fields (unknown fields are dropped); drift is handled by the model's on_change",
}

var olcTopKeys = func() []string {
	keys := append([]string{"model", "primary_key", "natural_key", "quality", "quarantine", "materialization", "transformations"}, olcDescriptive...)
	for k := range olcUnsupported {
		keys = append(keys, k)
	}
	return keys
}()

// olcParser decodes one OLC file.
type olcParser struct {
	d *decoder
	c *Contract
}

// unsupported refuses a key OLC defines and weir does not implement.
func (o *olcParser) unsupported(g field, why string) {
	o.d.failAt(nodePos(g.key), g.path, RuleOLCUnsupported, "OLC %s is not supported by weir: %s (docs/contracts.md)", g.path, why)
}

// fields decodes a mapping whose keys are supported, descriptive
// (accepted, no effect) or refused with a reason.
func (o *olcParser) fields(n *yaml.Node, path string, supported, descriptive []string, refused map[string]string) []field {
	if supported == nil && descriptive == nil && refused == nil { // a free mapping (cast columns, a mapping)
		return o.d.fields(n, path, nil)
	}
	allowed := append(append([]string{}, supported...), descriptive...)
	for k := range refused {
		allowed = append(allowed, k)
	}
	var out []field
	for _, g := range o.d.fields(n, path, allowed) {
		switch {
		case refused[g.name] != "":
			o.unsupported(g, refused[g.name])
		case slicesContains(supported, g.name):
			out = append(out, g)
		}
	}
	return out
}

// olcContract decodes an OLC document into a Contract.
func olcContract(d *decoder, n *yaml.Node, file string) *Contract {
	o := &olcParser{d: d, c: &Contract{File: file, Format: FormatOLC, MaxBadRatio: 1}}
	var quality, mat, model field
	var pk, nk []string
	hasModel := false
	for _, g := range o.fields(n, "", []string{"model", "primary_key", "natural_key", "quality", "quarantine", "materialization", "transformations"}, olcDescriptive, olcUnsupported) {
		switch g.name {
		case "model":
			model, hasModel = g, true
		case "primary_key":
			pk = d.strs(g)
		case "natural_key":
			nk = d.strs(g)
		case "quality":
			quality = g
		case "quarantine":
			o.quarantine(g)
		case "materialization":
			mat = g
		case "transformations":
			for _, item := range d.items(g) {
				if t, ok := o.transform(item); ok {
					o.c.Transforms = append(o.c.Transforms, t)
				}
			}
		}
	}
	if !hasModel {
		d.fail(n, "model", "an OLC contract needs model: with fields: (the schema requires version, info and model)")
	} else {
		o.model(model)
	}
	enforce := true
	if quality.val != nil {
		enforce = o.quality(quality)
	}
	for i := range o.c.Columns {
		o.c.Columns[i].Required = o.c.Columns[i].Required && enforce
	}
	if mat.val != nil {
		o.materialization(mat, pk, nk)
	} else if pk != nil {
		o.c.Materialization = &Materialization{Key: pk}
	}
	checkRuleColumns(d, o.c, n, "")
	return o.c
}

var olcFieldKeys = []string{"name", "type", "required", "nullable", "accepted_values", "min", "max", "max_length", "rules"}
var olcFieldDescriptive = []string{"description", "pii", "phi", "sensitive", "classification"}
var olcFieldRefused = map[string]string{
	"foreign_key":         "check it with a join in the model's SQL",
	"milestone":           "accumulating-snapshot facts are not modelled",
	"generated":           "weir injects no generated columns",
	"security_groups":     "no access control on the sink",
	"masking":             "values are not masked",
	"masking_format":      "values are not masked",
	"pii_vault":           "values are not vaulted",
	"extraction_task":     "LLM extraction is not run",
	"extraction_examples": "LLM extraction is not run",
}

// model decodes model.fields: the columns, their types and field rules.
func (o *olcParser) model(g field) {
	for _, h := range o.fields(g.val, g.path, []string{"fields"}, []string{"grain"}, map[string]string{"grain_key": "the grain is not checked; use a unique dataset rule"}) {
		seen := map[string]bool{}
		for _, item := range o.d.items(h) {
			col, ok := o.field(item)
			if !ok {
				continue
			}
			if seen[col.Name] {
				o.d.fail(item.val, item.path, "field %q is listed twice", col.Name)
				continue
			}
			seen[col.Name] = true
			o.c.Columns = append(o.c.Columns, col)
		}
	}
}

// field decodes one model field and its field-level rules.
func (o *olcParser) field(item field) (Column, bool) {
	col := Column{Line: item.val.Line, Col: item.val.Column}
	var rules []field
	var vals, lo, hi, maxLen field
	for _, h := range o.fields(item.val, item.path, olcFieldKeys, olcFieldDescriptive, olcFieldRefused) {
		switch h.name {
		case "name":
			col.Name = o.d.str(h)
		case "type":
			col.Type = DuckType(o.d.str(h))
		case "required":
			col.Required = o.d.boolean(h)
		case "nullable":
			if !o.d.boolean(h) {
				col.Required = true
			}
		case "accepted_values":
			vals = h
		case "min":
			lo = h
		case "max":
			hi = h
		case "max_length":
			maxLen = h
		case "rules":
			rules = append(rules, o.d.items(h)...)
		}
	}
	if col.Name == "" || col.Type == "" {
		if item.val.Kind == yaml.MappingNode {
			o.d.fail(item.val, item.path, "an OLC field needs name: and type:")
		}
		return col, false
	}
	at := func(h field) ContractRule { return ContractRule{Line: h.key.Line, Col: h.key.Column, Column: col.Name} }
	if vals.val != nil {
		r := at(vals)
		r.Kind, r.Values = RuleAcceptedValues, o.d.strs(vals)
		o.c.Rules = append(o.c.Rules, r)
	}
	if lo.val != nil || hi.val != nil {
		r := at(lo)
		if lo.val == nil {
			r = at(hi)
		}
		r.Kind = RuleRange
		if lo.val != nil {
			r.Min = o.number(lo)
		}
		if hi.val != nil {
			r.Max = o.number(hi)
		}
		o.c.Rules = append(o.c.Rules, r)
	}
	if maxLen.val != nil {
		r := at(maxLen)
		n := o.d.integer(maxLen, 0)
		r.Kind, r.Name = RuleSQL, fmt.Sprintf("max_length(%s)", col.Name)
		r.SQL = fmt.Sprintf("%s IS NULL OR length(CAST(%s AS VARCHAR)) <= %d", sqlIdent(col.Name), sqlIdent(col.Name), n)
		o.c.Rules = append(o.c.Rules, r)
	}
	for _, item := range rules {
		o.rowRule(item)
	}
	return col, true
}

// number decodes a YAML number, as written.
func (o *olcParser) number(g field) string {
	s, ok := o.d.scalar(g, "a number")
	if !ok {
		return ""
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		o.d.fail(g.val, g.path, "expected a number, got %q", s)
		return ""
	}
	return s
}

// quality decodes quality: and returns enforce_required.
func (o *olcParser) quality(g field) bool {
	enforce := true
	for _, h := range o.fields(g.val, g.path, []string{"enforce_required", "fail_pipeline_on_dataset_error", "row_rules", "dataset_rules"}, nil, nil) {
		switch h.name {
		case "enforce_required":
			enforce = o.d.boolean(h)
		case "fail_pipeline_on_dataset_error":
			o.c.FailOnDatasetError = o.d.boolean(h)
		case "row_rules":
			for _, item := range o.d.items(h) {
				o.rowRule(item)
			}
		case "dataset_rules":
			for _, item := range o.d.items(h) {
				o.datasetRule(item)
			}
		}
	}
	return enforce
}

// ruleMeta are the keys of a QualityRule besides its body.
var ruleMeta = []string{"name", "severity", "phase", "category", "description"}

var rowShorthands = []string{"sql", "not_null", "accepted_values", "regex_match", "range", "lifecycle_window"}

// rowRule decodes one row rule: a QualityRule (name + sql) or a shorthand.
func (o *olcParser) rowRule(item field) {
	r := ContractRule{Line: item.val.Line, Col: item.val.Column}
	var body []field
	refused := map[string]string{
		"referential_integrity": "check it with a join in the model's SQL",
		"must_be_between":       "numeric bounds apply to dataset rules; write the comparison in sql:",
		"must_be_less_than":     "numeric bounds apply to dataset rules; write the comparison in sql:",
		"must_be_greater_than":  "numeric bounds apply to dataset rules; write the comparison in sql:",
	}
	for _, h := range o.fields(item.val, item.path, append(append([]string{}, ruleMeta...), rowShorthands...), nil, refused) {
		switch h.name {
		case "name":
			r.Name = o.d.str(h)
		case "severity":
			o.severity(h, true)
		case "phase":
			r.Post = o.d.enum(h, "phase", "pre", "post") == "post"
		case "category", "description":
		default:
			body = append(body, h)
		}
	}
	if len(body) != 1 {
		if item.val.Kind == yaml.MappingNode && len(body) > 1 {
			o.d.fail(item.val, item.path, "a row rule has one of %s: found %s", strings.Join(rowShorthands, ", "), fieldNames(body))
		} else if item.val.Kind == yaml.MappingNode && onlyKeys(item.val, ruleMeta) { // (a refused or unknown key is reported already)
			o.d.fail(item.val, item.path, "a row rule needs sql: (with name:) or one of %s", strings.Join(rowShorthands[1:], ", "))
		}
		return
	}
	h := body[0]
	switch h.name {
	case "sql":
		r.Kind, r.SQL = RuleSQL, o.d.str(h)
		if r.Name == "" {
			o.d.fail(item.val, item.path, "an OLC sql rule needs name:")
		}
		o.add(r, r.SQL != "")
	case "not_null":
		o.notNull(r, h)
	default:
		o.columnRule(r, h)
	}
}

// add appends a decoded rule.
func (o *olcParser) add(r ContractRule, ok bool) {
	if ok {
		o.c.Rules = append(o.c.Rules, r)
	}
}

// severity decodes severity: error is the only one a row rule may have
// (weir quarantines, it does not log-and-keep).
func (o *olcParser) severity(h field, row bool) string {
	s := o.d.enum(h, "severity", "error", "warning", "info")
	if row && s != "" && s != "error" {
		o.unsupported(h, "a row rule that logs and keeps the row; weir quarantines (error) or use a dataset rule")
	}
	return s
}

// notNull decodes not_null: a field, a list, or {field|fields, name, severity}.
func (o *olcParser) notNull(r ContractRule, h field) {
	r.Kind = RuleNotNull
	switch h.val.Kind {
	case yaml.ScalarNode:
		r.Columns = []string{o.d.str(h)}
	case yaml.SequenceNode:
		for _, item := range o.d.items(h) {
			if item.val.Kind == yaml.MappingNode {
				o.notNull(ContractRule{Line: item.val.Line, Col: item.val.Column}, item)
				continue
			}
			r.Columns = append(r.Columns, o.d.str(item))
		}
	default:
		for _, g := range o.fields(h.val, h.path, []string{"field", "fields", "name", "severity", "category", "description"}, nil, nil) {
			switch g.name {
			case "field", "fields":
				r.Columns = append(r.Columns, o.d.strs(g)...)
			case "name":
				r.Name = o.d.str(g)
			case "severity":
				o.severity(g, true)
			}
		}
	}
	o.add(r, len(r.Columns) > 0)
}

// columnRule decodes accepted_values, regex_match, range and
// lifecycle_window: {field, ...}.
func (o *olcParser) columnRule(r ContractRule, h field) {
	args := map[string][]string{
		"accepted_values":  {"field", "values"},
		"regex_match":      {"field", "pattern"},
		"range":            {"field", "min", "max", "inclusive"},
		"lifecycle_window": {"field", "window"},
	}[h.name]
	inclusive := true
	var window string
	fs := map[string]field{}
	for _, g := range o.fields(h.val, h.path, append(args, "name", "severity", "category", "description"), nil, nil) {
		fs[g.name] = g
		switch g.name {
		case "field":
			r.Column = o.d.str(g)
		case "values":
			r.Values = o.d.strs(g)
		case "pattern":
			r.Pattern = o.d.str(g)
		case "min":
			r.Min = o.number(g)
		case "max":
			r.Max = o.number(g)
		case "inclusive":
			inclusive = o.d.boolean(g)
		case "window":
			window = o.d.str(g)
		case "name":
			r.Name = o.d.str(g)
		case "severity":
			o.severity(g, true)
		}
	}
	if r.Column == "" {
		if h.val.Kind == yaml.MappingNode {
			o.d.fail(h.key, h.path, "%s needs field:", h.name)
		}
		return
	}
	switch h.name {
	case "accepted_values":
		r.Kind = RuleAcceptedValues
		if len(r.Values) == 0 {
			o.d.fail(h.key, h.path, "accepted_values needs values: [a, b, …]")
		}
		o.add(r, len(r.Values) > 0)
	case "regex_match":
		r.Kind = RuleRegex
		if _, err := regexp.Compile(r.Pattern); err != nil || r.Pattern == "" {
			o.d.fail(h.key, h.path, "regex_match needs a pattern: (RE2) — %v", err)
			return
		}
		o.add(r, true)
	case "range":
		if r.Min == "" && r.Max == "" {
			o.d.fail(h.key, h.path, "range needs min:, max: or both")
			return
		}
		if inclusive {
			r.Kind = RuleRange
			o.add(r, true)
			return
		}
		var conds []string
		id := sqlIdent(r.Column)
		if r.Min != "" {
			conds = append(conds, id+" > "+r.Min)
		}
		if r.Max != "" {
			conds = append(conds, id+" < "+r.Max)
		}
		if r.Name == "" {
			r.Name = "range(" + r.Column + ")"
		}
		r.Kind, r.SQL, r.Min, r.Max = RuleSQL, id+" IS NULL OR ("+strings.Join(conds, " AND ")+")", "", ""
		o.add(r, true)
	case "lifecycle_window":
		iv, ok := interval(window)
		if !ok {
			o.d.fail(h.key, h.path, "lifecycle_window needs window: a count of days or hours, e.g. 30d or 12h; got %q", window)
			return
		}
		if r.Name == "" {
			r.Name = "lifecycle_window(" + r.Column + ")"
		}
		id := sqlIdent(r.Column)
		r.Kind, r.SQL = RuleSQL, fmt.Sprintf("%s IS NULL OR %s >= current_timestamp - %s", id, id, iv)
		o.add(r, true)
	}
}

var intervalRE = regexp.MustCompile(`^(\d+)\s*(d|h)$`)

// interval renders Nd / Nh as a DuckDB interval.
func interval(s string) (string, bool) {
	m := intervalRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	unit := map[string]string{"d": "DAY", "h": "HOUR"}[m[2]]
	return fmt.Sprintf("INTERVAL %s %s", m[1], unit), true
}

// datasetRule decodes one dataset rule.
func (o *olcParser) datasetRule(item field) {
	r := DatasetRule{Line: item.val.Line, Col: item.val.Column, Severity: "error"}
	kinds := []string{"sql", "unique", "null_ratio", "row_count_between"}
	var body []field
	for _, h := range o.fields(item.val, item.path, append(append([]string{"must_be_between", "must_be_less_than", "must_be_greater_than"}, ruleMeta...), kinds...), nil, nil) {
		switch h.name {
		case "name":
			r.Name = o.d.str(h)
		case "severity":
			r.Severity = o.severity(h, false)
		case "phase":
			if o.d.enum(h, "phase", "pre", "post") == "pre" {
				o.d.fail(h.key, h.path, "a dataset rule judges the good rows after the split: phase pre does not apply")
			}
		case "category", "description":
		case "must_be_between":
			bs := o.d.items(h)
			if len(bs) != 2 {
				o.d.fail(h.val, h.path, "must_be_between needs [min, max]")
				continue
			}
			r.Min, r.Max = o.number(bs[0]), o.number(bs[1])
		case "must_be_greater_than":
			r.Min, r.MinOpen = o.number(h), true
		case "must_be_less_than":
			r.Max, r.MaxOpen = o.number(h), true
		default:
			body = append(body, h)
		}
	}
	if len(body) != 1 {
		if item.val.Kind == yaml.MappingNode {
			o.d.fail(item.val, item.path, "a dataset rule has one of %s: found %s", strings.Join(kinds, ", "), fieldNames(body))
		}
		return
	}
	h := body[0]
	r.Kind = h.name
	if h.name != "sql" && (r.Min != "" || r.Max != "") {
		o.d.fail(item.val, item.path, "must_be_* bounds apply to a sql: dataset rule; %s has its own", h.name)
	}
	switch h.name {
	case "sql":
		r.SQL = o.d.str(h)
		if r.Name == "" {
			o.d.fail(item.val, item.path, "an OLC sql dataset rule needs name:")
		}
	case "unique":
		if h.val.Kind == yaml.MappingNode {
			for _, g := range o.fields(h.val, h.path, []string{"field", "fields", "columns", "name", "severity", "category", "description"}, nil, nil) {
				switch g.name {
				case "field", "fields", "columns":
					r.Columns = append(r.Columns, o.d.strs(g)...)
				case "name":
					r.Name = o.d.str(g)
				case "severity":
					r.Severity = o.severity(g, false)
				}
			}
		} else {
			r.Columns = o.d.strs(h)
		}
		if len(r.Columns) == 0 {
			o.d.fail(h.key, h.path, "unique needs a field or a list of fields")
			return
		}
	case "null_ratio", "row_count_between":
		args := map[string][]string{"null_ratio": {"field", "max"}, "row_count_between": {"min", "max"}}[h.name]
		for _, g := range o.fields(h.val, h.path, append(args, "name", "severity", "category", "description"), nil, nil) {
			switch g.name {
			case "field":
				r.Columns = []string{o.d.str(g)}
			case "min":
				r.Min = o.number(g)
			case "max":
				r.Max = o.number(g)
			case "name":
				r.Name = o.d.str(g)
			case "severity":
				r.Severity = o.severity(g, false)
			}
		}
		if h.name == "null_ratio" && (len(r.Columns) == 0 || r.Max == "") {
			o.d.fail(h.key, h.path, "null_ratio needs field: and max:")
			return
		}
		if h.name == "row_count_between" && r.Min == "" && r.Max == "" {
			o.d.fail(h.key, h.path, "row_count_between needs min:, max: or both")
			return
		}
	}
	if r.Name == "" {
		r.Name = r.Kind + "(" + strings.Join(r.Columns, ", ") + ")"
	}
	o.c.DatasetRules = append(o.c.DatasetRules, r)
}

// quarantine decodes quarantine: weir's quarantine is <sink>__quarantine
// with _weir_reason, always on.
func (o *olcParser) quarantine(g field) {
	refused := map[string]string{
		"target":                "bad rows go to <sink>__quarantine in the sink's connection",
		"table":                 "bad rows go to <sink>__quarantine in the sink's connection",
		"location":              "bad rows go to <sink>__quarantine in the sink's connection",
		"format":                "the quarantine table has the sink's format",
		"notifications":         "no notifications",
		"notifications_enabled": "no notifications",
		"strict_notifications":  "no notifications",
	}
	for _, h := range o.fields(g.val, g.path, []string{"enabled", "include_error_reason", "fail_on_quarantine", "write_mode"}, nil, refused) {
		switch h.name {
		case "enabled":
			if !o.d.boolean(h) {
				o.unsupported(h, "weir always quarantines the rows that break the contract (enabled: false)")
			}
		case "include_error_reason":
			if !o.d.boolean(h) {
				o.unsupported(h, "every quarantined row carries _weir_reason (include_error_reason: false)")
			}
		case "fail_on_quarantine":
			if o.d.boolean(h) {
				o.c.MaxBadRatio = 0
			}
		case "write_mode":
			if o.d.enum(h, "write_mode", "append", "overwrite") == "overwrite" {
				o.unsupported(h, "the quarantine is appended to (a replace model replaces it); write_mode: overwrite")
			}
		}
	}
}

// materialization decodes materialization: and primary_key.
func (o *olcParser) materialization(g field, pk, nk []string) {
	m := &Materialization{Strategy: "append", Key: pk, Line: g.key.Line, Col: g.key.Column}
	refused := map[string]string{
		"partition_by":              "the sink's partitioning is its own",
		"cluster_by":                "the sink's clustering is its own",
		"reprocess_policy":          "reprocessing is a reset (weir reset --task)",
		"reprocess_date_column":     "reprocessing is a reset (weir reset --task)",
		"target_path":               "weir writes the model's sink:",
		"location":                  "weir writes the model's sink:",
		"format":                    "the sink connection decides the format",
		"fact":                      "fact semantics are not modelled",
		"soft_delete_column":        "no soft deletes",
		"soft_delete_value":         "no soft deletes",
		"soft_delete_time_column":   "no soft deletes",
		"soft_delete_reason_column": "no soft deletes",
		"table_properties":          "table properties are not passed through",
		"compaction":                "no compaction settings",
		"unknown_member":            "no unknown-member rows",
		"scd2":                      "",
	}
	delete(refused, "scd2")
	var scd field
	for _, h := range o.fields(g.val, g.path, []string{"strategy", "merge_dedup_guard", "scd2"}, nil, refused) {
		switch h.name {
		case "strategy":
			m.Strategy = o.d.enum(h, "strategy", "append", "merge", "overwrite", "scd2")
			if m.Strategy == "merge" && len(pk) == 0 {
				o.d.fail(h.val, h.path, "strategy merge needs primary_key: (the columns that identify a row)")
			}
		case "merge_dedup_guard":
			if !o.d.boolean(h) {
				o.unsupported(h, "weir always keeps the last row of each key in a merge batch (merge_dedup_guard: false)")
			}
		case "scd2":
			scd = h
		}
	}
	switch {
	case m.Strategy == "scd2" && scd.val == nil:
		o.d.fail(g.key, g.path, "strategy scd2 needs scd2: {timestamp_field, effective_from, effective_to, current_flag, …}")
	case m.Strategy == "scd2":
		key := nk // the business key: natural_key, else primary_key
		if len(key) == 0 {
			key = pk
		}
		m.SCD2 = o.scd2(scd, key)
	case scd.val != nil:
		o.d.fail(scd.key, scd.path, "scd2: is used only by strategy: scd2")
	}
	o.c.Materialization = m
}

// sqlIdent quotes an identifier for DuckDB (as duck.Ident).
func sqlIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// scd2 decodes materialization.scd2 (both spellings OLC documents).
func (o *olcParser) scd2(g field, keys []string) *SCD2 {
	s := &SCD2{}
	names := map[string]*string{
		"timestamp_field": &s.Timestamp, "effective_from": &s.From, "effective_from_field": &s.From,
		"effective_to": &s.To, "effective_to_field": &s.To, "current_flag": &s.Current, "current_flag_field": &s.Current,
		"version_column": &s.Version, "effective_from_default": &s.FromDefault, "effective_to_default": &s.ToDefault,
	}
	allowed := []string{"business_key", "track_columns", "hash_columns"}
	for k := range names {
		allowed = append(allowed, k)
	}
	for _, h := range o.fields(g.val, g.path, allowed, nil, nil) {
		switch h.name {
		case "business_key":
			s.BusinessKey = o.d.strs(h)
		case "track_columns", "hash_columns":
			s.Track = o.d.strs(h)
		default:
			*names[h.name] = o.d.str(h)
		}
	}
	if len(s.BusinessKey) == 0 {
		s.BusinessKey = keys
	}
	var missing []string
	for name, v := range map[string]string{"business_key (or natural_key / primary_key)": strings.Join(s.BusinessKey, ""),
		"timestamp_field": s.Timestamp, "effective_from": s.From, "effective_to": s.To, "current_flag": s.Current} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		o.d.fail(g.key, g.path, "scd2 needs %s", strings.Join(missing, ", "))
		return nil
	}
	return s
}

// Generated are the columns the scd2 materialization writes, which the
// batch does not have.
func (s *SCD2) Generated() []string {
	out := []string{s.From, s.To, s.Current}
	if s.Version != "" {
		out = append(out, s.Version)
	}
	return out
}

// onlyKeys reports whether every key of mapping n is one of keys.
func onlyKeys(n *yaml.Node, keys []string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !slices.Contains(keys, n.Content[i].Value) {
			return false
		}
	}
	return true
}
