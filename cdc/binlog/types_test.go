package binlog

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// typeCase is one column type and its edge values (SQL literals), each in
// a table of its own: t_<name> (id, other, v). refuse names the
// destinations that cannot hold some value: there the run must fail
// naming the table, and the case is dropped.
type typeCase struct {
	name, typ string
	values    []string
	refuse    string
}

var typeCases = []typeCase{
	{"bin", "BINARY(4)", []string{"x'41420000'", "x'00004142'", "x'00000000'", "x'FFFFFFFF'", "x'00'"}, ""},
	{"bin300", "BINARY(255)", []string{"x'4100'", "CONCAT(REPEAT(x'01', 254), x'00')"}, ""},
	{"varbin", "VARBINARY(8)", []string{"x'4100'", "x''", "x'00'", "x'0000000000000000'"}, ""},
	{"blob", "BLOB", []string{"x''", "x'00ff00'"}, ""},
	{"tinyint", "TINYINT", []string{"-128", "127", "0"}, ""},
	{"int", "INT", []string{"-2147483648", "2147483647"}, ""},
	{"uint", "INT UNSIGNED", []string{"4294967295", "0"}, ""},
	{"bigint", "BIGINT", []string{"-9223372036854775808", "9223372036854775807"}, ""},
	{"ubigint", "BIGINT UNSIGNED", []string{"18446744073709551615", "9223372036854775808", "0"}, ""},
	{"dec38", "DECIMAL(38,18)", []string{"'99999999999999999999.999999999999999999'", "'-0.000000000000000001'", "0"}, ""},
	{"dec65", "DECIMAL(65,30)", []string{"'99999999999999999999999999999999999.999999999999999999999999999999'", "'-0.000000000000000000000000000001'"}, ""},
	{"double", "DOUBLE", []string{"1.7976931348623157e308", "-2.2250738585072014e-308", "0.1", "-0"}, ""},
	{"str", "VARCHAR(20)", []string{"''", "'é'", "'😀🎉'", "'a\\tb\\nc'", "'\\\\N'", "' '"}, ""},
	{"text", "TEXT", []string{"''", "'𝄞 mixed ü'"}, ""},
	{"char", "CHAR(5)", []string{"''", "'ab'", "'ü😀'"}, ""},
	{"date", "DATE", []string{"'1970-01-01'", "'2024-02-29'", "'2105-12-31'"}, ""},
	{"datewide", "DATE", []string{"'1000-01-01'", "'9999-12-31'"}, "clickhouse"}, // outside Date
	{"datetime", "DATETIME(6)", []string{"'1000-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'1970-01-01 00:00:00'"}, "clickhouse"},
	{"datetime0", "DATETIME", []string{"'1970-01-01 00:00:00'", "'2024-01-02 03:04:05'", "'2105-12-31 23:59:59'"}, ""},
	{"datetime0wide", "DATETIME", []string{"'2106-02-07 06:28:15'"}, "clickhouse"},                                      // past what 18.16's DateTime text holds
	{"timestamp", "TIMESTAMP(6) NULL", []string{"'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'"}, "clickhouse"}, // a fraction DateTime does not hold
	{"time", "TIME(6)", []string{"'00:00:00'", "'23:59:59.999999'"}, ""},
	// YEAR 0 (0000) is left out: a MySQL destination stores it as 2000
	// (LOAD DATA reads '0' into YEAR as 2000), the bulk route too; not
	// fixed here.
	{"year", "YEAR", []string{"1901", "2155"}, ""},
}

// TestRun_Types: every edge value of every type reaches every destination
// through the binlog (an insert, then an update of another column, which
// rewrites the row from the binlog's image) exactly as a bulk read of the
// source gives it, or the type is refused with a clear error (bad input
// naming the table and column) — never altered. Values are compared one
// by one in the routes' canonical text (cdctest.DB.Rows).
func TestRun_Types(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 4*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL}
			if kind == "clickhouse" {
				cfg.DestURL += "?lease=2s"
			}
			live := map[string]typeCase{}
			for _, c := range typeCases {
				src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, other INT, v %s)", src.Table("t_"+c.name), c.typ))
				cfg.Tables = append(cfg.Tables, Pair{Source: src.Ref("t_" + c.name), Dest: dst.Ref("t_" + c.name)})
				live["t_"+c.name] = c
			}
			// run, dropping a refused table from the capture: it must be
			// refused clearly.
			run := func(step string) {
				t.Helper()
				for {
					_, err := Run(ctx, cfg)
					if err == nil {
						return
					}
					if errors.Is(err, routes.ErrLocked) { // a refused ClickHouse run's lease (2 s)
						time.Sleep(200 * time.Millisecond)
						continue
					}
					name := refusedTable(err, cfg)
					if name == "" || !slices.Contains(strings.Split(live[name].refuse, ","), kind) {
						t.Fatalf("%s: %v (not a refusal of a type %s cannot hold)", step, err, kind)
					}
					t.Logf("%s: %s refused: %v", step, live[name].typ, err)
					delete(live, name)
					cfg.Tables = slices.DeleteFunc(cfg.Tables, func(p Pair) bool { return p.Source.Name == name })
					if len(cfg.Tables) == 0 {
						t.Fatalf("%s: every type refused", step)
					}
				}
			}
			run("bootstrap")
			for name, c := range live {
				var rows []string
				for i, v := range c.values {
					rows = append(rows, fmt.Sprintf("(%d, %d, %s)", i+1, i, v))
				}
				rows = append(rows, fmt.Sprintf("(%d, 0, NULL)", len(c.values)+1))
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", src.Table(name), strings.Join(rows, ", ")))
			}
			run("insert")
			compareTypes(t, src, dst, live, "insert")
			for name := range live {
				src.Exec(t, ctx, "UPDATE "+src.Table(name)+" SET other = other + 100")
			}
			run("update")
			compareTypes(t, src, dst, live, "update of another column")
			for _, c := range typeCases {
				_, ok := live["t_"+c.name]
				if want := slices.Contains(strings.Split(c.refuse, ","), kind); !ok != want {
					t.Errorf("%s: refused %v, want refused %v", c.typ, !ok, want)
				}
			}
		})
	}
}

// refusedTable is the captured table an error names ("schema.t_x"), or "".
func refusedTable(err error, cfg Config) string {
	for _, p := range cfg.Tables {
		if strings.Contains(err.Error(), p.Source.String()+".") || strings.Contains(err.Error(), p.Source.String()+":") ||
			strings.Contains(err.Error(), p.Dest.String()+".") || strings.Contains(err.Error(), p.Dest.String()+":") {
			return p.Source.Name
		}
	}
	return ""
}

// isValueErr: a destination's refusal of one value names the column.
func isValueErr(err error) bool {
	var pe *routes.ProbeError
	return errors.As(err, &pe) && pe.Column != ""
}

func compareTypes(t *testing.T, src, dst *cdctest.DB, live map[string]typeCase, step string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	cols := []string{"id", "other", "v"}
	for name, c := range live {
		if dst.Kind == "clickhouse" {
			dst.Exec(t, ctx, "OPTIMIZE TABLE "+dst.Table(name)+" FINAL")
		}
		want, got := src.Rows(t, ctx, name, cols), dst.Rows(t, ctx, name, cols)
		if dst.Kind == "clickhouse" {
			// ClickHouse holds binary and TIME as String: compare the text
			// the bulk route writes there
			for i := range got {
				f := strings.SplitN(got[i], "|", 3)
				switch {
				case f[2] == `\N`:
				case strings.Contains(c.typ, "BINARY"), c.typ == "BLOB":
					got[i] = f[0] + "|" + f[1] + "|" + strings.ToUpper(hex.EncodeToString([]byte(f[2])))
				}
			}
			for i := range want {
				if c.typ == "TIME(6)" {
					want[i], got[i] = trimFraction(want[i]), trimFraction(got[i])
				}
			}
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: %s (%s): destination %q, source %q", step, name, c.typ, got, want)
		}
	}
}

// TestRun_InvalidTemporal: a zero or invalid date (a permissive sql_mode
// lets them in) or a TIME outside 00:00–24:00 reaching the binlog is
// refused for every destination, with the bulk read's message: the table,
// the column and the fix (zero_dates=null, time=duration), where
// ClickHouse stored date 0 and 1970-01-01. With zero_dates=null in the
// source URL the dates land as the bulk read gives them: NULL; with
// time=duration (from the bootstrap on) the times land exact.
func TestRun_InvalidTemporal(t *testing.T) {
	bad := []struct{ col, value, hint string }{
		{"d", "'2024-02-00'", "zero_dates=null"},
		{"d", "'0000-00-00'", "zero_dates=null"},
		{"dt", "'2024-00-01 01:02:03'", "zero_dates=null"},
		{"dt", "'2024-02-30 00:00:00'", "zero_dates=null"},
		{"tm", "'25:00:00'", "time=duration"},
		{"tm", "'-00:00:01'", "time=duration"},
	}
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 3*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			for i, b := range bad {
				name := fmt.Sprintf("tz%d", i)
				tbl := src.Table(name)
				src.Exec(t, ctx, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, d DATE, dt DATETIME, tm TIME)")
				src.Exec(t, ctx, "INSERT INTO "+tbl+" VALUES (1, '2024-01-02', '2024-01-02 03:04:05', '01:02:03')")
				cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref(name), Dest: dst.Ref(name)}}}
				if _, err := Run(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				src.Exec(t, ctx, fmt.Sprintf("SET SESSION sql_mode = ''; INSERT INTO %s (id, %s) VALUES (10, %s); SET SESSION sql_mode = DEFAULT", tbl, b.col, b.value))
				_, err := Run(ctx, cfg)
				var pe *routes.ProbeError
				if !errors.As(err, &pe) || !errors.Is(err, routes.ErrBadInput) || pe.Table != src.Ref(name).String() || pe.Column != b.col || !strings.Contains(pe.Hint, b.hint) {
					t.Fatalf("%s = %s: run = %v, want the bulk read's refusal naming %s.%s with ?%s", b.col, b.value, err, src.Ref(name), b.col, b.hint)
				}
				if b.hint != "zero_dates=null" {
					continue
				}
				cfg.SourceURL = withParam(src.URL, "zero_dates=null")
				if _, err := Run(ctx, cfg); err != nil {
					t.Fatalf("%s = %s with zero_dates=null: %v", b.col, b.value, err)
				}
				if dst.Kind == "clickhouse" {
					dst.Exec(t, ctx, "OPTIMIZE TABLE "+dst.Table(name)+" FINAL")
				}
				if got := dst.Rows(t, ctx, name, []string{"id", b.col}); !slices.Equal(got, []string{`10|\N`, "1|" + map[string]string{"d": "2024-01-02", "dt": "2024-01-02 03:04:05.000000"}[b.col]}) {
					t.Fatalf("%s = %s with zero_dates=null: destination %q, want row 10 NULL", b.col, b.value, got)
				}
			}
			if kind != "postgres" {
				return
			}
			// time=duration: TIME's whole range, exact
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("dur")+" (id INT PRIMARY KEY, tm TIME(6))")
			cfg := Config{SourceURL: withParam(src.URL, "time=duration"), DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("dur"), Dest: dst.Ref("dur")}}}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("dur")+" VALUES (1, '25:00:00'), (2, '-00:00:01'), (3, '838:59:59'), (4, '-838:59:59'), (5, '00:00:00.000001')")
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			// the literals' microseconds
			want := "1=90000000000,2=-1000000,3=3020399000000,4=-3020399000000,5=1"
			got := dst.Query(t, ctx, "SELECT string_agg(id || '=' || (extract(epoch FROM tm) * 1000000)::bigint, ',' ORDER BY id) FROM "+dst.Table("dur"))
			if got != want {
				t.Fatalf("time=duration: destination %s, source %s", got, want)
			}
		})
	}
}

func withParam(raw, param string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + param
	}
	return raw + "?" + param
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
