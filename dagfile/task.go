package dagfile

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Kind is what a task does.
type Kind string

// The task kinds.
const (
	KindTransfer Kind = "transfer" // copy whole tables, like `weir transfer`
	KindModel    Kind = "model"    // incremental SQL over a source table, into a sink
	KindStream   Kind = "stream"   // events from a stream source into a sink
)

// Task is one node of the DAG: exactly one of Transfer, Model and Stream is set.
type Task struct {
	Name        string
	Kind        Kind
	Description string
	Transfer    *Transfer
	Model       *Model
	Stream      *Stream
	Contract    *Contract // model and stream tasks only; nil when none
	Deps        []string  // explicit deps:, sorted
	Upstream    []string  // explicit deps and lineage, sorted
	Downstream  []string  // the tasks whose Upstream holds this one, sorted
	Tags        []string  // defaults tags and the task's own, sorted
	Retries     int
	RetryDelay  time.Duration
	Timeout     time.Duration // 0: none
	Pool        string
	Backfill    *Backfill      // backfill: the generated fan-out of weir backfill and weir worker; nil when none
	Deploy      Deploy         // the file's deploy: with the task's own on top
	Line, Col   int            // position of the task's key
	at          map[string]pos // positions of its fields ("model.sink")
	sinkAt      string         // the at key of the field that names the sink
}

// Pos returns the line and column of a field of the task, given as a dotted
// path below the task ("model.sink", "deps"), or of the task's key.
func (t *Task) Pos(key string) (line, col int) {
	if p, ok := t.at[key]; ok {
		return p.line, p.col
	}
	return t.Line, t.Col
}

// Sinks returns the tables the task writes (one, except for a multi-table transfer).
func (t *Task) Sinks() []TableAddr {
	switch {
	case t.Transfer != nil:
		return t.Transfer.sinks
	case t.Model != nil && !t.Model.Sink.IsZero():
		return []TableAddr{t.Model.Sink}
	case t.Stream != nil && !t.Stream.Sink.IsZero():
		return []TableAddr{t.Stream.Sink}
	}
	return nil
}

// Sink returns the first table the task writes, or the zero address.
func (t *Task) Sink() TableAddr {
	if s := t.Sinks(); len(s) > 0 {
		return s[0]
	}
	return TableAddr{}
}

// Sources returns the tables the task reads: a model's source(s) (sorted by
// view name), a transfer's from tables, a stream's source table (table:,
// on a connection). An event stream reads no table.
func (t *Task) Sources() []TableAddr {
	switch {
	case t.Stream != nil && t.Stream.IsTableSource() && t.Stream.SourceConn != "":
		return []TableAddr{t.Stream.TableSource()}
	case t.Transfer != nil:
		return t.Transfer.sources
	case t.Model != nil && !t.Model.Source.IsZero():
		return []TableAddr{t.Model.Source}
	case t.Model != nil:
		var out []TableAddr
		for _, name := range sortedKeys(t.Model.Sources) {
			out = append(out, t.Model.Sources[name])
		}
		return out
	}
	return nil
}

// Connections returns the names of the connections the task uses (the
// claim store of its backfill: included), sorted.
func (t *Task) Connections() []string {
	var out []string
	for _, a := range append(t.Sources(), t.Sinks()...) {
		out = append(out, a.Conn)
	}
	if t.Transfer != nil {
		out = append(out, t.Transfer.From, t.Transfer.To)
	}
	if t.Stream != nil && t.Stream.SourceConn != "" {
		out = append(out, t.Stream.SourceConn)
	}
	if t.Backfill != nil {
		out = append(out, t.Backfill.Claims)
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// Vars returns the environment variables the task needs: those referenced by
// the connections it uses and by a stream source URL, sorted.
func (f *File) Vars(t *Task) []string {
	var out []string
	for _, name := range t.Connections() {
		if c := f.Connections[name]; c != nil {
			out = append(out, c.Vars...)
		}
	}
	if t.Stream != nil {
		out = append(out, t.Stream.Vars...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var taskKeys = []string{"transfer", "model", "stream", "description", "deps", "tags",
	"retries", "retry_delay", "timeout", "pool", "contract", "deploy", "backfill"}

var kindKeys = []string{"transfer", "model", "stream"}

// tasks decodes the tasks mapping.
func (p *parser) tasks(f field, root *yaml.Node) {
	if f.val == nil {
		p.d.fail(root, "tasks", "tasks is required: add at least one transfer, model or stream task")
		return
	}
	for _, tf := range p.d.fields(f.val, f.path, nil) {
		if p.d.name(tf.key, tf.path, "task") {
			t := p.task(tf)
			p.f.Tasks = append(p.f.Tasks, t)
			p.f.byName[t.Name] = t
		}
	}
	slices.SortFunc(p.f.Tasks, func(a, b *Task) int { return strings.Compare(a.Name, b.Name) })
	if n := resolve(f.val); n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		p.d.fail(f.val, f.path, "no tasks: add at least one transfer, model or stream task")
	}
}

// task decodes one task.
func (p *parser) task(tf field) *Task {
	def := p.f.Defaults
	t := &Task{Name: tf.name, Line: tf.key.Line, Col: tf.key.Column, at: map[string]pos{},
		Retries: def.Retries, RetryDelay: def.RetryDelay, Timeout: def.Timeout, Pool: def.Pool}
	var kinds []field
	var contract, backfill field
	var own Deploy
	for _, g := range p.d.fields(tf.val, tf.path, taskKeys) {
		t.at[g.name] = nodePos(g.val)
		switch {
		case slicesContains(kindKeys, g.name):
			kinds = append(kinds, g)
		case g.name == "contract":
			contract = g
		case g.name == "backfill":
			backfill = g
		case g.name == "deploy":
			p.deploy(g, taskDeployKeys, &own)
		default:
			p.taskSetting(t, g)
		}
	}
	t.Tags = mergeTags(def.Tags, t.Tags)
	t.Deploy = mergeDeploy(p.f.Deploy, own)
	p.kind(t, tf, kinds)
	p.taskContract(t, contract)
	if backfill.val != nil {
		p.backfill(t, backfill)
	}
	return t
}

// taskSetting decodes the task keys other than the kind and the contract.
func (p *parser) taskSetting(t *Task, g field) {
	switch g.name {
	case "description":
		t.Description = p.d.str(g)
	case "deps":
		t.Deps = p.d.strs(g)
		slices.Sort(t.Deps)
		t.Deps = slices.Compact(t.Deps)
	case "tags":
		t.Tags = p.tags(g)
	case "retries":
		t.Retries = p.d.integer(g, 0)
	case "retry_delay":
		t.RetryDelay = p.d.duration(g)
	case "timeout":
		t.Timeout = p.d.duration(g)
	case "pool":
		t.Pool = p.d.str(g)
	}
}

func mergeTags(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// kind decodes the one transfer, model or stream mapping of a task.
func (p *parser) kind(t *Task, tf field, kinds []field) {
	if len(kinds) == 0 {
		if resolve(tf.val).Kind == yaml.MappingNode {
			p.d.fail(tf.key, tf.path, "a task needs one of transfer:, model: or stream:")
		}
		return
	}
	if len(kinds) > 1 {
		p.d.fail(kinds[1].key, kinds[1].path, "a task has exactly one of transfer, model, stream: found %s and %s", kinds[0].name, kinds[1].name)
	}
	k := kinds[0]
	t.Kind = Kind(k.name)
	switch t.Kind {
	case KindTransfer:
		t.Transfer = p.transfer(t, k)
	case KindModel:
		t.Model = p.model(t, k)
	case KindStream:
		t.Stream = p.stream(t, k)
	}
}

// taskContract decodes contract: for model and stream tasks.
func (p *parser) taskContract(t *Task, f field) {
	if f.val == nil {
		return
	}
	if t.Kind == KindTransfer {
		p.d.fail(f.key, f.path, "contract is allowed on model and stream tasks only (the transfer copies tables as they are)")
		return
	}
	t.Contract = p.contract(f)
	if c := t.Contract; c != nil && c.Format == FormatOLC {
		p.olcTask(t, f, c)
	}
}

// olcTask applies an OLC contract's materialization to its model, and
// refuses what a stream task cannot do with one.
func (p *parser) olcTask(t *Task, f field, c *Contract) {
	at := pos{f.val.Line, f.val.Column}
	if t.Kind == KindStream {
		if len(c.Transforms) > 0 {
			p.d.failAt(at, f.path, RuleOLCUnsupported, "contract %s: transformations are supported on model tasks only (a stream's events are flattened, checked and written as they come); transform in a model reading the stream's sink", c.File)
		}
		if len(c.DatasetRules) > 0 {
			p.d.failAt(at, f.path, RuleOLCUnsupported, "contract %s: dataset_rules are supported on model tasks only (a stream has no whole dataset); check them in a model reading the stream's sink", c.File)
		}
		for _, r := range c.Rules {
			if r.Post {
				p.d.failAt(pos{r.Line, r.Col}, f.path, RuleOLCUnsupported, "contract %s: a phase post rule is supported on model tasks only (a stream has no post transformations)", c.File)
			}
		}
		if c.Materialization != nil && c.Materialization.Strategy != "" {
			p.d.failAt(at, f.path, RuleOLCUnsupported, "contract %s: materialization is supported on model tasks only; a stream's mode: decides how it writes", c.File)
		}
		return
	}
	m, mat := t.Model, c.Materialization
	if m == nil {
		return
	}
	for _, tr := range c.Transforms {
		if tr.Reference != "" && !slices.Contains(m.Lookup, tr.Reference) {
			p.d.failAt(pos{tr.Line, tr.Col}, f.path, RuleFormat, "contract %s: %s reference %q is not a lookup of the model: add it to the model's sources: and lookup: (a reference table is read whole each run)%s",
				c.File, tr.Op, tr.Reference, didYouMean(tr.Reference, m.Lookup))
		}
	}
	if mat == nil {
		return
	}
	mode := map[string]string{"append": "append", "merge": "upsert", "overwrite": "replace", "scd2": "upsert"}[mat.Strategy]
	_, modeSet := t.at["model.mode"]
	switch {
	case mode == "":
	case modeSet && m.Mode != mode:
		p.d.fail(f.val, f.path, "contract %s: materialization.strategy %s means mode %s, but the model says mode: %s; remove one", c.File, mat.Strategy, mode, m.Mode)
	default:
		m.Mode = mode
	}
	if mat.SCD2 != nil { // one row per version: the business key and the version's start
		if _, keySet := t.at["model.key"]; keySet {
			p.d.fail(f.val, f.path, "contract %s: strategy scd2 keys the sink by its business key and %s; remove the model's key:", c.File, mat.SCD2.From)
		}
		m.Key = append(slices.Clone(mat.SCD2.BusinessKey), mat.SCD2.From)
		return
	}
	if m.Mode == "upsert" && len(mat.Key) > 0 {
		if _, keySet := t.at["model.key"]; keySet && !slices.Equal(m.Key, mat.Key) {
			p.d.fail(f.val, f.path, "contract %s: primary_key [%s] differs from the model's key: [%s]; remove one", c.File, strings.Join(mat.Key, ", "), strings.Join(m.Key, ", "))
		}
		m.Key = mat.Key
	}
}

// sub decodes the fields of a kind mapping, recording their positions.
func (p *parser) sub(t *Task, k field, allowed []string) map[string]field {
	fs := map[string]field{}
	for _, g := range p.d.fields(k.val, k.path, allowed) {
		fs[g.name] = g
		t.at[k.name+"."+g.name] = nodePos(g.val)
	}
	return fs
}

// conn checks that field g names a defined connection and returns the name.
func (p *parser) conn(g field) string {
	name := p.d.str(g)
	if name == "" || p.connKnown(g.val, g.path, name) {
		return name
	}
	return ""
}

// connKnown reports an unknown connection name (rule DAG-002).
func (p *parser) connKnown(n *yaml.Node, path, name string) bool {
	if _, ok := p.f.Connections[name]; ok {
		return true
	}
	defined := sortedKeys(p.f.Connections)
	msg := "unknown connection %q"
	if len(defined) == 0 {
		p.d.failAt(nodePos(n), path, RuleUnknownConn, msg+": define it under connections:", name)
		return false
	}
	p.d.failAt(nodePos(n), path, RuleUnknownConn, msg+"%s", name, strings.Replace(didYouMean(name, defined), "allowed:", "defined:", 1))
	return false
}

// addr decodes a conn:schema.table field and checks its connection.
func (p *parser) addr(g field) TableAddr {
	s := p.d.str(g)
	if s == "" {
		return TableAddr{}
	}
	a, err := ParseTableAddr(s)
	if err != nil {
		p.d.fail(g.val, g.path, "%v", err)
		return TableAddr{}
	}
	if !p.connKnown(g.val, g.path, a.Conn) {
		return TableAddr{}
	}
	return a
}

// require reports a missing key of a kind mapping.
func (p *parser) require(fs map[string]field, k field, key, what string) bool {
	if _, ok := fs[key]; ok {
		return true
	}
	if resolve(k.val).Kind == yaml.MappingNode {
		p.d.fail(k.key, k.path, "%s needs %s: (%s)", k.name, key, what)
	}
	return false
}

// exclusive reports two keys that cannot be set together.
func (p *parser) exclusive(fs map[string]field, a, b, hint string) bool {
	fa, okA := fs[a]
	_, okB := fs[b]
	if okA && okB {
		p.d.fail(fa.key, fa.path, "%s and %s are exclusive: %s", a, b, hint)
		return true
	}
	return false
}

// keyCols decodes a key or primary_key field: one column or a list.
func (p *parser) keyCols(fs map[string]field, name string) []string {
	if g, ok := fs[name]; ok {
		return p.d.strs(g)
	}
	return nil
}

// onlyWith reports a key set while the mode does not use it.
func (p *parser) onlyWith(fs map[string]field, key, modeKey, mode string, modes ...string) {
	if g, ok := fs[key]; ok && mode != "" && !slicesContains(modes, mode) {
		p.d.fail(g.key, g.path, "%s is used only by %s %s (%s is %s)", key, modeKey, strings.Join(modes, " or "), modeKey, mode)
	}
}
