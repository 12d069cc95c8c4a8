package pgwal

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// typeCases are column types and their edge values (SQL literals; the
// shared shape of the type torture harnesses, cdctest.Case), each in a
// table of its own, t_<name> (id, other, v), captured by a pair of its
// own. Refuse names the destinations that cannot hold some value: there a
// run must fail naming the table. The want of each value is what a bulk
// read of the source gives (TestTypeTorture_Bulk at the root holds that to
// the server's own rendering).
var typeCases = []cdctest.Case{
	{Name: "bytea", Type: "bytea", Values: lits(`'\x41420000'`, `'\x00004142'`, `'\x'`, `'\x00'`)},
	{Name: "float8", Type: "float8", Values: lits("'NaN'", "'Infinity'", "'-Infinity'", "1.7976931348623157e308", "5e-324", "'-0'"), Refuse: "mysql"},
	{Name: "float4", Type: "float4", Values: lits("'NaN'", "'Infinity'", "'-Infinity'", "3.4028235e38", "1.4e-45"), Refuse: "mysql"},
	{Name: "int8", Type: "int8", Values: lits("-9223372036854775808", "9223372036854775807", "0")},
	{Name: "int2", Type: "int2", Values: lits("-32768", "32767")},
	{Name: "numeric", Type: "numeric(38,18)", Values: lits("'99999999999999999999.999999999999999999'", "'-0.000000000000000001'", "0")},
	{Name: "text", Type: "text", Values: lits("''", "'é'", "'😀🎉'", `E'a\tb\nc'`, `'\N'`, "' '")},
	{Name: "ts", Type: "timestamp", Values: lits("'1970-01-01 00:00:00'", "'2024-02-29 12:34:56.789012'", "'9999-12-31 23:59:59.999999'"), Refuse: "clickhouse"},
	{Name: "tsinf", Type: "timestamp", Values: lits("'infinity'", "'-infinity'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "tsbc", Type: "timestamp", Values: lits("'0044-03-15 12:00:00 BC'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "ts10000", Type: "timestamp", Values: lits("'10000-01-01 00:00:00'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "tstz", Type: "timestamptz", Values: lits("'2024-01-02 03:04:05.123456+05:30'", "'1970-01-01 00:00:00+00'"), Refuse: "clickhouse"},
	{Name: "date", Type: "date", Values: lits("'1970-01-01'", "'2024-02-29'", "'9999-12-31'"), Refuse: "clickhouse"},
	{Name: "dateinf", Type: "date", Values: lits("'infinity'", "'-infinity'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "datebc", Type: "date", Values: lits("'0044-03-15 BC'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "time", Type: "time", Values: lits("'00:00:00'", "'23:59:59.999999'", "'24:00:00'")},
	{Name: "bool", Type: "bool", Values: lits("true", "false")},
	{Name: "json", Type: "json", Values: lits(`'{"a":1,"a":2}'`, `'{"b" : [1, 2.50]}'`)},
	{Name: "uuid", Type: "uuid", Values: lits("'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'")},
	{Name: "numnan", Type: "numeric", Values: lits("'NaN'"), Refuse: "mysql"},
	{Name: "intarr", Type: "int[]", Values: lits("'{1,NULL,-3}'", "'{}'"), Refuse: "mysql,clickhouse,iceberg"},
	{Name: "textarr", Type: "text[]", Values: lits(`'{"a b","",NULL,"\"q\"","{"}'`), Refuse: "mysql,clickhouse,iceberg"},
}

func lits(l ...string) []cdctest.Value {
	out := make([]cdctest.Value, len(l))
	for i, s := range l {
		out[i] = cdctest.Value{Lit: s}
	}
	return out
}

// TestRun_Types: every edge value of every type reaches every destination
// through the WAL (an insert, then an update of another column) exactly as
// a bulk read of the source gives it, or the type is refused with an error
// naming the table — never altered. Values are compared one by one in the
// routes' canonical text (cdctest.DB.Rows).
func TestRun_Types(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { runTypes(t, kind, false) })
	}
}

// TestRun_TypesChangelog: the same edge values through a changelog (ops
// appended to a log, the current state read through its __current view),
// whose values are rendered on a path of their own. Iceberg has no view
// to read through.
func TestRun_TypesChangelog(t *testing.T) {
	for _, kind := range destinations {
		if kind == "iceberg" {
			continue
		}
		t.Run(kind, func(t *testing.T) { runTypes(t, kind, true) })
	}
}

func runTypes(t *testing.T, kind string, changelog bool) {
	ctx := routestest.Context(t, 5*time.Minute)
	sdb, ddb := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
	for _, c := range typeCases {
		t.Run(c.Name, func(t *testing.T) { typeCaseRun(t, sdb, ddb, c, changelog) })
	}
}

func typeCaseRun(t *testing.T, sdb, ddb *cdctest.DB, c cdctest.Case, changelog bool) {
	ctx := routestest.Context(t, 2*time.Minute)
	name := c.Table()
	sdb.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, other int, v %s)", sdb.Table(name), c.Type))
	cfg := Config{SourceURL: sdb.URL, DestURL: ddb.URL, Tables: []Pair{{Source: sdb.Ref(name), Dest: ddb.Ref(name)}}, Changelog: changelog}
	slot, _ := cfg.Name()
	t.Cleanup(func() {
		cctx, cancel := routestest.CleanupContext()
		defer cancel()
		conn := sdbConn(t, sdb)
		defer conn.Close(cctx)
		if err := dropSlot(cctx, conn, slot); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		dropPublication(cctx, conn, slot)
	})
	refuse := c.Refuses(ddb.Kind)
	run := func(step string) bool {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			_, err := Run(ctx, cfg)
			if errors.Is(err, routes.ErrLocked) && time.Now().Before(deadline) {
				continue // a refused ClickHouse run's lease
			}
			switch {
			case err == nil:
			case refuse && strings.Contains(err.Error(), name):
				t.Logf("%s: refused: %v", step, err)
				return false
			default:
				t.Fatalf("%s: %v", step, err)
			}
			return true
		}
	}
	if !run("bootstrap") {
		return
	}
	var rows []string
	for i, v := range c.Values {
		rows = append(rows, fmt.Sprintf("(%d, %d, %s)", i+1, i, v.Lit))
	}
	rows = append(rows, fmt.Sprintf("(%d, 0, NULL)", len(c.Values)+1))
	sdb.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", sdb.Table(name), strings.Join(rows, ", ")))
	if !run("insert") {
		return
	}
	compareCase(t, sdb, ddb, c, changelog, "insert")
	sdb.Exec(t, ctx, "UPDATE "+sdb.Table(name)+" SET other = other + 100")
	if !run("update") {
		return
	}
	compareCase(t, sdb, ddb, c, changelog, "update of another column")
	if refuse {
		t.Errorf("%s: every value accepted by %s, want a refusal", c.Type, ddb.Kind)
	}
}

// compareCase holds the destination to a bulk read of the source, value
// by value (cdctest.Compare, shared with the bulk harness); with
// changelog, through the log's __current view.
func compareCase(t *testing.T, sdb, ddb *cdctest.DB, c cdctest.Case, changelog bool, step string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	table := c.Table()
	switch {
	case changelog:
		table += cdc.CurrentSuffix
	case ddb.Kind == "clickhouse":
		ddb.Exec(t, ctx, "OPTIMIZE TABLE "+ddb.Table(c.Table())+" FINAL")
	}
	cols := []string{"other", "v"}
	want, types := cdctest.SourceValues(t, ctx, sdb, c.Table(), cols)
	cdctest.Compare(t, ctx, ddb, table, cols, types, want, step)
}

func sdbConn(t *testing.T, sdb *cdctest.DB) *pgx.Conn {
	ctx, cancel := routestest.CleanupContext()
	defer cancel()
	conn, err := pgx.Connect(ctx, sdb.URL)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
