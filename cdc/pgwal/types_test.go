package pgwal

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// typeCase is one column type and its edge values (SQL literals) in a
// table of its own, t_<name> (id, other, v), captured by a pair of its
// own. refuse names the destinations that cannot hold some value: there a
// run must fail naming the table.
type typeCase struct {
	name, typ string
	values    []string
	refuse    string
}

var typeCases = []typeCase{
	{"bytea", "bytea", []string{`'\x41420000'`, `'\x00004142'`, `'\x'`, `'\x00'`}, ""},
	{"float8", "float8", []string{"'NaN'", "'Infinity'", "'-Infinity'", "1.7976931348623157e308", "5e-324", "'-0'"}, "mysql,clickhouse"},
	{"float4", "float4", []string{"'NaN'", "'Infinity'", "'-Infinity'", "3.4028235e38", "1.4e-45"}, "mysql"},
	{"int8", "int8", []string{"-9223372036854775808", "9223372036854775807", "0"}, ""},
	{"int2", "int2", []string{"-32768", "32767"}, ""},
	{"numeric", "numeric(38,18)", []string{"'99999999999999999999.999999999999999999'", "'-0.000000000000000001'", "0"}, ""},
	{"text", "text", []string{"''", "'é'", "'😀🎉'", `E'a\tb\nc'`, `'\N'`, "' '"}, ""},
	{"ts", "timestamp", []string{"'1970-01-01 00:00:00'", "'2024-02-29 12:34:56.789012'", "'9999-12-31 23:59:59.999999'"}, "clickhouse"},
	{"tsinf", "timestamp", []string{"'infinity'", "'-infinity'"}, "mysql,clickhouse,iceberg"},
	{"tsbc", "timestamp", []string{"'0044-03-15 12:00:00 BC'"}, "mysql,clickhouse,iceberg"},
	{"ts10000", "timestamp", []string{"'10000-01-01 00:00:00'"}, "mysql,clickhouse,iceberg"},
	{"tstz", "timestamptz", []string{"'2024-01-02 03:04:05.123456+05:30'", "'1970-01-01 00:00:00+00'"}, "clickhouse"},
	{"date", "date", []string{"'1970-01-01'", "'2024-02-29'", "'9999-12-31'"}, "clickhouse"},
	{"dateinf", "date", []string{"'infinity'", "'-infinity'"}, "mysql,clickhouse,iceberg"},
	{"datebc", "date", []string{"'0044-03-15 BC'"}, "mysql,clickhouse,iceberg"},
	{"time", "time", []string{"'00:00:00'", "'23:59:59.999999'", "'24:00:00'"}, "iceberg"},
	{"bool", "bool", []string{"true", "false"}, ""},
	{"uuid", "uuid", []string{"'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"}, ""},
}

// TestRun_Types: every edge value of every type reaches every destination
// through the WAL (an insert, then an update of another column) exactly as
// a bulk read of the source gives it, or the type is refused with an error
// naming the table — never altered. Values are compared one by one in the
// routes' canonical text (cdctest.DB.Rows).
func TestRun_Types(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 5*time.Minute)
			sdb, ddb := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
			for _, c := range typeCases {
				t.Run(c.name, func(t *testing.T) { typeCaseRun(t, sdb, ddb, c) })
			}
		})
	}
}

func typeCaseRun(t *testing.T, sdb, ddb *cdctest.DB, c typeCase) {
	ctx := routestest.Context(t, 2*time.Minute)
	name := "t_" + c.name
	sdb.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, other int, v %s)", sdb.Table(name), c.typ))
	cfg := Config{SourceURL: sdb.URL, DestURL: ddb.URL, Tables: []Pair{{Source: sdb.Ref(name), Dest: ddb.Ref(name)}}}
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
	refuse := slices.Contains(strings.Split(c.refuse, ","), ddb.Kind)
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
	for i, v := range c.values {
		rows = append(rows, fmt.Sprintf("(%d, %d, %s)", i+1, i, v))
	}
	rows = append(rows, fmt.Sprintf("(%d, 0, NULL)", len(c.values)+1))
	sdb.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", sdb.Table(name), strings.Join(rows, ", ")))
	if !run("insert") {
		return
	}
	compareCase(t, sdb, ddb, c, "insert")
	sdb.Exec(t, ctx, "UPDATE "+sdb.Table(name)+" SET other = other + 100")
	if !run("update") {
		return
	}
	compareCase(t, sdb, ddb, c, "update of another column")
	if refuse {
		t.Errorf("%s: every value accepted by %s, want a refusal", c.typ, ddb.Kind)
	}
}

func compareCase(t *testing.T, sdb, ddb *cdctest.DB, c typeCase, step string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	name := "t_" + c.name
	if ddb.Kind == "clickhouse" {
		ddb.Exec(t, ctx, "OPTIMIZE TABLE "+ddb.Table(name)+" FINAL")
	}
	cols := []string{"id", "other", "v"}
	want, got := sdb.Rows(t, ctx, name, cols), ddb.Rows(t, ctx, name, cols)
	if ddb.Kind == "clickhouse" {
		// ClickHouse 18.16 holds bytea and time as String, bool as UInt8:
		// compare the text the bulk route writes there
		for i := range got {
			f := strings.SplitN(got[i], "|", 3)
			switch {
			case f[2] == `\N`:
			case c.typ == "bytea":
				got[i] = f[0] + "|" + f[1] + "|" + strings.ToUpper(hex.EncodeToString([]byte(f[2])))
			case c.typ == "bool":
				got[i] = f[0] + "|" + f[1] + "|" + map[string]string{"1": "true", "0": "false"}[f[2]]
			case c.typ == "time":
				want[i], got[i] = trimFraction(want[i]), trimFraction(got[i])
			}
		}
	}
	if !slices.Equal(want, got) {
		t.Errorf("%s: %s: destination %q, source %q", step, c.typ, got, want)
	}
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

// trimFraction drops the trailing zeros of a row's last field's fraction
// ("00:00:00.000000" is "00:00:00").
func trimFraction(row string) string {
	i := strings.LastIndex(row, ".")
	if i < strings.LastIndex(row, "|") {
		return row
	}
	if frac := strings.TrimRight(row[i+1:], "0"); frac != "" {
		return row[:i+1] + frac
	}
	return row[:i]
}
