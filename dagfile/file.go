package dagfile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/weirhq/weir/routes/redact"
)

// Version is the dagfile format version this package reads.
const Version = 1

// Built-in defaults, used where neither defaults: nor a task sets a value.
const (
	DefaultRetries    = 0
	DefaultRetryDelay = time.Minute
)

// File is a parsed and validated dagfile.
type File struct {
	Path        string // as given to Load or Parse
	Dir         string // directory of Path: sql_file and contract paths are relative to it
	Version     int
	Name        string // the DAG name: name:, else the dagfile's folder (or file) name
	Description string
	Schedule    string // as written (cron or @hourly…); "" when unscheduled
	Connections map[string]*Connection
	Defaults    Defaults
	Deploy      Deploy  // the deploy: section (pods); each Task.Deploy has it merged
	Tasks       []*Task // sorted by name
	byName      map[string]*Task
}

// Defaults are the task settings in defaults:, already merged into each Task.
type Defaults struct {
	Retries    int
	RetryDelay time.Duration
	Timeout    time.Duration // 0: no timeout
	Tags       []string
	Pool       string
}

// Load reads and parses the dagfile at path, expanding ${VAR} references from
// the environment; an unset variable is an error naming it.
func Load(path string) (*File, error) {
	return load(path, os.LookupEnv)
}

// LoadStatic reads and parses the dagfile at path without expanding ${VAR}
// references (Connection.URL is ""). Generators and linters use it: they
// need no secrets and must not bake any into their output.
func LoadStatic(path string) (*File, error) {
	return load(path, nil)
}

func load(path string, getenv Getenv) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dagfile: %w", err)
	}
	return Parse(data, path, getenv)
}

// Parse parses dagfile data read from path (used in messages and to resolve
// sql_file and contract paths). getenv expands ${VAR} references; nil leaves
// them unexpanded, as LoadStatic does. The error is an ErrorList.
func Parse(data []byte, path string, getenv Getenv) (*File, error) {
	f, errs := parse(data, path, getenv)
	errs = append(errs, f.envErrs(f.Tasks, true)...)
	if len(errs) > 0 {
		errs.sort(path)
		return nil, errs
	}
	return f, nil
}

// LoadLazy reads and parses the dagfile at path, expanding the ${VAR}
// references that getenv knows. A connection with an unset variable is left
// unexpanded and is no error here: Resolve reports it for the tasks that use
// it, so a task runs with its own connections' variables only.
func LoadLazy(path string, getenv Getenv) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dagfile: %w", err)
	}
	f, errs := parse(data, path, getenv)
	if len(errs) > 0 {
		return nil, errs
	}
	return f, nil
}

// Resolve checks that every connection the tasks use (sources, sinks,
// inputs, the quarantine and this, which live on the sink's connection, a
// stream's source URL) was expanded. The error is an ErrorList naming each
// unset variable at its connection.
func (f *File) Resolve(tasks ...*Task) error {
	if errs := f.envErrs(tasks, false); len(errs) > 0 {
		errs.sort(f.Path)
		return errs
	}
	return nil
}

// envErrs returns the expansion problems of the connections tasks use (all
// connections when all is set), each connection once.
func (f *File) envErrs(tasks []*Task, all bool) ErrorList {
	var out ErrorList
	seen := map[string]bool{}
	addConn := func(name string) {
		if c := f.Connections[name]; c != nil && !seen[name] {
			seen[name] = true
			out = append(out, c.envErrs...)
		}
	}
	if all {
		for _, name := range sortedKeys(f.Connections) {
			addConn(name)
		}
	}
	for _, t := range tasks {
		for _, name := range t.Connections() {
			addConn(name)
		}
		if t.Stream != nil {
			out = append(out, t.Stream.envErrs...)
		}
	}
	return out
}

// Task returns the task called name, or nil.
func (f *File) Task(name string) *Task { return f.byName[name] }

// parser decodes one dagfile (and the contract files it names).
type parser struct {
	d      decoder
	errs   ErrorList
	getenv Getenv
	f      *File
	defSch field // schedule: inside defaults:
}

// parse returns the file decoded as far as possible and every problem found.
func parse(data []byte, path string, getenv Getenv) (*File, ErrorList) {
	p := &parser{getenv: getenv}
	p.d = decoder{file: path, errs: &p.errs}
	p.f = &File{Path: path, Dir: filepath.Dir(path), Connections: map[string]*Connection{},
		Defaults: Defaults{Retries: DefaultRetries, RetryDelay: DefaultRetryDelay}, byName: map[string]*Task{}}
	if root := p.document(data); root != nil {
		p.top(root)
		p.link()
	}
	p.errs.sort(path)
	return p.f, p.errs
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses the YAML and returns the root mapping, or nil.
func (p *parser) document(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		e := &Error{File: p.d.file, Msg: "bad YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), Rule: RuleFormat}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Col, e.Msg = 1, "bad YAML: "+m[2]
		}
		p.errs = append(p.errs, e)
		return nil
	}
	if len(doc.Content) == 0 {
		p.errs = append(p.errs, &Error{File: p.d.file, Line: 1, Col: 1, Rule: RuleFormat,
			Msg: "the dagfile is empty: it needs version: 1, connections: and tasks:"})
		return nil
	}
	return doc.Content[0]
}

var topKeys = []string{"version", "name", "description", "schedule", "connections", "defaults", "deploy", "tasks"}

// top decodes the root mapping: connections and defaults before tasks.
func (p *parser) top(root *yaml.Node) {
	fs := map[string]field{}
	for _, f := range p.d.fields(root, "", topKeys) {
		fs[f.name] = f
	}
	if resolve(root).Kind != yaml.MappingNode {
		return
	}
	p.version(fs["version"], root)
	p.meta(fs)
	if f, ok := fs["connections"]; ok {
		p.connections(f)
	}
	if f, ok := fs["defaults"]; ok {
		p.defaults(f)
	}
	if f, ok := fs["deploy"]; ok {
		p.deploy(f, deployKeys, &p.f.Deploy)
	}
	p.schedule(fs["schedule"])
	p.tasks(fs["tasks"], root)
}

// version checks version: 1.
func (p *parser) version(f field, root *yaml.Node) {
	if f.val == nil {
		p.d.fail(root, "version", "version is required: add version: %d at the top", Version)
		return
	}
	if v := p.d.integer(f, 1); v != 0 && v != Version {
		p.d.fail(f.val, f.path, "unsupported version %d: this weir reads version %d", v, Version)
	}
	p.f.Version = Version
}

// meta decodes name and description; the name defaults to the folder name.
func (p *parser) meta(fs map[string]field) {
	if f, ok := fs["description"]; ok {
		p.f.Description = p.d.str(f)
	}
	f, ok := fs["name"]
	if !ok {
		p.f.Name = defaultName(p.f.Path)
		return
	}
	if p.d.name(f.val, f.path, "DAG") {
		p.f.Name = f.val.Value
	}
}

var nonNameRE = regexp.MustCompile(`[^a-z0-9_]+`)

// defaultName derives a DAG name from the dagfile path: the folder of a
// weir.yaml, else the file's stem, lowercased with other characters as _.
func defaultName(path string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	if base == "weir" || base == "" {
		dir, err := filepath.Abs(filepath.Dir(path))
		if err == nil {
			base = filepath.Base(dir)
		}
	}
	name := strings.Trim(nonNameRE.ReplaceAllString(strings.ToLower(base), "_"), "_")
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		name = "weir_" + name
	}
	return strings.TrimSuffix(name[:min(len(name), 63)], "_")
}

// connections decodes the connections mapping: NAME: URL, or NAME: {url:
// URL, airflow_conn: ID}.
func (p *parser) connections(f field) {
	for _, c := range p.d.fields(f.val, f.path, nil) {
		if !p.d.name(c.key, c.path, "connection") {
			continue
		}
		urlField, airflow := c, ""
		if c.val.Kind == yaml.MappingNode {
			fs := map[string]field{}
			for _, g := range p.d.fields(c.val, c.path, connKeys) {
				fs[g.name] = g
			}
			if !p.require(fs, c, "url", "the connection's URL") {
				continue
			}
			urlField = fs["url"]
			if g, ok := fs["airflow_conn"]; ok {
				airflow = p.d.str(g)
			}
		}
		raw, ok := p.d.scalar(urlField, "a URL (${VAR} references are expanded from the environment)")
		if !ok {
			continue
		}
		conn := &Connection{Name: c.name, Raw: raw, AirflowConn: airflow, Line: c.key.Line, Col: c.key.Column}
		p.expandConn(conn, urlField, &conn.envErrs)
		if airflow != "" && (len(conn.Vars) != 1 || raw != "${"+firstOr(conn.Vars)+"}") {
			p.d.fail(urlField.val, urlField.path, "with airflow_conn the url is one ${VAR} (the variable the Airflow connection's URI goes into), got %s", redact.String(raw))
		}
		p.f.Connections[c.name] = conn
	}
	if n := resolve(f.val); n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		p.d.fail(f.val, f.path, "no connections: add at least one, e.g. lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake")
	}
}

var connKeys = []string{"url", "airflow_conn"}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// expandConn finds the variables of a connection and, with getenv, expands
// them. An unset variable (or an empty result) is not an error of the file:
// it goes into envErrs, which Resolve reports for the tasks that use the
// connection only (a pod is given only its own task's variables).
func (p *parser) expandConn(conn *Connection, c field, envErrs *ErrorList) {
	vars, err := varRefs(conn.Raw)
	if err != nil {
		p.d.fail(c.val, c.path, "%v", err)
		return
	}
	conn.Vars = vars
	if p.getenv == nil {
		return
	}
	val, missing := expand(conn.Raw, p.getenv)
	env := decoder{file: p.d.file, errs: envErrs}
	for _, v := range missing {
		env.fail(c.val, c.path, "environment variable %s is not set (the connection is %s)", v, redact.String(conn.Raw))
	}
	if len(missing) == 0 && val == "" {
		env.fail(c.val, c.path, "the connection is empty once expanded (%s): set %s", redact.String(conn.Raw), strings.Join(vars, ", "))
	}
	if len(*envErrs) == 0 {
		conn.url = &val
	}
}

var defaultKeys = []string{"retries", "retry_delay", "timeout", "schedule", "tags", "pool"}

// defaults decodes the defaults mapping (schedule is handled by schedule).
func (p *parser) defaults(f field) {
	for _, g := range p.d.fields(f.val, f.path, defaultKeys) {
		switch g.name {
		case "retries":
			p.f.Defaults.Retries = p.d.integer(g, 0)
		case "retry_delay":
			p.f.Defaults.RetryDelay = p.d.duration(g)
		case "timeout":
			p.f.Defaults.Timeout = p.d.duration(g)
		case "tags":
			p.f.Defaults.Tags = p.tags(g)
		case "pool":
			p.f.Defaults.Pool = p.d.str(g)
		case "schedule":
			p.defSch = g
		}
	}
}

var tagRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,63}$`)

// tags decodes a tag list.
func (p *parser) tags(f field) []string {
	var out []string
	for _, t := range p.d.strs(f) {
		if !tagRE.MatchString(t) {
			p.d.fail(f.val, f.path, "tag %q is not allowed: use letters, digits, _ . and - (at most 63)", t)
			continue
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ScheduleAliases maps the schedule shorthands to five-field cron expressions.
var ScheduleAliases = map[string]string{
	"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
	"@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
}

var cronFieldRE = regexp.MustCompile(`^[0-9A-Za-z*?/,#-]+$`)

// schedule decodes schedule: (top level, or in defaults:, not both).
func (p *parser) schedule(top field) {
	f := p.defSch
	if top.val != nil && f.val != nil {
		p.d.fail(f.key, f.path, "schedule is set twice (also at line %d): keep one", top.key.Line)
	}
	if top.val != nil {
		f = top
	}
	if f.val == nil || f.val.Tag == "!!null" {
		return
	}
	if s := p.d.str(f); s != "" && validSchedule(s) {
		p.f.Schedule = s
	} else if s != "" {
		p.d.fail(f.val, f.path, "bad schedule %q: use a five-field cron expression (\"*/15 * * * *\") or one of @hourly, @daily, @weekly, @monthly, @yearly", s)
	}
}

// validSchedule accepts an alias or five cron fields.
func validSchedule(s string) bool {
	if _, ok := ScheduleAliases[s]; ok {
		return true
	}
	fields := strings.Fields(s)
	if len(fields) != 5 {
		return false
	}
	for _, f := range fields {
		if !cronFieldRE.MatchString(f) {
			return false
		}
	}
	return true
}

// Cron returns the schedule as five cron fields (aliases translated), or "".
func (f *File) Cron() string {
	if c, ok := ScheduleAliases[f.Schedule]; ok {
		return c
	}
	return f.Schedule
}
