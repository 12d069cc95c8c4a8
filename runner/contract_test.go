package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// parseContract decodes an inline contract (YAML, indented for a task's
// contract: key) as the dagfile parser does.
func parseContract(t *testing.T, body string) *dagfile.Contract {
	t.Helper()
	doc := "version: 1\nconnections:\n  lake: iceberg://?catalog=sql\ntasks:\n  m:\n    model: {source: lake:s.x, sink: lake:s.y, sql: SELECT 1}\n    contract:\n" + body
	f, err := dagfile.Parse([]byte(doc), "weir.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("contract:\n%s\n%v", body, err)
	}
	return f.Task("m").Contract
}

// contractCase is an output (a DuckDB SELECT) checked by a contract: the
// reasons of its rows, in order ("" for a good row).
type contractCase struct {
	name     string
	contract string
	output   string
	key      []string
	reasons  []string
	failed   map[string]int64 // rows breaking each rule (the report's contract.rules)
	good     string           // the good rows, as "v,v|v,v" sorted ("" skips)
}

var contractCases = []contractCase{
	{
		name: "an integer type refuses a fraction (DuckDB rounds 7.5 to 8) from text and from numbers",
		contract: `      columns: [{name: n, type: int}, {name: m, type: int32}, {name: d, type: bigint}]
`,
		output:  "SELECT * FROM (VALUES ('7', '1', 2.0::DOUBLE), ('7.5', '1', 2.5::DOUBLE), ('1e3', '-0.5', NULL), ('-7.0', '3', 'NaN'::DOUBLE), (' 8 ', '9999999999', 1e300)) t(n, m, d)",
		reasons: []string{"", "type(n): not BIGINT; type(d): not BIGINT", "type(m): not INTEGER", "type(d): not BIGINT", "type(m): not INTEGER; type(d): not BIGINT"},
		good:    "7,1,2",
	},
	{
		name: "a decimal type refuses a digit past its scale (DuckDB rounds 1.005 to 1.01) from text and from numbers",
		contract: `      columns: [{name: a, type: "decimal(10,2)"}, {name: b, type: "numeric(6,0)"}, {name: c, type: decimal}]
`,
		output:  "SELECT * FROM (VALUES ('1.10', 1.0::DOUBLE, '0.5'), ('1.005', 7.0::DOUBLE, '1'), ('-2.50000', 2.5::DOUBLE, '0.0001'), ('1e-3', 3.0::DOUBLE, '2.125'), ('12345678.9', 4.0::DOUBLE, '1.1234')) t(a, b, c)",
		reasons: []string{"", "type(a): not decimal(10,2)", "type(b): not numeric(6,0); type(c): not decimal", "type(a): not decimal(10,2)", "type(c): not decimal"},
		good:    "1.10,1,0.500",
	},
	{
		name: "a timestamp text with a UTC offset is converted to UTC, not stripped of it",
		contract: `      columns: [{name: ts, type: timestamp}, {name: k, type: int}]
`,
		output:  "SELECT * FROM (VALUES ('2024-01-01T10:00:00+02:00', '1'), ('2024-01-01 10:00:00-01:30', '2'), ('2024-01-01T10:00:00Z', '3'), ('2024-01-01 10:00:00', '4'), ('2024-01-01', '5'), ('2024-02-30 10:00:00', '7')) t(ts, k)",
		reasons: []string{"", "", "", "", "", "type(ts): not TIMESTAMP"},
		good:    "2024-01-01 00:00:00,5|2024-01-01 08:00:00,1|2024-01-01 10:00:00,3|2024-01-01 10:00:00,4|2024-01-01 11:30:00,2",
	},
	{
		name: "typed before judged: a value that does not cast has one reason",
		contract: `      columns: [{name: n, type: int}]
      rules:
        - not_null: [n]
        - range: {column: n, min: 0}
        - sql: n >= 0
`,
		output:  "SELECT * FROM (VALUES ('5'), ('x'), (NULL), ('-1')) t(n)",
		reasons: []string{"", "type(n): not BIGINT", "not_null(n); sql(n >= 0)", "range(n); sql(n >= 0)"},
		failed:  map[string]int64{"type(n)": 1, "not_null(n)": 1, "range(n)": 1, "sql(n >= 0)": 2},
		good:    "5",
	},
	{
		name: "sql rules compare typed values",
		contract: `      columns: [{name: fare, type: float}, {name: cap, type: float}]
      rules:
        - sql: fare <= cap
`,
		output:  "SELECT * FROM (VALUES ('5', '20'), ('100', '20'), ('x', '20')) t(fare, cap)",
		reasons: []string{"", "sql(fare <= cap)", "type(fare): not DOUBLE"},
		failed:  map[string]int64{"sql(fare <= cap)": 1, "type(fare)": 1},
		good:    "5.0,20.0",
	},
	{
		name: "accepted_values on a number column compares numbers",
		contract: `      columns: [{name: x, type: double}, {name: s}]
      rules:
        - accepted_values: {column: x, values: [1, 2]}
        - accepted_values: {column: s, values: [a, "1"]}
`,
		output:  "SELECT * FROM (VALUES (1.0, 'a'), (2, '1'), (3.0, '1.0'), (NULL, NULL)) t(x, s)",
		reasons: []string{"", "", "accepted_values(x); accepted_values(s)", ""},
		failed:  map[string]int64{"accepted_values(x)": 1, "accepted_values(s)": 1},
	},
	{
		name: "accepted_values on a number column without a contract type",
		contract: `      rules:
        - accepted_values: {column: x, values: [1, 2]}
`,
		output:  "SELECT * FROM (VALUES (1.0::DOUBLE), (2.0), (2.5)) t(x)",
		reasons: []string{"", "", "accepted_values(x)"},
		failed:  map[string]int64{"accepted_values(x)": 1},
	},
	{
		name: "unique: NULL keys are distinct",
		contract: `      columns: [{name: k, type: integer}, {name: j, type: integer}]
      rules:
        - unique: [k]
        - unique: [k, j]
`,
		output:  "SELECT * FROM (VALUES ('1', 1), ('1', NULL), (NULL, 1), (NULL, 1), ('2', 2), ('x', 2), ('y', 2)) t(k, j)",
		reasons: []string{"unique(k)", "unique(k)", "", "", "", "type(k): not BIGINT", "type(k): not BIGINT"},
		failed:  map[string]int64{"unique(k)": 2, "type(k)": 2},
	},
	{
		name: "unique with nulls_distinct: false",
		contract: `      columns: [{name: k, type: integer}]
      rules:
        - unique: {columns: [k], nulls_distinct: false}
`,
		output:  "SELECT * FROM (VALUES ('1'), (NULL), (NULL), ('x'), ('2')) t(k)",
		reasons: []string{"", "unique(k)", "unique(k)", "type(k): not BIGINT", ""},
		failed:  map[string]int64{"unique(k)": 2, "type(k)": 1},
	},
	{
		name: "required, named rules, regex on a typed column; a rule reading a value that did not cast is not evaluated",
		contract: `      columns: [{name: id, type: long, required: true}, {name: e}]
      rules:
        - {name: both, not_null: [id, e]}
        - regex: {column: id, pattern: '^[0-9]$'}
`,
		output:  "SELECT * FROM (VALUES ('1', 'a'), (NULL, 'b'), ('12', NULL), ('z', NULL)) t(id, e)",
		reasons: []string{"", "required(id); both", "both; regex(id)", "type(id): not BIGINT"},
		failed:  map[string]int64{"required(id)": 1, "both": 2, "regex(id)": 1, "type(id)": 1},
	},
	{
		name: "an upsert batch keeps the last row of each key, in the output's order",
		contract: `      columns: [{name: k, type: int}, {name: v}]
`,
		output:  "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (1, 'c'), (3, 'd'), (2, 'e'), (1, 'f')) t(k, v)",
		key:     []string{"k"},
		reasons: []string{"", "", "", "", "", ""},
		good:    "1,f|2,e|3,d",
	},
}

func openDuck(t *testing.T) *duck.DB {
	t.Helper()
	db, err := duck.Open(t.Context(), duck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestContract_Checks: the check of a contract over an output, as models
// and streams run it (contractSQL): types first, rules on typed values.
func TestContract_Checks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range contractCases {
		for _, asIs := range []bool{false, true} {
			name := tc.name
			if asIs {
				name += "/as_is" // the columns that have their contract type are not cast (asIsColumns): the same outcome
			}
			t.Run(name, func(t *testing.T) {
				db := openDuck(t)
				c := parseContract(t, tc.contract)
				if err := db.Exec(ctx, "CREATE TEMP TABLE "+outTable+" AS "+tc.output); err != nil {
					t.Fatal(err)
				}
				s, err := db.Schema(ctx, "SELECT * FROM "+outTable)
				if err != nil {
					t.Fatal(err)
				}
				var cols []string
				for _, f := range s.Fields() {
					cols = append(cols, f.Name)
				}
				plan, err := contractSQL(c, cols, "run1", tc.key)
				if asIs {
					plan, err = contractSQLAsIs(c, cols, "run1", tc.key, asIsColumns(ctx, db, c, outTable))
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Exec(ctx, plan.checkSQL); err != nil {
					t.Fatalf("%v\n%s", err, plan.checkSQL)
				}
				var got string
				if err := db.QueryRow(ctx, fmt.Sprintf("SELECT string_agg(coalesce(%s, ''), '|' ORDER BY %s) FROM %s", reasonColumn, rowColumn, checkedTable), &got); err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(tc.reasons, "|"); got != want {
					t.Errorf("reasons\n got %q\nwant %q", got, want)
				}
				failed, err := plan.countRules(ctx, db, "")
				if err != nil {
					t.Fatal(err)
				}
				if tc.failed != nil && !maps.Equal(failed, tc.failed) {
					t.Errorf("rules broken %v, want %v", failed, tc.failed)
				}
				if tc.good != "" {
					var vals []string
					for _, c := range cols {
						vals = append(vals, fmt.Sprintf("coalesce(CAST(%s AS VARCHAR), 'NULL')", duck.Ident(c)))
					}
					row := strings.Join(vals, " || ',' || ")
					var good string
					if err := db.QueryRow(ctx, fmt.Sprintf("SELECT string_agg(r, '|' ORDER BY r) FROM (SELECT %s AS r FROM (%s))", row, plan.goodSQL), &good); err != nil {
						t.Fatal(err)
					}
					if good != tc.good {
						t.Errorf("good rows %q, want %q", good, tc.good)
					}
				}
				var bad int64
				if err := db.QueryRow(ctx, "SELECT count(*) FROM ("+plan.badSQL+")", &bad); err != nil {
					t.Fatal(err)
				}
				if want := countNonEmpty(tc.reasons); bad != want {
					t.Errorf("bad rows %d, want %d", bad, want)
				}
			})
		}
	}
}

// TestContract_AsIs: a column the output already holds in its contract
// type (as DuckDB names the type) is not cast, nor rendered as text for
// strictCast's guards; any other is.
func TestContract_AsIs(t *testing.T) {
	ctx := context.Background()
	db := openDuck(t)
	if err := db.Exec(ctx, "CREATE TEMP TABLE "+outTable+" AS SELECT 1::BIGINT AS id, 2::BIGINT AS n, 1.5::DECIMAL(12,2) AS amount, 2.5::DECIMAL(12,2) AS other, TIMESTAMP '2024-01-01' AS at, 'x' AS s"); err != nil {
		t.Fatal(err)
	}
	c := parseContract(t, `      columns:
        - {name: id, type: BIGINT}
        - {name: n, type: int32}
        - {name: amount, type: "decimal(12, 2)"}
        - {name: other, type: "DECIMAL(10,2)"}
        - {name: at, type: timestamp}
        - {name: s, type: VARCHAR}
`)
	got := asIsColumns(ctx, db, c, outTable)
	want := map[string]bool{"id": true, "amount": true, "at": true, "s": true}
	if !maps.Equal(got, want) {
		t.Fatalf("as is: %v, want %v", got, want)
	}
	plan, err := contractSQLAsIs(c, []string{"id", "n", "amount", "other", "at", "s"}, "run1", nil, got)
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"id", "amount", "at", "s"} {
		if strings.Contains(plan.checkSQL, "CAST("+duck.Ident(col)+" AS") {
			t.Errorf("%s is cast:\n%s", col, plan.checkSQL)
		}
	}
	for _, col := range []string{"n", "other"} {
		if !strings.Contains(plan.checkSQL, "TRY_CAST("+duck.Ident(col)+" AS") {
			t.Errorf("%s is not cast:\n%s", col, plan.checkSQL)
		}
	}
	if err := db.Exec(ctx, plan.checkSQL); err != nil {
		t.Fatal(err)
	}
}

func countNonEmpty(ss []string) (n int64) {
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// fareEvents are the rows of TestContract_ModelAndStream, as JSON events;
// the model reads the same values from a table of text columns.
var fareEvents = []struct {
	id, fare, cap, kind string
	reason              string // "" for a good row
}{
	{"1", "5", "20", "1.0", ""},
	{"2", "100", "20", "2", "sql(fare <= cap)"},
	{"3", "-1", "20", "1", "sql(fare >= 0)"},
	{"4", `"x"`, "20", "1", "type(fare): not DOUBLE"},
	{"5", "7", "20", "3", "accepted_values(kind)"},
	{"6", "7.5", "20", "1.0", ""},
	{"7", "-5", "1", "9", "sql(fare >= 0); accepted_values(kind)"},
}

const fareContract = `
    contract:
      columns:
        - {name: id, type: int, required: true}
        - {name: fare, type: float}
        - {name: cap, type: float}
        - {name: kind, type: double}
      rules:
        - sql: fare >= 0
        - sql: fare <= cap
        - accepted_values: {column: kind, values: [1, 2]}
`

// sseServer serves payloads as Server-Sent Events (ids from 1), honouring
// Last-Event-ID, then holds the connection open.
func sseServer(t *testing.T, payloads []string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		last, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		for k := last + 1; k <= len(payloads); k++ {
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", k, payloads[k-1])
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return "sse://" + strings.TrimPrefix(srv.URL, "http://") + "/events"
}

// TestContract_ModelAndStream: one contract on a model and on a stream
// task, into PostgreSQL and into Iceberg, gives the same results: values
// typed before the rules judge them (fare <= cap compares numbers; "x" has
// one reason), accepted_values compares numbers, the same per-rule counts
// in the report (a row breaking two rules counts under both and is one
// quarantined row); the sink's columns have the contract's 64-bit types.
func TestContract_ModelAndStream(t *testing.T) {
	fx := postgrestest.New(t)
	ctx := testContext(t)
	var payloads, rows []string
	for _, e := range fareEvents {
		payloads = append(payloads, fmt.Sprintf(`{"id":%s,"fare":%s,"cap":%s,"kind":%s}`, e.id, e.fare, e.cap, e.kind))
		rows = append(rows, fmt.Sprintf("('%s', '%s', '%s', '%s')", e.id, strings.Trim(e.fare, `"`), e.cap, e.kind))
	}
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".fares (id text, fare text, cap text, kind text)",
		"INSERT INTO "+fx.Schema+".fares VALUES "+strings.Join(rows, ", "))
	sse := sseServer(t, payloads)
	dir := t.TempDir()
	lake := "iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake"
	body := "version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\n  lake: " + lake + "\ntasks:\n"
	for _, sink := range []string{"pg:S.", "lake:fares."} {
		name, _, _ := strings.Cut(sink, ":")
		body += "  " + name + "_model:\n    model: {source: pg:S.fares, sink: " + sink + name + "_model, mode: replace, sql: SELECT * FROM input}" + fareContract +
			"  " + name + "_stream:\n    stream: {source: \"" + sse + "\", sink: " + sink + name + "_stream, batch_size: 100, batch_interval: 500ms, cursor: id, materialization: merge, key: [id]}" + fareContract
	}
	path := filepath.Join(dir, "weir.yaml")
	writeFile(t, path, strings.ReplaceAll(body, "S.", fx.Schema+"."))
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wantFailed := map[string]int64{}
	var wantReasons []string
	for _, e := range fareEvents {
		if e.reason == "" {
			continue
		}
		wantReasons = append(wantReasons, e.reason)
		for _, rule := range strings.Split(e.reason, "; ") {
			rule, _, _ = strings.Cut(rule, ":")
			wantFailed[rule]++
		}
	}
	slices.Sort(wantReasons)
	sinks := map[string]*streamDAG{"pg": {sinkURL: os.Getenv(postgrestest.Env), schema: fx.Schema}, "lake": {sinkURL: ResolveURL(lake, dir), schema: "fares"}}
	wantTypes := map[string]string{"pg": "id int64, fare float64, cap float64, kind float64", "lake": "id int64, fare float64, cap float64, kind float64"}
	for _, task := range []string{"pg_model", "pg_stream", "lake_model", "lake_stream"} {
		rep := once(t, r, task)
		if c := rep.Contract; c == nil || !maps.Equal(c.Rules, wantFailed) || c.Broken != int64(len(wantReasons)) || c.Checked != int64(len(fareEvents)) || !c.Passed {
			t.Errorf("%s: contract result %+v, want rules %v, %d of %d broken, passed", task, c, wantFailed, len(wantReasons), len(fareEvents))
		}
		if rep.Quarantined != int64(len(wantReasons)) || rep.RowsOut != 2 {
			t.Errorf("%s: %d quarantined, %d written; want %d and 2", task, rep.Quarantined, rep.RowsOut, len(wantReasons))
		}
		conn, _, _ := strings.Cut(task, "_")
		d := sinks[conn]
		ids, fares, kinds := d.rows(t, task, "id"), d.rows(t, task, "fare"), d.rows(t, task, "kind")
		var got []string
		for i := range ids {
			got = append(got, ids[i]+":"+fares[i]+":"+kinds[i])
		}
		slices.Sort(got)
		if want := "1:5:1,6:7.5:1"; strings.Join(got, ",") != want {
			t.Errorf("%s: sink rows %q, want %q", task, got, want)
		}
		reasons := d.rows(t, task+QuarantineSuffix, reasonColumn)
		slices.Sort(reasons)
		if !slices.Equal(reasons, wantReasons) {
			t.Errorf("%s: quarantine reasons\n got %q\nwant %q", task, reasons, wantReasons)
		}
		if types := d.types(t, task); types != wantTypes[conn] {
			t.Errorf("%s: sink columns %q, want %q", task, types, wantTypes[conn])
		}
	}
	var pgTypes string
	err = fx.Pool.QueryRow(ctx, "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'pg_model'",
		fx.Schema).Scan(&pgTypes)
	if err != nil {
		t.Fatal(err)
	}
	if want := "id bigint, fare double precision, cap double precision, kind double precision"; pgTypes != want {
		t.Errorf("pg_model: PostgreSQL columns %q, want %q", pgTypes, want)
	}
}

// types lists a sink table's columns with their Arrow types.
func (d *streamDAG) types(t *testing.T, table string) string {
	t.Helper()
	ctx := testContext(t)
	ep, err := routes.Open(ctx, d.sinkURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	info, err := ep.(routes.Source).Probe(ctx, routes.TableRef{Schema: d.schema, Name: table})
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	var out []string
	for _, c := range info.Columns {
		out = append(out, c.Name+" "+c.Type.String())
	}
	return strings.Join(out, ", ")
}

// TestContract_UpsertRepeatedKey: an upsert batch that repeats a key
// writes the last row of each key in the SQL's order (ORDER BY), into
// PostgreSQL and into Iceberg, with and without a contract; a second
// batch updates the keys again.
func TestContract_UpsertRepeatedKey(t *testing.T) {
	fx := postgrestest.New(t)
	ctx := testContext(t)
	dir := t.TempDir()
	lake := "iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake"
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".up (seq bigint, id bigint, v text)",
		// Stored out of seq order: the SQL's ORDER BY decides what is last.
		"INSERT INTO "+fx.Schema+".up VALUES (5, 1, 'e'), (1, 1, 'a'), (2, 2, 'b'), (3, 1, 'c'), (4, 3, 'd'), (6, 3, 'f')")
	model := `    model: {source: pg:S.up, sink: SINK, mode: upsert, key: [id], cursor: seq, sql: "SELECT id, v FROM input ORDER BY seq"}
`
	contract := "    contract: {columns: [{name: id, type: int, required: true}, {name: v, type: string}]}\n"
	body := "version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\n  lake: " + lake + "\ntasks:\n" +
		"  pg_plain:\n" + strings.Replace(model, "SINK", "pg:S.pg_plain", 1) +
		"  pg_contract:\n" + strings.Replace(model, "SINK", "pg:S.pg_contract", 1) + contract +
		"  lake_plain:\n" + strings.Replace(model, "SINK", "lake:up.plain", 1) +
		"  lake_contract:\n" + strings.Replace(model, "SINK", "lake:up.contract", 1) + contract
	path := filepath.Join(dir, "weir.yaml")
	writeFile(t, path, strings.ReplaceAll(body, "S.", fx.Schema+"."))
	var log strings.Builder
	r, err := Load(path, Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sinks := map[string]*streamDAG{
		"pg_plain": {sinkURL: os.Getenv(postgrestest.Env), schema: fx.Schema}, "pg_contract": {sinkURL: os.Getenv(postgrestest.Env), schema: fx.Schema},
		"lake_plain": {sinkURL: ResolveURL(lake, dir), schema: "up"}, "lake_contract": {sinkURL: ResolveURL(lake, dir), schema: "up"},
	}
	table := map[string]string{"pg_plain": "pg_plain", "pg_contract": "pg_contract", "lake_plain": "plain", "lake_contract": "contract"}
	tasks := slices.Sorted(maps.Keys(sinks))
	check := func(want string) {
		t.Helper()
		for _, task := range tasks {
			d := sinks[task]
			ids, vs := d.rows(t, table[task], "id"), d.rows(t, table[task], "v")
			var got []string
			for i := range ids {
				got = append(got, ids[i]+":"+vs[i])
			}
			slices.Sort(got)
			if strings.Join(got, ",") != want {
				t.Errorf("%s: %v, want %s", task, got, want)
			}
		}
	}
	for _, task := range tasks {
		once(t, r, task)
	}
	check("1:e,2:b,3:f")
	for _, task := range tasks {
		if want := "task " + task + ": 3 rows of the batch repeat a key (id) of a later row"; !strings.Contains(log.String(), want) {
			t.Errorf("no warning %q in:\n%s", want, log.String())
		}
	}
	fx.Exec(t, ctx, "INSERT INTO "+fx.Schema+".up VALUES (8, 2, 'h'), (7, 2, 'g'), (9, 1, 'i')")
	for _, task := range tasks {
		once(t, r, task)
	}
	check("1:i,2:h,3:f")
}

// TestContract_ModelCases: contract cases through a model into
// PostgreSQL, from a table of text columns: the quarantine's reasons (in
// id order) and the sink's column types.
func TestContract_ModelCases(t *testing.T) {
	for _, tc := range []struct {
		name, contract string
		rows           string // (id, a, b) text values
		reasons        string // id:reason, in id order
		types          string // the sink's columns
	}{
		{"accepted_values compares numbers",
			"{columns: [{name: id, type: int}, {name: a, type: double}], rules: [{accepted_values: {column: a, values: [1, 2]}}]}",
			"('1', '1.0', NULL), ('2', '2', NULL), ('3', '3.5', NULL)", "3:accepted_values(a)", "id bigint, a double precision, b text"},
		{"unique: NULL keys are distinct",
			"{columns: [{name: id, type: int}, {name: a}], rules: [{unique: [a]}]}",
			"('1', NULL, NULL), ('2', NULL, NULL), ('3', 'x', NULL), ('4', 'x', NULL)", "3:unique(a),4:unique(a)", "id bigint, a text, b text"},
		{"a value that does not cast has one reason",
			"{columns: [{name: id, type: int}, {name: a, type: int}], rules: [{not_null: [a]}, {range: {column: a, min: 0}}, {sql: a > 0}]}",
			"('1', '5', NULL), ('2', 'x', NULL)", "2:type(a): not BIGINT", "id bigint, a bigint, b text"},
		{"float and int are 64-bit, 32-bit when asked",
			"{columns: [{name: id, type: integer}, {name: a, type: float}, {name: b, type: float32}]}",
			"('1', '1.5', '2.5')", "", "id bigint, a double precision, b real"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := postgrestest.New(t)
			ctx := testContext(t)
			fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id text, a text, b text)", "INSERT INTO "+fx.Schema+".src VALUES "+tc.rows)
			path := filepath.Join(t.TempDir(), "weir.yaml")
			writeFile(t, path, strings.ReplaceAll("version: 1\nconnections:\n  pg: ${WEIR_TEST_PG}\ntasks:\n  m:\n    model: {source: pg:S.src, sink: pg:S.out, mode: replace, sql: SELECT * FROM input}\n    contract: "+tc.contract+"\n", "S.", fx.Schema+"."))
			r, err := Load(path, Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			once(t, r, "m")
			var reasons, types string
			q := "SELECT coalesce((SELECT string_agg(id || ':' || _weir_reason, ',' ORDER BY id::int) FROM S.out__quarantine), '')"
			if tc.reasons == "" {
				q = "SELECT ''"
			}
			if err := fx.Pool.QueryRow(ctx, strings.ReplaceAll(q, "S.", fx.Schema+".")).Scan(&reasons); err != nil {
				t.Fatal(err)
			}
			if reasons != tc.reasons {
				t.Errorf("quarantine %q, want %q", reasons, tc.reasons)
			}
			err = fx.Pool.QueryRow(ctx, "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'out'", fx.Schema).Scan(&types)
			if err != nil {
				t.Fatal(err)
			}
			if types != tc.types {
				t.Errorf("sink columns %q, want %q", types, tc.types)
			}
		})
	}
}

// TestContract_RefusesCheckColumnNames: an output column named like one of
// the check's own columns is bad input naming it (it was read as the
// check's, and the quarantine table's schema failed with a duplicate
// column, exit 1); names that only start with _weir_ (a changelog's
// _weir_op, _weir_lsn) pass.
func TestContract_RefusesCheckColumnNames(t *testing.T) {
	c := parseContract(t, "      columns: [{name: id, type: BIGINT}]\n")
	for _, name := range []string{"_weir_reason", "_weir_run", "_weir_row", "_weir_r0", "_weir_r12", "_weir_t3"} {
		_, err := contractSQL(c, []string{"id", name}, "run1", nil)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), name) {
			t.Errorf("output column %s: got %v, want bad input naming it", name, err)
		}
	}
	for _, name := range []string{"_weir_op", "_weir_lsn", "_weir_reasons", "_weir_rx", "weir_run"} {
		if _, err := contractSQL(c, []string{"id", name}, "run1", []string{"id"}); err != nil {
			t.Errorf("output column %s: %v", name, err)
		}
	}
}
