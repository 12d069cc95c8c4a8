package dagfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/scheme"
)

func TestParse_Malformed(t *testing.T) {
	for _, c := range malformed {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.yaml), "testdata/weir.yaml", nil)
			if f != nil || err == nil {
				t.Fatalf("Parse succeeded, want %d errors", len(c.want))
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want ErrorList", err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestErrorList_As(t *testing.T) {
	_, err := Parse([]byte(head+"  a:\n    transfer: {from: nope, table: x, to: lake}\n"), "w.yaml", nil)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	want := Error{File: "w.yaml", Line: 7, Col: 22, Key: "tasks.a.transfer.from", Rule: RuleUnknownConn,
		Msg: `unknown connection "nope"; defined: app, lake`}
	if *e != want {
		t.Errorf("got %+v, want %+v", *e, want)
	}
}

func TestLoad_Medallion(t *testing.T) {
	f, err := LoadStatic("../examples/medallion/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, task := range f.Order() {
		order = append(order, task.Name)
	}
	want := []string{"bronze_catalog", "bronze_clicks", "bronze_customers", "bronze_orders",
		"silver_customers", "silver_orders", "gold_revenue", "silver_sessions", "gold_funnel", "export_revenue"}
	if !slices.Equal(order, want) {
		t.Errorf("Order = %v, want %v", order, want)
	}
	checks := map[string]string{
		"name":                     f.Name,
		"schedule":                 f.Schedule + " " + f.Cron(),
		"gold_revenue upstream":    fmt.Sprint(f.Task("gold_revenue").Upstream),
		"silver_orders downstream": fmt.Sprint(f.Task("silver_orders").Downstream),
		"export upstream":          fmt.Sprint(f.Task("export_revenue").Upstream),
		"catalog sinks":            fmt.Sprint(f.Task("bronze_catalog").Sinks()),
		"gold sources":             fmt.Sprint(f.Task("gold_revenue").Sources()),
		"clicks":                   sp(f.Task("bronze_clicks").Retries, f.Task("bronze_clicks").RetryDelay, f.Task("bronze_clicks").Tags),
		"gold settings":            sp(f.Task("gold_revenue").Retries, f.Task("gold_revenue").Timeout, f.Task("gold_revenue").Pool),
		"vars":                     fmt.Sprint(f.Vars(f.Task("bronze_catalog")), f.Vars(f.Task("silver_orders"))),
		"contract":                 sp(f.Task("silver_orders").Contract.File, len(f.Task("silver_orders").Contract.Rules), f.Task("silver_orders").Contract.MaxBadRatio),
		"sql_file":                 f.Task("silver_orders").Model.SQLPath,
		"chunk":                    fmt.Sprint(f.Task("bronze_catalog").Transfer.ChunkBytes),
	}
	wantChecks := map[string]string{
		"name":                     "medallion",
		"schedule":                 "@hourly 0 * * * *",
		"gold_revenue upstream":    "[bronze_catalog silver_customers silver_orders]",
		"silver_orders downstream": "[gold_funnel gold_revenue]",
		"export upstream":          "[gold_funnel gold_revenue]",
		"catalog sinks":            "[lake:bronze.products lake:bronze.categories]",
		"gold sources":             "[lake:silver.customers lake:silver.orders lake:bronze.products]",
		"clicks":                   "5 30s [bronze medallion streaming]",
		"gold settings":            "2 1h0m0s duckdb",
		"vars":                     "[SHOP_PASSWORD SHOP_USER] []",
		"contract":                 "../examples/medallion/contracts/silver_orders.yaml 4 0.05",
		"sql_file":                 "../examples/medallion/models/silver_orders.sql",
		"chunk":                    "8388608",
	}
	for k, w := range wantChecks {
		if checks[k] != w {
			t.Errorf("%s = %q, want %q", k, checks[k], w)
		}
	}
}

func TestLoad_Env(t *testing.T) {
	t.Setenv("APP_PG_URL", "postgres://weir:hunter2@127.0.0.1:5432/app")
	path := writeFile(t, head+"  a: {transfer: {from: app, table: public.x, to: lake}}\n")
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Connections["app"]
	if c.URL() != "postgres://weir:hunter2@127.0.0.1:5432/app" || !c.Expanded() || c.Raw != "${APP_PG_URL}" {
		t.Errorf("app = %q (expanded %v), raw %q", c.URL(), c.Expanded(), c.Raw)
	}
	if c.Scheme() != "postgres" || f.Connections["lake"].Scheme() != "iceberg" {
		t.Errorf("schemes %q %q", c.Scheme(), f.Connections["lake"].Scheme())
	}
	s, err := LoadStatic(path)
	if err != nil || s.Connections["app"].Expanded() || s.Connections["app"].Scheme() != "" {
		t.Errorf("LoadStatic: %v, expanded %v", err, s.Connections["app"].Expanded())
	}
}

func TestParse_SecretsNeverEchoed(t *testing.T) {
	const secret = "hunter2"
	env := map[string]string{"PG_PASS": secret, "APP_PG_URL": "postgres://u:" + secret + "@h/db"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	data := "version: 1\nconnections:\n  app: ${APP_PG_URL}\n  pg: postgres://u:${PG_PASS}@h/db\n  lit: postgres://u:" + secret + "@h/db?sslpassword=" + secret + "\n" +
		"  kafka: kafka://h/topic\n  lake: file:///lake\ntasks:\n" +
		"  a: {transfer: {from: app, table: public.x, to: lake, dest_table: x}}\n" +
		"  b: {stream: {source: 'sse://u:${PG_PASS}@h/events', sink: lake:s.b}}\n" +
		"  c: {transfer: {from: lit, table: public.y, to: pg, mode: bogus}}\n"
	_, err := Parse([]byte(data), "w.yaml", getenv)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks or is nil: %v", err)
	}
	f, err := Parse([]byte(strings.Replace(data, "bogus", "append", 1)), "w.yaml", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if f.Connections["pg"].URL() != "postgres://u:hunter2@h/db" || f.Task("b").Stream.SourceURL() != "sse://u:hunter2@h/events" {
		t.Errorf("expansion: %q %q", f.Connections["pg"].URL(), f.Task("b").Stream.SourceURL())
	}
	for _, s := range []string{fmt.Sprint(f), fmt.Sprintf("%+v %#v", f, f), fmt.Sprintf("%v %+v", f.Connections, f.Tasks),
		fmt.Sprintf("%+v %#v", *f.Connections["lit"], f.Connections["app"]), fmt.Sprintf("%+v", *f.Task("b").Stream)} {
		if strings.Contains(s, secret) {
			t.Errorf("printed secret: %s", s)
		}
	}
	if got := f.Connections["lit"].String(); got != "lit=postgres://u:xxxxx@h/db?sslpassword=xxxxx" {
		t.Errorf("String = %q", got)
	}
}

func TestParse_UnsetVariable(t *testing.T) {
	env := map[string]string{"EMPTY": ""}
	data := "version: 1\nconnections:\n  app: postgres://${PG_USER}:${PG_PASS}@h/db\n  e: ${EMPTY}\n  lake: file:///l\n" +
		"tasks:\n  a: {transfer: {from: app, table: x, to: lake}}\n  b: {transfer: {from: e, table: x, to: lake, dest_table: y}}\n"
	_, err := Parse([]byte(data), "w.yaml", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	want := "w.yaml:3:8: connections.app: environment variable PG_USER is not set (the connection is postgres://${PG_USER}:${PG_PASS}@h/db)\n" +
		"w.yaml:3:8: connections.app: environment variable PG_PASS is not set (the connection is postgres://${PG_USER}:${PG_PASS}@h/db)\n" +
		"w.yaml:4:6: connections.e: the connection is empty once expanded (${EMPTY}): set EMPTY"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
}

func TestExpand(t *testing.T) {
	getenv := func(k string) (string, bool) { return map[string]string{"A": "x$y", "B": "2"}[k], k != "C" }
	tests := []struct{ raw, want, vars string }{
		{"${A}", "x$y", "[A]"},
		{"p://${A}:${B}@h/$${A}/$HOME", "p://x$y:2@h/${A}/$HOME", "[A B]"},
		{"plain", "plain", "[]"},
	}
	for _, tc := range tests {
		vars, err := varRefs(tc.raw)
		got, missing := expand(tc.raw, getenv)
		if err != nil || got != tc.want || fmt.Sprint(vars) != tc.vars || len(missing) > 0 {
			t.Errorf("%q: got %q %v %v %v", tc.raw, got, vars, err, missing)
		}
	}
}

func TestParseTableAddr(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"lake:silver.orders", "lake silver orders", ""},
		{"lake:orders", "lake  orders", ""},
		{`lake:db."ns.orders"`, "lake db ns.orders", ""},
		{"lake:db.ns.orders", "", `bad table address "lake:db.ns.orders": table "db.ns.orders": 3 name parts, want schema.table or table (quote a name that holds a dot)`},
		{"lake:s.", "", `bad table address "lake:s.": table "s.": empty name part`},
		{`lake:"open`, "", `bad table address "lake:\"open": table "\"open": unclosed quote`},
		{"silver.orders", "", `bad table address "silver.orders": write connection:schema.table, e.g. lake:silver.orders`},
		{"Lake:x", "", `bad table address "Lake:x": write connection:schema.table, e.g. lake:silver.orders`},
		{"lake:a:b", "", `bad table address "lake:a:b": write connection:schema.table, e.g. lake:silver.orders`},
		{"lake:a b", "", `bad table address "lake:a b": table "a b": a blank or control character in an unquoted name (quote the name part)`},
		{"lake:.x", "", `bad table address "lake:.x": table ".x": empty name part`},
	}
	for _, tc := range tests {
		a, err := ParseTableAddr(tc.in)
		got := strings.Join([]string{a.Conn, a.Schema, a.Table}, " ")
		if tc.err != "" {
			got = fmt.Sprint(err)
			tc.want = tc.err
		}
		if got != tc.want {
			t.Errorf("ParseTableAddr(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTransfer_Addrs(t *testing.T) {
	data := "version: 1\nconnections:\n  files: file://./data\n  pg: postgres://h/db\n  lake: iceberg://?x=1\ntasks:\n" +
		"  a: {transfer: {from: files, tables: [in/orders.csv, customers.parquet], schema: bronze, to: lake}}\n" +
		"  b: {transfer: {from: pg, tables: [public.x, y], schema: raw, to: lake}}\n" +
		"  c: {transfer: {from: pg, table: public.z, to: lake}}\n" +
		"  d: {transfer: {from: lake, table: bronze.orders, to: files, dest_table: out/orders.parquet}}\n"
	f, err := Parse([]byte(data), "w.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(f.Task("a").Sources(), f.Task("a").Sinks(), f.Task("b").Sinks(), f.Task("c").Sinks(),
		f.Task("d").Sinks(), f.Task("d").Upstream, f.Task("d").Sinks()[0].Parts())
	want := "[files:in/orders.csv files:customers.parquet] [lake:bronze.orders lake:bronze.customers] [lake:raw.x lake:raw.y] [lake:public.z] [files:out/orders.parquet] [a] [files out/orders.parquet]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestParse_Defaults(t *testing.T) {
	data := head + "  a: {transfer: {from: app, table: public.x, to: lake}}\n" +
		"  b:\n    transfer: {from: app, table: public.y, to: lake}\n    retries: 0\n    tags: [x, base]\n    timeout: 5m\n    pool: p2\n" +
		"defaults: {retries: 3, retry_delay: 90s, timeout: 1h, tags: [base], pool: p1, schedule: '*/15 * * * *'}\n"
	f, err := Parse([]byte(data), "dags/my-dag.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Task("a"), f.Task("b")
	got := sp(a.Retries, a.RetryDelay, a.Timeout, a.Tags, a.Pool, "|", b.Retries, b.RetryDelay, b.Timeout, b.Tags, b.Pool, "|", f.Schedule, f.Cron(), f.Name)
	want := "3 1m30s 1h0m0s [base] p1 | 0 1m30s 5m0s [base x] p2 | */15 * * * * */15 * * * * my_dag"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	g, _ := Parse([]byte(head+"  a: {transfer: {from: app, table: public.x, to: lake}}\n"), "w.yaml", nil)
	if g.Task("a").Retries != DefaultRetries || g.Task("a").RetryDelay != DefaultRetryDelay || g.Task("a").Timeout != 0 || g.Schedule != "" {
		t.Errorf("built-in defaults: %+v", g.Task("a"))
	}
}

func TestDefaultName(t *testing.T) {
	tests := map[string]string{
		"examples/medallion/weir.yaml": "medallion",
		"x/My Dag.yml":                 "my_dag",
		"x/2024-dag.yaml":              "weir_2024_dag",
		"/srv/pipelines/weir.yml":      "pipelines",
	}
	for in, want := range tests {
		if got := defaultName(in); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFile_Select(t *testing.T) {
	f, err := LoadStatic("../examples/medallion/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sel  []string
		want string
	}{
		{nil, "10"},
		{[]string{"tag:gold"}, "[gold_funnel gold_revenue]"},
		{[]string{"tag:gold,silver_orders", "kind:stream"}, "[bronze_clicks gold_funnel gold_revenue silver_orders]"},
		{[]string{"tag:nope"}, `select "tag:nope": no task matches (tasks: bronze_catalog, bronze_clicks, bronze_customers, bronze_orders, export_revenue, gold_funnel, gold_revenue, silver_customers, silver_orders, silver_sessions; tags: bronze, export, gold, medallion, pii, silver, streaming)`},
		{[]string{"label:x"}, `select "label:x": unknown selector "label:": use a task name, tag:NAME or kind:transfer|model|stream`},
	}
	for _, tc := range tests {
		tasks, err := f.Select(tc.sel...)
		var names []string
		for _, t := range tasks {
			names = append(names, t.Name)
		}
		got := fmt.Sprint(names)
		if tc.sel == nil {
			got = fmt.Sprint(len(tasks))
		}
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Select(%q) = %s, want %s", tc.sel, got, tc.want)
		}
	}
}

func TestFile_OrderDeterministic(t *testing.T) {
	data := head
	for _, n := range []string{"d", "b", "c", "a", "e"} {
		data += "  " + n + ": {transfer: {from: app, table: public." + n + ", to: lake}}\n"
	}
	data += "  z: {transfer: {from: app, table: public.z, to: lake}, deps: [e, b]}\n"
	f, err := Parse([]byte(data), "w.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range f.Order() {
		got = append(got, task.Name)
	}
	if want := []string{"a", "b", "c", "d", "e", "z"}; !slices.Equal(got, want) {
		t.Errorf("Order = %v, want %v", got, want)
	}
	if f.Task("z").RetryDelay != time.Minute {
		t.Errorf("retry delay %v", f.Task("z").RetryDelay)
	}
}

// writeFile writes a dagfile into a temporary folder and returns its path.
func writeFile(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sp formats its arguments separated by blanks.
func sp(args ...any) string { return strings.TrimSuffix(fmt.Sprintln(args...), "\n") }

func TestParse_ModelCursorAndLookup(t *testing.T) {
	tests := []struct {
		name, model string
		cursor      map[string]string
		lookup      []string
	}{
		{"source with cursor", "{source: app:public.x, sink: lake:s.a, sql: SELECT 1, cursor: updated_at}",
			map[string]string{"input": "updated_at"}, nil},
		{"sources with a lookup", "{sources: {o: app:public.o, c: app:public.c}, lookup: {c: customer_id}, sink: lake:s.a, sql: SELECT 1, cursor: {o: updated_at}}",
			map[string]string{"o": "updated_at"}, []string{"c"}},
		{"a lookup declared in full", "{sources: {o: app:public.o, c: app:public.c}, lookup: {c: {key: [a, b], on_missing: drop}}, sink: lake:s.a, sql: SELECT 1}",
			nil, []string{"c"}},
		{"a list of lookups, replace", "{sources: {o: app:public.o, c: app:public.c}, lookup: [c], mode: replace, sink: lake:s.a, sql: SELECT 1}",
			nil, []string{"c"}},
		{"neither", "{source: app:public.x, sink: lake:s.a, sql: SELECT 1}", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(head+"  a:\n    model: "+tt.model+"\n"), "w.yaml", func(string) (string, bool) { return "postgres://h/db", true })
			if err != nil {
				t.Fatal(err)
			}
			m := f.Task("a").Model
			if fmt.Sprint(m.Cursor) != fmt.Sprint(tt.cursor) || !slices.Equal(m.Lookup, tt.lookup) {
				t.Errorf("cursor %v lookup %v, want %v %v", m.Cursor, m.Lookup, tt.cursor, tt.lookup)
			}
			for _, name := range tt.lookup {
				if !m.IsLookup(name) {
					t.Errorf("IsLookup(%q) = false", name)
				}
			}
		})
	}
}

// Every scheme routes/stream opens is an inline stream source dagfile
// accepts (sse+https:// and sse+http:// were refused).
func TestParse_EveryStreamScheme(t *testing.T) {
	for _, sch := range scheme.Streams {
		data := "version: 1\nconnections:\n  lake: file:///lake\ntasks:\n  a: {stream: {source: '" + sch + "://h/x?group=g', sink: lake:s.a}}\n"
		f, err := Parse([]byte(data), "w.yaml", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Errorf("%s: %v", sch, err)
			continue
		}
		if got := f.Task("a").Stream.SourceScheme(); got != sch {
			t.Errorf("%s: SourceScheme = %q", sch, got)
		}
	}
	if !slices.Contains(scheme.Streams, "sse+https") {
		t.Fatal("the catalogue lost sse+https")
	}
}
