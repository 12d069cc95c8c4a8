package dagfile

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/weirhq/weir/routes/redact"
)

// Severity of a finding: errors make `weir lint` exit 2 (bad input).
type Severity string

// The severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one result of Lint or Check.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Task     string   `json:"task,omitempty"`
	Message  string   `json:"message"`
}

// String formats the finding as "file:line:col: severity RULE: message".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s %s: %s", f.File, f.Line, f.Col, f.Severity, f.Rule, f.Message)
}

// RuleInfo describes a lint rule.
type RuleInfo struct {
	ID       string
	Severity Severity
	Summary  string
}

// Rules lists every rule Check reports, in id order.
var Rules = []RuleInfo{
	{RuleFormat, SeverityError, "malformed dagfile: unknown key, bad value, missing or conflicting keys"},
	{RuleCycle, SeverityError, "dependency cycle"},
	{RuleUnknownConn, SeverityError, "a task names a connection that is not defined"},
	{RuleDuplicateSink, SeverityError, "a table written by two tasks"},
	{RuleDroppedUpstream, SeverityWarning, "under a selection, a selected task whose upstream is not selected: the dependency is dropped"},
	{RuleOrphan, SeverityInfo, "a task with neither upstream nor downstream tasks, in a dagfile of several tasks"},
	{RuleUnknownTask, SeverityError, "deps names a task that is not defined"},
	{RuleStreamAppend, SeverityWarning, "a resumable stream source loaded with bare append: a replay writes duplicates; use merge with a key"},
	{RuleStreamContinuous, SeverityWarning, "a continuous trigger: an always-on consumer; confirm the freshness SLO needs it"},
	{RuleStreamNoCursor, SeverityWarning, "a WebSocket source without cursor: at-least-once within one connection only"},
	{RuleContractBind, SeverityError, "a contract type name or rule that DuckDB cannot parse or bind (checked by weir lint, which links DuckDB)"},
	{RuleContractUnbound, SeverityWarning, "a contract rule reads a column its columns: do not list, so lint cannot bind it"},
	{RuleOLCUnsupported, SeverityError, "an Open Lakehouse Contract (*.olc.yaml) uses an element weir does not implement (docs/contracts.md)"},
	{RulePodLocalFiles, SeverityWarning, "with deploy: (pods), a task whose connections are local files (file://, an Iceberg SQLite catalog or file warehouse) and no volume is mounted"},
	{RuleEnvNeeds, SeverityInfo, "with --env-from: the variables a task's pod must be given, all present"},
	{RuleEnvMissing, SeverityError, "with --env-from: a variable a task needs is not provided"},
	{RuleModelIncrementalJoin, SeverityError, "a model reads two or more sources incrementally: rows whose match arrived in another run would be lost; declare all but one lookup:, or use mode: replace"},
	{RuleModelSQL, SeverityError, "a model's SQL does not parse, or does not bind against its inputs' schemas where lint knows them (checked by weir lint, which links DuckDB)"},
	{RuleModelLookupKey, SeverityError, "an incremental model's lookup without key: weir could not find rows with no match, and an inner join would drop them silently"},
	{RuleModelUnbound, SeverityInfo, "a model's SQL was parsed but not bound: an input's schema is not knowable offline (say which)"},
	{RuleModelWhole, SeverityInfo, "a model's SQL cannot run batch by batch (a window, an aggregate with neither aggregate: nor this, a LIMIT): its input is read whole, in DuckDB's memory_limit, spilling to disk (say why)"},
	{RuleModelAggregate, SeverityError, "a model's aggregate: an unknown measure function, count_distinct outside mode: replace, a group_by or measure column not in the SQL's output, sum or avg over a non-numeric column, a declared type DuckDB refuses"},
}

// SortFindings orders findings as Check does: the dagfile (path) first,
// then by file, position and rule.
func SortFindings(fs []Finding, path string) { sortFindings(fs, path) }

// CheckFile reads the dagfile at path and checks it; the error is for an
// unreadable file or a bad selector only.
func CheckFile(path string, selectors ...string) ([]Finding, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dagfile: %w", err)
	}
	return Check(data, path, selectors...)
}

// Check parses data without expanding ${VAR} references (so it needs no
// secrets) and returns every problem as findings: parse errors with their
// rule (severity error), then the Lint rules on what could be decoded.
func Check(data []byte, path string, selectors ...string) ([]Finding, error) {
	f, errs := parse(data, path, nil)
	out := make([]Finding, 0, len(errs))
	for _, e := range errs {
		out = append(out, Finding{Rule: cmp.Or(e.Rule, RuleFormat), Severity: SeverityError,
			File: e.File, Line: e.Line, Col: e.Col, Task: taskOf(e.Key), Message: keyMsg(e)})
	}
	more, err := Lint(f, selectors...)
	if err != nil && len(errs) == 0 {
		return nil, err
	}
	out = append(out, more...)
	sortFindings(out, path)
	return out, nil
}

// keyMsg prefixes an error's message with its key.
func keyMsg(e *Error) string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

// taskOf returns the task named by a key path tasks.NAME.…, or "".
func taskOf(key string) string {
	rest, ok := strings.CutPrefix(key, "tasks.")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ".")
	return name
}

// Lint applies the rules that do not stop a dagfile from loading (warnings
// and infos) to f. With selectors it checks the selection as `weir generate
// --select` would render it (rule DAG-004). The error is for a bad selector.
func Lint(f *File, selectors ...string) ([]Finding, error) {
	sel, err := f.Select(selectors...)
	if err != nil {
		return nil, err
	}
	var out []Finding
	picked := map[string]bool{}
	for _, t := range sel {
		picked[t.Name] = true
	}
	for _, t := range sel {
		out = append(out, f.lintTask(t, picked)...)
	}
	sortFindings(out, f.Path)
	return out, nil
}

// lintTask applies every rule to one task.
func (f *File) lintTask(t *Task, picked map[string]bool) []Finding {
	var out []Finding
	add := func(rule, key, format string, args ...any) {
		line, col := t.Pos(key)
		out = append(out, Finding{Rule: rule, Severity: severityOf(rule), File: f.Path, Line: line, Col: col,
			Task: t.Name, Message: fmt.Sprintf("task %s: ", t.Name) + fmt.Sprintf(format, args...)})
	}
	for _, u := range t.Upstream {
		if !picked[u] {
			add(RuleDroppedUpstream, "", "upstream task %s is not selected: the generated code drops this dependency (select it too, or run it elsewhere first)", u)
		}
	}
	if len(f.Tasks) > 1 && len(t.Upstream) == 0 && len(t.Downstream) == 0 {
		add(RuleOrphan, "", "no other task reads what it writes or writes what it reads: it runs on its own (intended?)")
	}
	f.lintStream(t, add)
	if !f.Deploy.IsZero() {
		f.lintPod(t, add)
	}
	return out
}

// PodFindings applies the pod rules (K8S-001) to the selected tasks, as if
// they run in pods whether or not the dagfile has deploy: (weir generate
// argo and --operator kubernetes report them).
func PodFindings(f *File, selectors ...string) ([]Finding, error) {
	sel, err := f.Select(selectors...)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, t := range sel {
		f.lintPod(t, func(rule, key, format string, args ...any) {
			line, col := t.Pos(key)
			out = append(out, Finding{Rule: rule, Severity: severityOf(rule), File: f.Path, Line: line, Col: col,
				Task: t.Name, Message: fmt.Sprintf("task %s: ", t.Name) + fmt.Sprintf(format, args...)})
		})
	}
	sortFindings(out, f.Path)
	return out, nil
}

// lintPod warns when a task that runs in a pod reads or writes local files
// and no volume is mounted: the pod's filesystem is its image's, and what
// it writes is gone when the pod ends.
func (f *File) lintPod(t *Task, add addFunc) {
	if len(t.Deploy.Volumes) > 0 {
		return
	}
	for _, name := range t.Connections() {
		c := f.Connections[name]
		if c == nil {
			continue
		}
		if paths := c.LocalPaths(); len(paths) > 0 {
			add(RulePodLocalFiles, "", "connection %s is local files (%s) but no volume is mounted in its pod: the pod sees only its image, and what it writes is lost when the pod ends; add a volume under deploy: volumes: (a PersistentVolumeClaim) mounted where the paths resolve, or use an object store (s3://, gcs://) and a shared catalog", name, strings.Join(paths, ", "))
		}
	}
}

type addFunc func(rule, key, format string, args ...any)

// lintStream applies the STREAM rules.
func (f *File) lintStream(t *Task, add addFunc) {
	if x := t.Transfer; x != nil && x.Mode == "append" && isStreamScheme(f.connScheme(x.From)) {
		add(RuleStreamAppend, "transfer.mode", "stream source %s (%s) is loaded with bare append: a replay after a restart writes duplicates; use mode: merge with primary_key:", x.From, f.connScheme(x.From))
	}
	s := t.Stream
	if s == nil {
		return
	}
	// A table source has no commit of its own to replay from: its cursor
	// is committed with the rows, so append never duplicates.
	if s.Materialization == "append" && !s.IsTableSource() {
		add(RuleStreamAppend, "stream.source", "stream source %s (%s) is loaded with bare append: a replay after a restart writes duplicates; use materialization: merge with key:", redact.String(s.Source), cmp.Or(s.scheme, "scheme unknown"))
	}
	if s.Trigger == "continuous" {
		add(RuleStreamContinuous, "stream.trigger", "trigger: continuous keeps a consumer running around the clock (always-on cost): confirm the freshness SLO needs it, or use available_now on a schedule")
	}
	if (s.scheme == "ws" || s.scheme == "wss") && s.Cursor == "" {
		add(RuleStreamNoCursor, "stream.source", "WebSocket source without cursor: delivery is at-least-once within one connection only, and events sent while reconnecting are lost or repeated; set cursor: to an event field (an id or a sequence) to deduplicate and resume")
	}
}

func (f *File) connScheme(name string) string {
	if c := f.Connections[name]; c != nil {
		return c.Scheme()
	}
	return ""
}

func isStreamScheme(s string) bool { return slices.Contains(StreamSchemes, s) }

func severityOf(rule string) Severity {
	for _, r := range Rules {
		if r.ID == rule {
			return r.Severity
		}
	}
	return SeverityError
}

// sortFindings orders findings: the dagfile first, then by position and rule.
func sortFindings(fs []Finding, main string) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(boolCmp(a.File != main, b.File != main), cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), cmp.Compare(a.Rule, b.Rule))
	})
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// EnvFindings reports, for each selected task, the environment variables a
// worker or pod running it must be given (its connections' and its stream
// URL's, nothing else): ENV-001 (error) naming those present does not
// have, else ENV-000 (info) listing them. The error is for a bad selector.
func EnvFindings(f *File, present func(name string) bool, selectors ...string) ([]Finding, error) {
	sel, err := f.Select(selectors...)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, t := range sel {
		vars := f.Vars(t)
		var missing []string
		for _, v := range vars {
			if !present(v) {
				missing = append(missing, v)
			}
		}
		fd := Finding{Rule: RuleEnvNeeds, Severity: SeverityInfo, File: f.Path, Line: t.Line, Col: t.Col, Task: t.Name}
		switch {
		case len(missing) > 0:
			fd.Rule, fd.Severity = RuleEnvMissing, SeverityError
			fd.Message = fmt.Sprintf("task %s needs %s, which the environment does not provide: %s", t.Name, strings.Join(vars, ", "), strings.Join(missing, ", "))
		case len(vars) == 0:
			fd.Message = fmt.Sprintf("task %s needs no environment variable", t.Name)
		default:
			fd.Message = fmt.Sprintf("task %s needs %s: all provided", t.Name, strings.Join(vars, ", "))
		}
		out = append(out, fd)
	}
	sortFindings(out, f.Path)
	return out, nil
}
