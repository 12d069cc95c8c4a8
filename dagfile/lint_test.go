package dagfile

import (
	"slices"
	"strings"
	"testing"
)

// lintHead defines connections of every kind the rules look at.
const lintHead = `version: 1
connections:
  app: postgres://u:${PG_PASS}@127.0.0.1:5432/app
  lake: iceberg://?catalog=sql
  bus: kafka://127.0.0.1:9092/events
  feed: wss://feed.invalid/ticks
  env: ${SOME_URL}
tasks:
`

// lintCases holds, per rule, a dagfile that breaks it (with the exact
// findings of that rule) and one that passes it.
var lintCases = []struct {
	rule   string
	sel    []string
	fail   string
	want   []string
	pass   string
	passTo []string // selectors for the passing case
}{
	{rule: RuleCycle,
		fail: "  a: {model: {source: lake:s.b, sink: lake:s.a, sql: SELECT 1}}\n  b: {model: {source: lake:s.a, sink: lake:s.b, sql: SELECT 1}}\n",
		want: []string{
			"lint.yaml:9:3: error DAG-001: tasks.a: dependency cycle: a → b → a (b reads lake:s.a; a reads lake:s.b); remove one of these dependencies",
		},
		pass: "  a: {model: {source: lake:s.x, sink: lake:s.a, sql: SELECT 1}}\n  b: {model: {source: lake:s.a, sink: lake:s.b, sql: SELECT 1}}\n"},
	{rule: RuleUnknownConn,
		fail: "  a: {transfer: {from: ap, table: public.x, to: lake}}\n",
		want: []string{
			"lint.yaml:9:24: error DAG-002: tasks.a.transfer.from: unknown connection \"ap\" (did you mean \"app\"?); defined: app, bus, env, feed, lake",
		},
		pass: "  a: {transfer: {from: app, table: public.x, to: lake}}\n"},
	{rule: RuleDuplicateSink,
		fail: "  a: {transfer: {from: app, table: public.x, to: lake, dest_table: s.x}}\n  b: {transfer: {from: app, table: public.y, to: lake, dest_table: s.x}}\n",
		want: []string{
			"lint.yaml:10:50: error DAG-003: tasks.b.transfer.to: sink lake:s.x is also written by task a: a table has one writer (merge the tasks, or write another table)",
		},
		pass: "  a: {transfer: {from: app, table: public.x, to: lake, dest_table: s.x}}\n  b: {transfer: {from: app, table: public.y, to: lake, dest_table: s.y}}\n"},
	{rule: RuleDroppedUpstream, sel: []string{"tag:silver"},
		fail: "  a: {transfer: {from: app, table: public.x, to: lake, dest_table: s.x}}\n  b: {model: {source: lake:s.x, sink: lake:s.b, sql: SELECT 1}, tags: [silver]}\n",
		want: []string{
			"lint.yaml:10:3: warning DAG-004: task b: upstream task a is not selected: the generated code drops this dependency (select it too, or run it elsewhere first)",
		},
		pass:   "  a: {transfer: {from: app, table: public.x, to: lake, dest_table: s.x}}\n  b: {model: {source: lake:s.x, sink: lake:s.b, sql: SELECT 1}, tags: [silver]}\n",
		passTo: []string{"tag:silver,a"}},
	{rule: RuleOrphan,
		fail: "  a: {transfer: {from: app, table: public.x, to: lake}}\n  b: {transfer: {from: app, table: public.y, to: lake}}\n",
		want: []string{
			"lint.yaml:9:3: info DAG-005: task a: no other task reads what it writes or writes what it reads: it runs on its own (intended?)",
			"lint.yaml:10:3: info DAG-005: task b: no other task reads what it writes or writes what it reads: it runs on its own (intended?)",
		},
		pass: "  a: {transfer: {from: app, table: public.x, to: lake}}\n  b: {transfer: {from: app, table: public.y, to: lake}, deps: [a]}\n"},
	{rule: RuleUnknownTask,
		fail: "  a: {transfer: {from: app, table: public.x, to: lake}, deps: [b]}\n",
		want: []string{
			"lint.yaml:9:63: error DAG-006: tasks.a.deps: unknown task \"b\"; tasks: a",
		},
		pass: "  a: {transfer: {from: app, table: public.x, to: lake}}\n"},
	{rule: RuleStreamAppend,
		fail: "  a: {stream: {source: bus, sink: lake:s.a}}\n  b: {transfer: {from: bus, table: events, to: lake, dest_table: s.b, mode: append}, deps: [a]}\n",
		want: []string{
			"lint.yaml:9:24: warning STREAM-001: task a: stream source bus (kafka) is loaded with bare append: a replay after a restart writes duplicates; use materialization: merge with key:",
			"lint.yaml:10:77: warning STREAM-001: task b: stream source bus (kafka) is loaded with bare append: a replay after a restart writes duplicates; use mode: merge with primary_key:",
		},
		pass: "  a: {stream: {source: bus, sink: lake:s.a, materialization: merge, key: [id]}}\n  b: {transfer: {from: bus, table: events, to: lake, dest_table: s.b, mode: merge}, deps: [a]}\n" +
			"  c: {stream: {source: app, table: public.x, cursor: id, sink: lake:s.c}, deps: [a]}\n"},
	{rule: RuleStreamContinuous,
		fail: "  a: {stream: {source: bus, sink: lake:s.a, trigger: continuous, materialization: merge, key: id}}\n",
		want: []string{
			"lint.yaml:9:54: warning STREAM-002: task a: trigger: continuous keeps a consumer running around the clock (always-on cost): confirm the freshness SLO needs it, or use available_now on a schedule",
		},
		pass: "  a: {stream: {source: bus, sink: lake:s.a, trigger: available_now, materialization: merge, key: id}}\n"},
	{rule: RuleStreamNoCursor,
		fail: "  a: {stream: {source: feed, sink: lake:s.a, materialization: merge, key: id}}\n  b: {stream: {source: 'ws://127.0.0.1:8080/x', sink: lake:s.b, materialization: merge, key: id}}\n  c: {stream: {source: env, sink: lake:s.c, materialization: merge, key: id}}\n",
		want: []string{
			"lint.yaml:9:24: warning STREAM-003: task a: WebSocket source without cursor: delivery is at-least-once within one connection only, and events sent while reconnecting are lost or repeated; set cursor: to an event field (an id or a sequence) to deduplicate and resume",
			"lint.yaml:10:24: warning STREAM-003: task b: WebSocket source without cursor: delivery is at-least-once within one connection only, and events sent while reconnecting are lost or repeated; set cursor: to an event field (an id or a sequence) to deduplicate and resume",
		},
		pass: "  a: {stream: {source: feed, sink: lake:s.a, materialization: merge, key: id, cursor: seq}}\n  b: {stream: {source: 'ws://127.0.0.1:8080/x', sink: lake:s.b, materialization: merge, key: id, cursor: seq}}\n"},
	{rule: RuleModelIncrementalJoin,
		fail: "  a: {model: {sources: {o: lake:s.o, c: lake:s.c}, sink: lake:s.a, sql: SELECT 1}}\n",
		want: []string{
			"lint.yaml:9:15: error MODEL-001: tasks.a.model.sources: sources c, o are all read incrementally: a join would see only the new rows of each side, and rows whose match arrived in another run are lost; declare all but one as lookup: {name: {key: [column]}} (read whole every run), or use mode: replace (re-read fully); a SQL that never joins them (a UNION ALL) declares independent: true",
		},
		pass: "  a: {model: {sources: {o: lake:s.o, c: lake:s.c}, lookup: {c: customer_id}, sink: lake:s.a, sql: SELECT 1}}\n" +
			"  b: {model: {sources: {o: lake:s.o, c: lake:s.c}, mode: replace, sink: lake:s.b, sql: SELECT 1}}\n" +
			"  c: {model: {sources: {o: lake:s.o, c: lake:s.c}, independent: true, sink: lake:s.c, sql: SELECT 1}}\n"},
	{rule: RuleModelLookupKey,
		fail: "  a: {model: {sources: {o: lake:s.o, c: lake:s.c}, lookup: [c], sink: lake:s.a, sql: SELECT 1}}\n",
		want: []string{
			"lint.yaml:9:60: error MODEL-003: tasks.a.model.lookup: lookup needs the join key of each lookup, so rows with no match are held instead of lost: write lookup: {c: {key: [column], on_missing: hold}} (hold waits for the lookup row, drop lets the SQL's join drop it)",
		},
		pass: "  a: {model: {sources: {o: lake:s.o, c: lake:s.c}, lookup: {c: {key: customer_id, on_missing: drop}}, sink: lake:s.a, sql: SELECT 1}}\n"},
}

func TestCheck_Rules(t *testing.T) {
	for _, c := range lintCases {
		t.Run(c.rule+"/fail", func(t *testing.T) {
			got := findingsOf(t, lintHead+c.fail, c.rule, c.sel)
			if !slices.Equal(got, c.want) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
		t.Run(c.rule+"/pass", func(t *testing.T) {
			if got := findingsOf(t, lintHead+c.pass, c.rule, c.passTo); len(got) > 0 {
				t.Errorf("unexpected findings:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// findingsOf checks data and returns the findings of one rule as strings.
func findingsOf(t *testing.T, data, rule string, sel []string) []string {
	t.Helper()
	fs, err := Check([]byte(data), "lint.yaml", sel...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f.String())
		}
	}
	return out
}

func TestCheck_Medallion(t *testing.T) {
	fs, err := CheckFile("../examples/medallion/weir.yaml")
	if err != nil || len(fs) != 0 {
		t.Errorf("medallion findings: %v %v", fs, err)
	}
	fs, err = CheckFile("../examples/medallion/weir.yaml", "tag:gold")
	var rules []string
	for _, f := range fs {
		rules = append(rules, f.Rule+" "+f.Task)
	}
	want := []string{"DAG-004 gold_revenue", "DAG-004 gold_revenue", "DAG-004 gold_revenue", "DAG-004 gold_funnel", "DAG-004 gold_funnel"}
	if err != nil || !slices.Equal(rules, want) {
		t.Errorf("findings under tag:gold = %v %v, want %v", rules, err, want)
	}
	if _, err := CheckFile("../examples/medallion/weir.yaml", "tag:nope"); err == nil {
		t.Error("a selector that matches nothing is not an error")
	}
}

func TestCheck_ParseErrorsAreFindings(t *testing.T) {
	fs, err := Check([]byte(lintHead+"  a: {model: {source: lake:s.x, sink: lake:s.a}}\n  b: {stream: {source: bus, sink: lake:s.b}}\n"), "lint.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.String())
	}
	want := []string{
		"lint.yaml:9:3: info DAG-005: task a: no other task reads what it writes or writes what it reads: it runs on its own (intended?)",
		"lint.yaml:9:7: error DAG-000: tasks.a.model: model needs sql: (inline SQL) or sql_file: (a .sql file relative to the dagfile)",
		"lint.yaml:10:3: info DAG-005: task b: no other task reads what it writes or writes what it reads: it runs on its own (intended?)",
		"lint.yaml:10:24: warning STREAM-001: task b: stream source bus (kafka) is loaded with bare append: a replay after a restart writes duplicates; use materialization: merge with key:",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEnvFindings: per task, exactly the variables of its own connections
// and stream URL; a variable another task needs is never asked for.
func TestEnvFindings(t *testing.T) {
	f, err := LoadStatic("../examples/medallion/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{"APP_PG_URL": true, "SHOP_USER": true}
	got, err := EnvFindings(f, func(v string) bool { return present[v] })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bronze_orders":    "info ENV-000: task bronze_orders needs APP_PG_URL: all provided",
		"bronze_customers": "info ENV-000: task bronze_customers needs APP_PG_URL: all provided",
		"bronze_catalog":   "error ENV-001: task bronze_catalog needs SHOP_PASSWORD, SHOP_USER, which the environment does not provide: SHOP_PASSWORD",
		"bronze_clicks":    "error ENV-001: task bronze_clicks needs KAFKA_BROKERS, which the environment does not provide: KAFKA_BROKERS",
		"silver_orders":    "info ENV-000: task silver_orders needs no environment variable",
		"gold_revenue":     "info ENV-000: task gold_revenue needs no environment variable",
		"export_revenue":   "error ENV-001: task export_revenue needs CH_PASSWORD, CH_USER, which the environment does not provide: CH_PASSWORD, CH_USER",
	}
	if len(got) != len(f.Tasks) {
		t.Errorf("%d findings for %d tasks", len(got), len(f.Tasks))
	}
	for _, fd := range got {
		s := string(fd.Severity) + " " + fd.Rule + ": " + fd.Message
		if w, ok := want[fd.Task]; ok && s != w {
			t.Errorf("task %s:\n got %s\nwant %s", fd.Task, s, w)
		}
		if fd.Line != f.Task(fd.Task).Line {
			t.Errorf("task %s: finding at line %d, task at %d", fd.Task, fd.Line, f.Task(fd.Task).Line)
		}
	}
	sel, err := EnvFindings(f, func(string) bool { return false }, "tag:gold")
	if err != nil || len(sel) != 2 || sel[0].Severity != SeverityInfo {
		t.Errorf("tag:gold: %v %v", sel, err)
	}
}
