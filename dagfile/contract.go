package dagfile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Contract is the schema and the rules a model's or stream's output must
// meet. Rows that break a rule go to <sink>__quarantine with a _weir_reason;
// the task fails when the share of bad rows in a batch exceeds MaxBadRatio.
type Contract struct {
	File        string // the contract file, when contract: names one; "" when inline
	Columns     []Column
	Rules       []ContractRule
	MaxBadRatio float64 // 0..1; 1 (the default) never fails the task

	// From an Open Lakehouse Contract (Format FormatOLC, dagfile/olc.go):
	Format             string           // FormatWeir or FormatOLC
	Transforms         []Transform      // in order; Post: after the good/bad split
	DatasetRules       []DatasetRule    // judged over the good rows, never quarantine
	FailOnDatasetError bool             // a failed error-severity dataset rule fails the run
	Materialization    *Materialization // the sink's strategy and key, applied to the model
}

// The contract formats.
const (
	FormatWeir = "weir"
	FormatOLC  = "olc"
)

// Pre and Post split the transformations by phase, in order.
func (c *Contract) Pre() []Transform  { return c.phase(false) }
func (c *Contract) Post() []Transform { return c.phase(true) }

func (c *Contract) phase(post bool) []Transform {
	var out []Transform
	for _, t := range c.Transforms {
		if t.Post == post {
			out = append(out, t)
		}
	}
	return out
}

// Column is a column the output must have.
type Column struct {
	Name     string
	Type     string // a DuckDB type (BIGINT, DECIMAL(12,2), VARCHAR, TIMESTAMP…), after DuckType; "" keeps the output's type
	Required bool   // the column must be present and not null
	Line     int    // position of the column in its file (Contract.File, else the dagfile)
	Col      int
}

// typeNames are the type names whose meaning in contracts (the Open
// Lakehouse Contract's, and what most users mean) is not DuckDB's: int,
// integer and float are 64-bit here; 32-bit only when asked (int32,
// float32, or DuckDB's INT4, REAL).
var typeNames = map[string]string{
	"int": "BIGINT", "integer": "BIGINT", "long": "BIGINT", "int64": "BIGINT", "bigint": "BIGINT",
	"int32": "INTEGER", "short": "SMALLINT", "int16": "SMALLINT", "byte": "TINYINT", "int8": "TINYINT",
	"float": "DOUBLE", "double": "DOUBLE", "float64": "DOUBLE", "number": "DOUBLE", "float32": "FLOAT",
	"string": "VARCHAR", "text": "VARCHAR", "varchar": "VARCHAR",
	"bool": "BOOLEAN", "boolean": "BOOLEAN", "binary": "BLOB",
	"date": "DATE", "timestamp": "TIMESTAMP", "timestamptz": "TIMESTAMPTZ",
}

// DuckType is the DuckDB type of a contract type name: the names of
// typeNames (any case) are mapped, decimal(p,s) and every other name are
// DuckDB's own.
func DuckType(name string) string {
	if t, ok := typeNames[strings.ToLower(strings.TrimSpace(name))]; ok {
		return t
	}
	return strings.TrimSpace(name)
}

// The contract rule kinds.
const (
	RuleNotNull        = "not_null"        // Columns must not be null
	RuleUnique         = "unique"          // Columns (together) are unique within the batch; a NULL key is distinct unless NullsEqual
	RuleAcceptedValues = "accepted_values" // Column is one of Values
	RuleRange          = "range"           // Min <= Column <= Max
	RuleRegex          = "regex"           // Column matches Pattern (RE2)
	RuleSQL            = "sql"             // SQL, a boolean expression, is true
)

var ruleKinds = []string{RuleNotNull, RuleUnique, RuleAcceptedValues, RuleRange, RuleRegex, RuleSQL}

// ContractRule is one rule of a contract; Kind says which fields are set.
type ContractRule struct {
	Kind       string
	Name       string   // optional label, used in _weir_reason (default: the kind and column)
	Columns    []string // not_null, unique
	NullsEqual bool     // unique with nulls_distinct: false: NULL keys are duplicates of each other
	Column     string   // accepted_values, range, regex; an sql rule of one column (OLC shorthands compiled to sql)
	Values     []string // accepted_values
	Min        string   // range lower bound as written ("" when open); a number or a literal
	Max        string   // range upper bound as written ("" when open)
	Pattern    string   // regex
	SQL        string   // sql: true for a good row
	Post       bool     // OLC phase: post — judged after the post transformations
	Line       int      // position of the rule in its file
	Col        int
}

var contractKeys = []string{"columns", "rules", "max_bad_ratio"}

// contract decodes contract: a path (relative to the dagfile) or a mapping.
func (p *parser) contract(f field) *Contract {
	if f.val.Kind == yaml.MappingNode {
		return p.contractBody(&p.d, f.val, f.path, "")
	}
	rel := p.d.str(f)
	if rel == "" {
		return nil
	}
	path := p.relPath(rel)
	data, err := os.ReadFile(path)
	if err != nil {
		p.d.fail(f.val, f.path, "contract file %q not found (looked for %s; paths are relative to the dagfile)", rel, path)
		return nil
	}
	sub := &decoder{file: path, errs: &p.errs}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		p.d.fail(f.val, f.path, "contract file %s is not a YAML mapping: %v", path, err)
		return nil
	}
	if IsOLC(path) {
		return olcContract(sub, doc.Content[0], path)
	}
	return p.contractBody(sub, doc.Content[0], "", path)
}

// contractBody decodes the columns, rules and max_bad_ratio of a contract.
func (p *parser) contractBody(d *decoder, n *yaml.Node, path, file string) *Contract {
	c := &Contract{File: file, MaxBadRatio: 1, Format: FormatWeir}
	for _, g := range d.fields(n, path, contractKeys) {
		switch g.name {
		case "columns":
			c.Columns = columns(d, g)
		case "rules":
			for _, item := range d.items(g) {
				if r, ok := rule(d, item); ok {
					c.Rules = append(c.Rules, r)
				}
			}
		case "max_bad_ratio":
			c.MaxBadRatio = ratio(d, g)
		}
	}
	checkRuleColumns(d, c, n, path)
	return c
}

// ratio decodes a number between 0 and 1.
func ratio(d *decoder, g field) float64 {
	s, ok := d.scalar(g, "a ratio between 0 and 1")
	v, err := strconv.ParseFloat(s, 64)
	if ok && (err != nil || v < 0 || v > 1) {
		d.fail(g.val, g.path, "bad max_bad_ratio %q: use a number between 0 and 1, e.g. 0.01", s)
		return 1
	}
	return v
}

var columnKeys = []string{"name", "type", "required"}

// columns decodes the column list.
func columns(d *decoder, g field) []Column {
	var out []Column
	seen := map[string]bool{}
	for _, item := range d.items(g) {
		c := Column{Line: item.val.Line, Col: item.val.Column}
		for _, h := range d.fields(item.val, item.path, columnKeys) {
			switch h.name {
			case "name":
				c.Name = d.str(h)
			case "type":
				c.Type = DuckType(d.str(h))
			case "required":
				c.Required = d.boolean(h)
			}
		}
		switch {
		case c.Name == "" && item.val.Kind == yaml.MappingNode:
			d.fail(item.val, item.path, "a column needs name:")
		case seen[c.Name]:
			d.fail(item.val, item.path, "column %q is listed twice", c.Name)
		case c.Name != "":
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	return out
}

var ruleKeys = append([]string{"name"}, ruleKinds...)

// rule decodes one rule: a mapping with one rule kind key (and a name).
func rule(d *decoder, item field) (ContractRule, bool) {
	r := ContractRule{Line: item.val.Line, Col: item.val.Column}
	var kinds []field
	for _, h := range d.fields(item.val, item.path, ruleKeys) {
		if h.name == "name" {
			r.Name = d.str(h)
		} else {
			kinds = append(kinds, h)
		}
	}
	if len(kinds) != 1 {
		if item.val.Kind == yaml.MappingNode {
			d.fail(item.val, item.path, "a rule has exactly one of %s: found %s", strings.Join(ruleKinds, ", "), fieldNames(kinds))
		}
		return r, false
	}
	r.Kind = kinds[0].name
	return r, ruleBody(d, &r, kinds[0])
}

// ruleBody decodes the value of a rule kind key.
func ruleBody(d *decoder, r *ContractRule, h field) bool {
	switch {
	case h.name == RuleUnique && h.val.Kind == yaml.MappingNode:
		return uniqueArgs(d, r, h)
	case h.name == RuleNotNull || h.name == RuleUnique:
		r.Columns = d.strs(h)
		return len(r.Columns) > 0
	case h.name == RuleSQL:
		r.SQL = d.str(h)
		return r.SQL != ""
	}
	allowed := map[string][]string{RuleAcceptedValues: {"column", "values"},
		RuleRange: {"column", "min", "max"}, RuleRegex: {"column", "pattern"}}[h.name]
	fs := map[string]field{}
	for _, g := range d.fields(h.val, h.path, allowed) {
		fs[g.name] = g
	}
	if h.val.Kind != yaml.MappingNode {
		return false
	}
	if g, ok := fs["column"]; ok {
		r.Column = d.str(g)
	} else {
		d.fail(h.key, h.path, "%s needs column:", h.name)
	}
	return ruleArgs(d, r, h, fs) && r.Column != ""
}

// ruleArgs decodes the arguments of accepted_values, range and regex.
func ruleArgs(d *decoder, r *ContractRule, h field, fs map[string]field) bool {
	switch h.name {
	case RuleAcceptedValues:
		if g, ok := fs["values"]; ok {
			r.Values = d.strs(g)
		} else {
			d.fail(h.key, h.path, "accepted_values needs values: [a, b, …]")
		}
		return len(r.Values) > 0
	case RuleRange:
		return rangeArgs(d, r, h, fs)
	}
	g, ok := fs["pattern"]
	if !ok {
		d.fail(h.key, h.path, "regex needs pattern:")
		return false
	}
	r.Pattern = d.str(g)
	if _, err := regexp.Compile(r.Pattern); err != nil {
		d.fail(g.val, g.path, "bad pattern %q: %v", r.Pattern, err)
		return false
	}
	return r.Pattern != ""
}

// uniqueArgs decodes unique: {columns: [a, b], nulls_distinct: false}.
func uniqueArgs(d *decoder, r *ContractRule, h field) bool {
	for _, g := range d.fields(h.val, h.path, []string{"columns", "nulls_distinct"}) {
		switch g.name {
		case "columns":
			r.Columns = d.strs(g)
		case "nulls_distinct":
			r.NullsEqual = !d.boolean(g)
		}
	}
	if len(r.Columns) == 0 {
		d.fail(h.key, h.path, "unique needs columns: [a, b, …]")
		return false
	}
	return true
}

// rangeArgs decodes min and max (at least one).
func rangeArgs(d *decoder, r *ContractRule, h field, fs map[string]field) bool {
	if g, ok := fs["min"]; ok {
		r.Min = d.str(g)
	}
	if g, ok := fs["max"]; ok {
		r.Max = d.str(g)
	}
	if r.Min == "" && r.Max == "" {
		d.fail(h.key, h.path, "range needs min:, max: or both")
		return false
	}
	return true
}

// checkRuleColumns reports rules on columns the contract does not list
// (only when it lists columns).
func checkRuleColumns(d *decoder, c *Contract, n *yaml.Node, path string) {
	if len(c.Columns) == 0 {
		return
	}
	var names []string
	for _, col := range c.Columns {
		names = append(names, col.Name)
	}
	for _, r := range c.Rules {
		for _, col := range append(r.Columns, r.Column) {
			if col != "" && !slicesContains(names, col) {
				d.failAt(pos{r.Line, r.Col}, join(path, "rules"), RuleFormat,
					"rule %s names column %q, which is not in columns%s", r.Kind, col, didYouMean(col, names))
			}
		}
	}
}

// fieldNames lists the keys of fs for a message ("none" when empty).
func fieldNames(fs []field) string {
	if len(fs) == 0 {
		return "none"
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return strings.Join(names, " and ")
}

// LoadContract reads one contract file (weir's format, or OLC when it is
// named *.olc.yaml) on its own, as a task's contract: would read it.
func LoadContract(path string) (*Contract, error) {
	p := &parser{f: &File{Path: path, Dir: filepath.Dir(path)}}
	p.d = decoder{file: path, errs: &p.errs}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("contract file %s is not a YAML mapping: %v", path, err)
	}
	var c *Contract
	if IsOLC(path) {
		c = olcContract(&p.d, doc.Content[0], path)
	} else {
		c = p.contractBody(&p.d, doc.Content[0], "", path)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return c, nil
}
