package dagfile

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
)

// Transfer is a transfer task: every option of `weir transfer`.
type Transfer struct {
	From       string   // source connection
	Table      string   // one source table: schema.table, or an object path for file/object stores
	Tables     []string // several source tables (instead of Table)
	Schema     string   // destination schema for the tables without dest_table
	To         string   // destination connection
	DestTable  string   // destination table for Table (default: Table, or Schema + its name)
	Mode       string   // replace (default) | append | merge | log_based
	Cursor     string   // append/merge watermark column (default: the integer primary key)
	PrimaryKey []string // overrides the probed primary key
	Parallel   int      // pipes; 0: automatic
	ChunkBytes int64    // bytes per chunk; 0: automatic (4 MiB)
	Changelog  bool     // log_based: append every change with _weir_op
	sources    []TableAddr
	sinks      []TableAddr
}

// Transfer modes.
var transferModes = []string{"replace", "append", "merge", "log_based"}

var transferKeys = []string{"from", "table", "tables", "schema", "to", "dest_table", "mode",
	"cursor", "primary_key", "parallel", "chunk_bytes", "changelog"}

// transfer decodes a transfer mapping.
func (p *parser) transfer(t *Task, k field) *Transfer {
	fs := p.sub(t, k, transferKeys)
	x := &Transfer{Mode: "replace", PrimaryKey: p.keyCols(fs, "primary_key")}
	p.transferFields(x, fs)
	if p.require(fs, k, "from", "the source connection") {
		x.From = p.conn(fs["from"])
	}
	if p.require(fs, k, "to", "the destination connection") {
		x.To = p.conn(fs["to"])
		if c := p.f.Connections[x.To]; c != nil && slices.Contains(scheme.SourceOnly, c.Scheme()) {
			g := fs["to"]
			p.d.fail(g.val, g.path, "connection %q is a %s:// source: it cannot be written; name a database, object store or Iceberg connection", x.To, c.Scheme())
		}
	}
	p.transferTables(x, fs, k)
	p.onlyWith(fs, "cursor", "mode", x.Mode, "append", "merge")
	p.onlyWith(fs, "changelog", "mode", x.Mode, "log_based")
	p.transferAddrs(x, t)
	return x
}

// transferFields decodes the scalar options of a transfer.
func (p *parser) transferFields(x *Transfer, fs map[string]field) {
	for name, g := range fs {
		switch name {
		case "schema":
			x.Schema = p.d.str(g)
			if _, err := routes.ParseSourceSchema(x.Schema); x.Schema != "" && err != nil {
				p.d.fail(g.val, g.path, "bad schema name: %s", strings.TrimPrefix(err.Error(), routes.ErrBadInput.Error()+": "))
				x.Schema = ""
			}
		case "dest_table":
			x.DestTable = p.tableName(g)
		case "mode":
			x.Mode = p.d.enum(g, "mode", transferModes...)
		case "cursor":
			x.Cursor = p.d.str(g)
		case "parallel":
			x.Parallel = p.d.integer(g, 1)
		case "chunk_bytes":
			x.ChunkBytes = p.d.size(g)
		case "changelog":
			x.Changelog = p.d.boolean(g)
		}
	}
}

// transferTables decodes table or tables (exactly one) and dest_table.
func (p *parser) transferTables(x *Transfer, fs map[string]field, k field) {
	if p.exclusive(fs, "table", "tables", "use table: for one table, tables: for several") {
		return
	}
	if g, ok := fs["tables"]; ok {
		for _, item := range p.d.items(g) {
			if name := p.tableName(item); name != "" {
				x.Tables = append(x.Tables, name)
			}
		}
		if d, ok := fs["dest_table"]; ok {
			p.d.fail(d.key, d.path, "dest_table names one table: with tables:, set schema: for the destination schema")
		}
		return
	}
	if p.require(fs, k, "table", "the source table, schema.table; or tables: [a, b]") {
		x.Table = p.tableName(fs["table"])
	}
}

// tableName decodes a schema.table name field.
func (p *parser) tableName(g field) string {
	s := p.d.str(g)
	if s == "" {
		return ""
	}
	if err := checkTableName(s); err != nil {
		p.d.fail(g.val, g.path, "bad table name: %v", err)
		return ""
	}
	return s
}

// transferAddrs computes the tables a transfer reads and writes.
func (p *parser) transferAddrs(x *Transfer, t *Task) {
	names := x.Tables
	if x.Table != "" {
		names = []string{x.Table}
	}
	t.sinkAt = "transfer.to"
	if x.From == "" || x.To == "" {
		return
	}
	for _, name := range names {
		x.sources = append(x.sources, p.tableAddr(x.From, name))
		x.sinks = append(x.sinks, p.destAddr(x, name))
	}
}

// isObjectStore reports whether a connection's tables are object paths.
func (p *parser) isObjectStore(conn string) bool {
	c := p.f.Connections[conn]
	return c != nil && objectSchemes[c.Scheme()]
}

// tableAddr addresses a table of conn: an object path or schema.table.
func (p *parser) tableAddr(conn, name string) TableAddr {
	if p.isObjectStore(conn) {
		return objectAddr(conn, name)
	}
	schema, table, _ := cutSchema(name)
	return TableAddr{Conn: conn, Schema: schema, Table: table}
}

// destAddr is where a transfer writes source table name: routes.DestRef's
// rule, with the destination URL as far as it is known without the
// environment (a database written as ${VAR} leaves the sink unqualified:
// the connection's database).
func (p *parser) destAddr(x *Transfer, name string) TableAddr {
	if x.DestTable != "" {
		return p.tableAddr(x.To, x.DestTable)
	}
	base := name
	if p.isObjectStore(x.From) {
		base = baseName(name)
	} else if _, table, ok := cutSchema(name); ok {
		base = table
	}
	if c := p.f.Connections[x.To]; c != nil && x.Schema == "" {
		if _, ok := scheme.URLDatabase[c.Scheme()]; ok {
			src := p.tableAddr(x.From, name)
			dest := routes.TableRef{Name: base} // the database unknown here: the connection's
			if u, known := p.destURL(x.To); known {
				if d, err := routes.DestRef(u, routes.TableRef{Schema: src.Schema, Name: base}, routes.TableRef{}, ""); err == nil {
					dest = d // else a MySQL URL without a database: the run says so (exit 2)
				}
			}
			return TableAddr{Conn: x.To, Schema: dest.Schema, Table: dest.Name}
		}
	}
	if x.Schema == "" {
		return p.tableAddr(x.To, name)
	}
	return p.tableAddr(x.To, x.Schema+"."+base)
}

// destURL is a connection's URL as far as routes.DestRef needs it: the
// expanded one, or the text as written when its database is not a ${VAR}
// (a variable password or host does not hide it); false when unknown.
func (p *parser) destURL(conn string) (*routes.URL, bool) {
	c := p.f.Connections[conn]
	if c == nil {
		return nil, false
	}
	raw := c.URL()
	if raw == "" {
		raw = c.Raw
		scheme, rest, ok := strings.Cut(raw, "://")
		if !ok || strings.Contains(scheme, "${") {
			return nil, false
		}
		auth, path, _ := strings.Cut(rest, "/")
		if path, _, _ = strings.Cut(path, "?"); strings.Contains(path, "${") {
			return nil, false
		}
		raw = scheme + "://" + varRE.ReplaceAllString(auth, "x") + "/" + path
	}
	u, err := routes.ParseURL(raw)
	return u, err == nil
}

var varRE = regexp.MustCompile(`\$\{[^}]*\}`)

// ThisView is the view through which a model's SQL reads its own sink's
// rows (dbt's {{ this }}).
const ThisView = "this"

// Model is a model task: incremental SQL (DuckDB) over new source rows.
type Model struct {
	Source       TableAddr             // the one source, read as the view input
	Sources      map[string]TableAddr  // named sources, one view each (instead of Source)
	Lookup       []string              // names of sources read whole every run (tables a join looks up); no offsets
	LookupSpec   map[string]LookupSpec // by lookup name: the join key and what happens to unmatched rows
	Cursor       map[string]string     // cursor column by view name ("input" for source:); none: the source's default
	Sink         TableAddr
	Mode         string   // append (default) | upsert | replace
	Key          []string // upsert key columns
	SQL          string   // inline SQL
	SQLFile      string   // as written
	SQLPath      string   // SQLFile resolved against the dagfile's folder
	Start        string   // earliest (default) | latest | an offset
	MaxBatchRows int      // 0: no bound
	OnChange     string   // warn (default) | error | ignore
	// Independent: the SQL never matches rows of one source with rows of
	// another (a UNION ALL of per-source transforms), so several sources
	// may be read incrementally (rule MODEL-001 otherwise refuses it).
	Independent bool
	// Aggregate: the output is these measures over the SQL's rows, merged
	// by weir into the stored groups (nil: the SQL's rows as they are).
	Aggregate *Aggregate
}

var modelKeys = []string{"source", "sources", "lookup", "cursor", "sink", "mode", "key", "sql", "sql_file",
	"start", "max_batch_rows", "on_change", "independent", "aggregate"}

var viewRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// model decodes a model mapping.
func (p *parser) model(t *Task, k field) *Model {
	fs := p.sub(t, k, modelKeys)
	m := &Model{Mode: "append", Start: "earliest", OnChange: "warn", Key: p.keyCols(fs, "key")}
	p.modelFields(m, fs)
	p.modelSources(m, fs, k)
	p.modelLookup(m, fs)
	p.incrementalJoin(m, fs)
	p.modelCursor(m, fs)
	if p.require(fs, k, "sink", "the table it writes, connection:schema.table") {
		m.Sink = p.addr(fs["sink"])
	}
	t.sinkAt = "model.sink"
	p.modelSQL(m, fs, k)
	p.modelAggregate(m, fs)
	if _, ok := fs["key"]; !ok && m.Mode == "upsert" && m.Aggregate == nil {
		p.d.fail(fs["mode"].val, fs["mode"].path, "mode upsert needs key: (the columns that identify a row)")
	}
	p.onlyWith(fs, "key", "mode", m.Mode, "upsert")
	p.onlyWith(fs, "cursor", "mode", m.Mode, "append", "upsert")
	return m
}

// modelFields decodes the scalar options of a model.
func (p *parser) modelFields(m *Model, fs map[string]field) {
	for name, g := range fs {
		switch name {
		case "mode":
			m.Mode = p.d.enum(g, "mode", "append", "upsert", "replace")
		case "start":
			m.Start = p.start(g)
		case "max_batch_rows":
			m.MaxBatchRows = p.d.integer(g, 1)
		case "on_change":
			m.OnChange = p.d.enum(g, "on_change", "warn", "error", "ignore")
		case "independent":
			m.Independent = p.d.boolean(g)
		}
	}
}

// start decodes earliest | latest | a non-negative offset.
func (p *parser) start(g field) string {
	s := p.d.str(g)
	if n, err := strconv.ParseInt(s, 10, 64); s == "earliest" || s == "latest" || (err == nil && n >= 0) {
		return s
	}
	if s != "" {
		p.d.fail(g.val, g.path, "bad start %q: use earliest, latest or an offset (an integer ≥ 0)", s)
	}
	return ""
}

// modelSources decodes source or sources (exactly one).
func (p *parser) modelSources(m *Model, fs map[string]field, k field) {
	if p.exclusive(fs, "source", "sources", "use source: for one table (the view input), sources: for named views") {
		return
	}
	if g, ok := fs["sources"]; ok {
		m.Sources = map[string]TableAddr{}
		for _, s := range p.d.fields(g.val, g.path, nil) {
			if !viewRE.MatchString(s.name) {
				p.d.fail(s.key, s.path, "source name %q is not a SQL view name: use lowercase letters, digits and _", s.name)
				continue
			}
			if s.name == ThisView {
				p.d.fail(s.key, s.path, "source name %q is taken: the view this is the model's own sink; pick another name", s.name)
				continue
			}
			m.Sources[s.name] = p.addr(s)
		}
		return
	}
	if _, ok := fs["source"]; !ok && resolve(k.val).Kind == yaml.MappingNode {
		p.d.fail(k.key, k.path, "model needs source: (one table, read as the view input) or sources: (named tables, one view each)")
		return
	}
	if g, ok := fs["source"]; ok {
		m.Source = p.addr(g)
	}
}

// LookupSpec declares how a model joins a lookup: the key columns (named
// alike in the incremental source and the lookup) and what happens to an
// incremental row with no match on them.
type LookupSpec struct {
	Key       []string
	OnMissing string // hold (default) | drop
}

// The on_missing values of a lookup.
const (
	OnMissingHold = "hold" // the batch is not committed until every row matches: it waits, counted as lag
	OnMissingDrop = "drop" // the SQL's own join decides (an inner join drops the row)
)

var lookupKeys = []string{"key", "on_missing"}

// modelLookup decodes lookup: the sources of sources: read whole every run,
// as a mapping {name: {key: [...], on_missing: hold|drop}} (a name: key
// shorthand gives the key alone), or, for a replace model, a list of names.
func (p *parser) modelLookup(m *Model, fs map[string]field) {
	g, ok := fs["lookup"]
	if !ok {
		return
	}
	if m.Sources == nil {
		p.d.fail(g.key, g.path, "lookup names sources of sources: (a model with source: reads one table incrementally)")
		return
	}
	known := func(n *yaml.Node, path, name string) bool {
		if _, ok := m.Sources[name]; !ok {
			p.d.fail(n, path, "lookup %q is not a source%s", name, didYouMean(name, sortedKeys(m.Sources)))
			return false
		}
		return true
	}
	m.LookupSpec = map[string]LookupSpec{}
	if g.val.Kind == yaml.MappingNode {
		for _, f := range p.d.fields(g.val, g.path, nil) {
			if !known(f.key, f.path, f.name) {
				continue
			}
			spec := LookupSpec{OnMissing: OnMissingHold}
			if f.val.Kind == yaml.MappingNode {
				for _, o := range p.d.fields(f.val, f.path, lookupKeys) {
					switch o.name {
					case "key":
						spec.Key = p.d.strs(o)
					case "on_missing":
						spec.OnMissing = p.d.enum(o, "on_missing", OnMissingHold, OnMissingDrop)
					}
				}
			} else {
				spec.Key = p.d.strs(f)
			}
			if len(spec.Key) == 0 {
				p.d.failAt(nodePos(f.key), f.path, RuleModelLookupKey, "lookup %s needs key: (the join's columns, named alike in both tables), so weir can find rows with no match", f.name)
			}
			m.Lookup = append(m.Lookup, f.name)
			m.LookupSpec[f.name] = spec
		}
	} else {
		for _, item := range p.d.items(g) {
			name, ok := p.d.scalar(item, "a source name")
			if !ok || !known(item.val, item.path, name) {
				continue
			}
			m.Lookup = append(m.Lookup, name)
		}
		if m.Mode != "replace" && len(m.Lookup) > 0 && len(m.Lookup) < len(m.Sources) {
			// A replace model recomputes from whole tables: a late lookup
			// row is seen on the next run. An incremental one would lose
			// the rows that arrived before it, silently.
			p.d.failAt(nodePos(g.val), g.path, RuleModelLookupKey,
				"lookup needs the join key of each lookup, so rows with no match are held instead of lost: write lookup: {%s: {key: [column], on_missing: hold}} (hold waits for the lookup row, drop lets the SQL's join drop it)", m.Lookup[0])
		}
	}
	if len(m.Lookup) == len(m.Sources) && len(m.Lookup) > 0 && m.Mode != "replace" {
		p.d.fail(g.val, g.path, "every source is a lookup: nothing is read incrementally; keep one source out of lookup, or use mode: replace")
	}
}

// incrementalJoin refuses a model that reads two or more sources
// incrementally: each run would join only the new rows of one side to the
// new rows of the other, and rows whose partner arrived in another batch
// would never meet (rule MODEL-001).
func (p *parser) incrementalJoin(m *Model, fs map[string]field) {
	if m.Mode == "replace" || m.Sources == nil || m.Independent {
		return
	}
	var inc []string
	for _, name := range sortedKeys(m.Sources) {
		if !m.IsLookup(name) {
			inc = append(inc, name)
		}
	}
	if len(inc) < 2 {
		return
	}
	g := fs["sources"]
	p.d.failAt(nodePos(g.key), g.path, RuleModelIncrementalJoin,
		"sources %s are all read incrementally: a join would see only the new rows of each side, and rows whose match arrived in another run are lost; declare all but one as lookup: {name: {key: [column]}} (read whole every run), or use mode: replace (re-read fully); a SQL that never joins them (a UNION ALL) declares independent: true",
		strings.Join(inc, ", "))
}

// IsLookup reports whether the source named view is read whole every run.
func (m *Model) IsLookup(view string) bool { return slicesContains(m.Lookup, view) }

// modelCursor decodes cursor: one column for source:, or a mapping of
// source names to columns for sources:.
func (p *parser) modelCursor(m *Model, fs map[string]field) {
	g, ok := fs["cursor"]
	if !ok {
		return
	}
	if m.Sources == nil {
		if col, ok := p.d.scalar(g, "a column name (the cursor of source:)"); ok {
			m.Cursor = map[string]string{"input": col}
		}
		return
	}
	if resolve(g.val).Kind != yaml.MappingNode {
		p.d.fail(g.val, g.path, "with sources:, cursor is a mapping of source names to columns, e.g. {o: updated_at}")
		return
	}
	m.Cursor = map[string]string{}
	for _, c := range p.d.fields(g.val, g.path, nil) {
		col, ok := p.d.scalar(c, "a column name")
		switch _, known := m.Sources[c.name]; {
		case !ok:
		case !known:
			p.d.fail(c.key, c.path, "cursor for %q, which is not a source%s", c.name, didYouMean(c.name, sortedKeys(m.Sources)))
		case m.IsLookup(c.name):
			p.d.fail(c.key, c.path, "source %q is a lookup (read whole every run): it has no cursor", c.name)
		default:
			m.Cursor[c.name] = col
		}
	}
}

// modelSQL decodes sql or sql_file (exactly one); sql_file must exist.
func (p *parser) modelSQL(m *Model, fs map[string]field, k field) {
	if p.exclusive(fs, "sql", "sql_file", "keep one") {
		return
	}
	if g, ok := fs["sql"]; ok {
		m.SQL = p.d.str(g)
		return
	}
	g, ok := fs["sql_file"]
	if !ok {
		if resolve(k.val).Kind == yaml.MappingNode {
			p.d.fail(k.key, k.path, "model needs sql: (inline SQL) or sql_file: (a .sql file relative to the dagfile)")
		}
		return
	}
	m.SQLFile = p.d.str(g)
	if m.SQLFile != "" {
		m.SQLPath = p.relPath(m.SQLFile)
		if _, err := os.Stat(m.SQLPath); err != nil {
			p.d.fail(g.val, g.path, "sql_file %q not found (looked for %s; paths are relative to the dagfile)", m.SQLFile, m.SQLPath)
		}
	}
}

// relPath resolves a path written in the dagfile against its folder.
func (p *parser) relPath(s string) string {
	if filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.f.Dir, s)
}

// Stream is a stream task: events from a stream source into a sink.
type Stream struct {
	Source          string        // a connection name or a URL, as written
	SourceConn      string        // the connection, when Source names one
	Vars            []string      // variables a URL Source references
	Sink            TableAddr     // where the events land
	BatchSize       int           // events per commit; 0: automatic
	BatchInterval   time.Duration // longest wait before a commit; 0: automatic
	Trigger         string        // available_now (default: drain and exit) | continuous
	Materialization string        // append (default) | merge
	Key             []string      // merge key columns
	Cursor          string        // the event field that orders events and resumes (an id, a sequence); for a table source, the keyset column
	Table           string        // a table source: the SQL table (schema.table) it pages through; "" for event sources
	ChunkSize       int           // a table source: rows per chunk (one chunk per commit); 0: automatic
	// ReconnectAttempts is how many reconnects (SSE, WebSocket) or calls
	// (Pub/Sub, SQS) in a row may fail to reach the source before the run
	// fails; 0: automatic.
	ReconnectAttempts int
	// MinEvents is the fewest events checked, across runs, before the
	// contract's max_bad_ratio is judged (over all of them); 0: automatic.
	MinEvents int
	scheme    string
	url       *string
	envErrs   ErrorList // expansion problems of a URL source (see File.Resolve)
}

// StreamSchemes are the URL schemes of stream sources: routes/stream's.
var StreamSchemes = scheme.Streams

// TableSourceSchemes are the schemes a stream's table source can page
// through by key (routes.KeysetSource).
var TableSourceSchemes = []string{"postgres", "postgresql", "mysql", "mariadb", "clickhouse", "clickhouse+http", "clickhouse+https"}

// IsTableSource reports whether the stream reads a SQL table in keyset
// chunks (it has table:) rather than events.
func (s *Stream) IsTableSource() bool { return s.Table != "" }

// TableSource returns the table a table source reads, as an address on
// its connection (Conn is empty when the source is a URL).
func (s *Stream) TableSource() TableAddr {
	schema, table, _ := cutSchema(s.Table)
	return TableAddr{Conn: s.SourceConn, Schema: schema, Table: table}
}

// SourceScheme returns the scheme of the stream source ("" when unknown).
func (s *Stream) SourceScheme() string { return s.scheme }

// SourceURL returns the expanded source URL (a secret: never print it);
// "" when Source names a connection or was not expanded.
func (s *Stream) SourceURL() string {
	if s.url == nil {
		return ""
	}
	return *s.url
}

var streamKeys = []string{"source", "sink", "batch_size", "batch_interval", "trigger",
	"materialization", "key", "cursor", "table", "chunk_size", "reconnect_attempts", "min_events"}

// stream decodes a stream mapping.
func (p *parser) stream(t *Task, k field) *Stream {
	fs := p.sub(t, k, streamKeys)
	s := &Stream{Trigger: "available_now", Materialization: "append", Key: p.keyCols(fs, "key")}
	p.streamFields(s, fs)
	if p.require(fs, k, "source", "a stream URL or connection: sse://, ws(s)://, kafka://, sqs://, pubsub://") {
		p.streamSource(s, fs["source"])
	}
	if p.require(fs, k, "sink", "the table it writes, connection:schema.table") {
		s.Sink = p.addr(fs["sink"])
	}
	t.sinkAt = "stream.sink"
	if _, ok := fs["key"]; !ok && s.Materialization == "merge" {
		p.d.fail(fs["materialization"].val, fs["materialization"].path, "materialization merge needs key: (the columns that identify an event)")
	}
	p.onlyWith(fs, "key", "materialization", s.Materialization, "merge")
	p.tableSource(s, fs, k)
	return s
}

// tableSource checks the keys of a table source (table:) against those
// of an event source.
func (p *parser) tableSource(s *Stream, fs map[string]field, k field) {
	if !s.IsTableSource() {
		if g, ok := fs["chunk_size"]; ok {
			p.d.fail(g.key, g.path, "chunk_size is used only by a table source (with table:); an event source commits batch_size events")
		}
		return
	}
	if g, ok := fs["batch_size"]; ok {
		p.d.fail(g.key, g.path, "batch_size is for event sources: a table source commits one chunk of chunk_size rows at a time")
	}
	if s.Cursor == "" {
		p.require(fs, k, "cursor", "the column a table source pages on: an integer or timestamp column that grows with new rows")
	}
	if sch := s.scheme; sch != "" && !slicesContains(TableSourceSchemes, sch) {
		g := fs["source"]
		p.d.fail(g.val, g.path, "a table source reads postgres, mysql or clickhouse, not %q%s", sch, didYouMean(sch, TableSourceSchemes))
	}
}

// streamFields decodes the scalar options of a stream.
func (p *parser) streamFields(s *Stream, fs map[string]field) {
	for name, g := range fs {
		switch name {
		case "batch_size":
			s.BatchSize = p.d.integer(g, 1)
		case "batch_interval":
			s.BatchInterval = p.d.duration(g)
		case "trigger":
			s.Trigger = p.d.enum(g, "trigger", "available_now", "continuous")
		case "materialization":
			s.Materialization = p.d.enum(g, "materialization", "append", "merge")
		case "cursor":
			s.Cursor = p.d.str(g)
		case "table":
			s.Table = p.d.str(g)
			if err := checkTableName(s.Table); s.Table != "" && err != nil {
				p.d.fail(g.val, g.path, "table: %v", err)
			}
		case "chunk_size":
			s.ChunkSize = p.d.integer(g, 1)
		case "reconnect_attempts":
			s.ReconnectAttempts = p.d.integer(g, 1)
		case "min_events":
			s.MinEvents = p.d.integer(g, 1)
		}
	}
}

// streamSource decodes a stream source: a URL (expanded like a connection)
// or a connection name.
func (p *parser) streamSource(s *Stream, g field) {
	s.Source = p.d.str(g)
	if s.Source == "" {
		return
	}
	if !strings.Contains(s.Source, "://") {
		if p.connKnown(g.val, g.path, s.Source) {
			s.SourceConn = s.Source
			s.scheme = p.f.Connections[s.Source].Scheme()
		}
		return
	}
	c := &Connection{Name: "source", Raw: s.Source}
	p.expandConn(c, g, &s.envErrs)
	s.Vars, s.url, s.scheme = c.Vars, c.url, c.Scheme()
	if sch := s.scheme; sch != "" && !slicesContains(StreamSchemes, sch) && !s.IsTableSource() {
		hint := ""
		if slicesContains(TableSourceSchemes, sch) {
			hint = " (to read a SQL table in chunks, add table: and cursor:)"
		}
		p.d.fail(g.val, g.path, "stream source scheme %q is not a stream%s%s", sch, didYouMean(sch, StreamSchemes), hint)
	}
}
