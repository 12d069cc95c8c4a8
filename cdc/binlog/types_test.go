package binlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// typeCases are column types and their edge values (SQL literals; the
// shared shape of the type torture harnesses, cdctest.Case), each in a
// table of its own: t_<name> (id, other, v). Refuse names the destinations
// that cannot hold some value: there the run must fail naming the table,
// and the case is dropped. The want of each value is what a bulk read of
// the source gives (the bulk harness, TestTypeTorture_Bulk at the root,
// holds that to the server's own rendering).
var typeCases = []cdctest.Case{
	{Name: "bin", Type: "BINARY(4)", Values: lits("x'41420000'", "x'00004142'", "x'00000000'", "x'FFFFFFFF'", "x'00'")},
	{Name: "bin300", Type: "BINARY(255)", Values: lits("x'4100'", "CONCAT(REPEAT(x'01', 254), x'00')")},
	{Name: "varbin", Type: "VARBINARY(8)", Values: lits("x'4100'", "x''", "x'00'", "x'0000000000000000'")},
	{Name: "blob", Type: "BLOB", Values: lits("x''", "x'00ff00'")},
	{Name: "tinyint", Type: "TINYINT", Values: lits("-128", "127", "0")},
	{Name: "int", Type: "INT", Values: lits("-2147483648", "2147483647")},
	{Name: "uint", Type: "INT UNSIGNED", Values: lits("4294967295", "0")},
	{Name: "bigint", Type: "BIGINT", Values: lits("-9223372036854775808", "9223372036854775807")},
	{Name: "ubigint", Type: "BIGINT UNSIGNED", Values: lits("18446744073709551615", "9223372036854775808", "0")},
	{Name: "dec38", Type: "DECIMAL(38,18)", Values: lits("'99999999999999999999.999999999999999999'", "'-0.000000000000000001'", "0")},
	{Name: "dec65", Type: "DECIMAL(65,30)", Values: lits("'99999999999999999999999999999999999.999999999999999999999999999999'", "'-0.000000000000000000000000000001'")},
	{Name: "double", Type: "DOUBLE", Values: lits("1.7976931348623157e308", "-2.2250738585072014e-308", "0.1", "-0")},
	{Name: "str", Type: "VARCHAR(20)", Values: lits("''", "'é'", "'😀🎉'", "'a\\tb\\nc'", "'\\\\N'", "' '")},
	{Name: "text", Type: "TEXT", Values: lits("''", "'𝄞 mixed ü'")},
	{Name: "char", Type: "CHAR(5)", Values: lits("''", "'ab'", "'ü😀'")},
	{Name: "date", Type: "DATE", Values: lits("'1970-01-01'", "'2024-02-29'", "'2105-12-31'")},
	{Name: "datewide", Type: "DATE", Values: lits("'1000-01-01'", "'9999-12-31'"), Refuse: "clickhouse"}, // outside Date
	{Name: "datetime", Type: "DATETIME(6)", Values: lits("'1000-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'", "'1970-01-01 00:00:00'"), Refuse: "clickhouse"},
	{Name: "datetime0", Type: "DATETIME", Values: lits("'1970-01-01 00:00:00'", "'2024-01-02 03:04:05'", "'2105-12-31 23:59:59'")},
	{Name: "datetime0wide", Type: "DATETIME", Values: lits("'2106-02-07 06:28:15'"), Refuse: "clickhouse"},                                      // past what 18.16's DateTime text holds
	{Name: "timestamp", Type: "TIMESTAMP(6) NULL", Values: lits("'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'"), Refuse: "clickhouse"}, // a fraction DateTime does not hold
	{Name: "time", Type: "TIME(6)", Values: lits("'00:00:00'", "'23:59:59.999999'")},
	{Name: "year", Type: "YEAR", Values: lits("0", "1901", "2155")},               // 0 (0000) landed as 2000 in MySQL
	{Name: "bit8", Type: "BIT(8)", Values: lits("b'101'", "b'11111111'", "b'0'")}, // a binlog BIT landed in MySQL as its decimal text: 5 as 0x35, 255 refused
	{Name: "bit1", Type: "BIT(1)", Values: lits("b'1'", "b'0'")},
	{Name: "json", Type: "JSON", Values: lits(`'{"a":1,"a":2}'`, `'{"b" : [1, 2.50]}'`)}, // jsonb dropped the first "a"
}

// durationCases are read with ?time=duration on the source URL: TIME's
// whole ±838:59:59 range as duration[us], through every destination.
var durationCases = []cdctest.Case{
	{Name: "dur", Type: "TIME(6)", Values: lits("'838:59:59'", "'-838:59:59'", "'25:00:00'", "'-00:00:00.000001'", "'00:00:00'", "'-12:34:56.5'")},
}

func lits(l ...string) []cdctest.Value {
	out := make([]cdctest.Value, len(l))
	for i, s := range l {
		out[i] = cdctest.Value{Lit: s}
	}
	return out
}

// TestRun_Types: every edge value of every type reaches every destination
// through the binlog (an insert, then an update of another column, which
// rewrites the row from the binlog's image) exactly as a bulk read of the
// source gives it, or the type is refused with a clear error (bad input
// naming the table and column) — never altered. Values are compared one
// by one in the routes' canonical text (cdctest.DB.Rows).
func TestRun_Types(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { runTypes(t, kind, false, typeCases, "") })
	}
}

// TestRun_TypesDuration: TIME read as a duration (?time=duration), every
// edge of its range, through every destination and every changelog. Into
// ClickHouse it failed after the bootstrap (attack-s10).
func TestRun_TypesDuration(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { runTypes(t, kind, false, durationCases, "time=duration") })
		if kind != "iceberg" {
			t.Run(kind+"/changelog", func(t *testing.T) { runTypes(t, kind, true, durationCases, "time=duration") })
		}
	}
}

// TestRun_TypesChangelog: the same edge values through a changelog (the
// ops appended to a log, the current state derived by its __current
// view), which renders values on a path of its own (YEAR 0 landed in a
// MySQL log as 2000 while the replica apply kept 0000). Iceberg has no
// view (its current state is documented SQL over the log): its log
// values are Arrow, not text, and the replica test covers that encoder.
func TestRun_TypesChangelog(t *testing.T) {
	for _, kind := range destinations {
		if kind == "iceberg" {
			continue
		}
		t.Run(kind, func(t *testing.T) { runTypes(t, kind, true, typeCases, "") })
	}
}

// runTypes runs cases through the binlog into kind; srcOpts are query
// options of the source URL ("time=duration"), for the capture and for
// the bulk read the destination is held to.
func runTypes(t *testing.T, kind string, changelog bool, cases []cdctest.Case, srcOpts string) {
	ctx := routestest.Context(t, 4*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
	if srcOpts != "" {
		withOpts := *src // the same schema and connection, read with srcOpts
		withOpts.URL = src.URLWith(srcOpts)
		src = &withOpts
		if kind == "mysql" { // read the destination's TIME back the same way
			dstOpts := *dst
			dstOpts.URL = dst.URLWith(srcOpts)
			dst = &dstOpts
		}
	}
	cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Changelog: changelog}
	if kind == "clickhouse" {
		cfg.DestURL = dst.URLWith("lease=2s")
	}
	live := map[string]cdctest.Case{}
	for _, c := range cases {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, other INT, v %s)", src.Table(c.Table()), c.Type))
		cfg.Tables = append(cfg.Tables, Pair{Source: src.Ref(c.Table()), Dest: dst.Ref(c.Table())})
		live[c.Table()] = c
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
			if name == "" || !live[name].Refuses(kind) {
				t.Fatalf("%s: %v (not a refusal of a type %s cannot hold)", step, err, kind)
			}
			t.Logf("%s: %s refused: %v", step, live[name].Type, err)
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
		for i, v := range c.Values {
			rows = append(rows, fmt.Sprintf("(%d, %d, %s)", i+1, i, v.Lit))
		}
		rows = append(rows, fmt.Sprintf("(%d, 0, NULL)", len(c.Values)+1))
		src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", src.Table(name), strings.Join(rows, ", ")))
	}
	run("insert")
	compareTypes(t, src, dst, live, changelog, "insert")
	for name := range live {
		src.Exec(t, ctx, "UPDATE "+src.Table(name)+" SET other = other + 100")
	}
	run("update")
	compareTypes(t, src, dst, live, changelog, "update of another column")
	for _, c := range cases {
		_, ok := live[c.Table()]
		if want := c.Refuses(kind); !ok != want {
			t.Errorf("%s: refused %v, want refused %v", c.Type, !ok, want)
		}
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

// compareTypes holds every live table's destination to a bulk read of the
// source, value by value (cdctest.Compare, shared with the bulk harness).
// With changelog, the destination read is the log's __current view.
func compareTypes(t *testing.T, src, dst *cdctest.DB, live map[string]cdctest.Case, changelog bool, step string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	cols := []string{"other", "v"}
	for name := range live {
		table := name
		switch {
		case changelog:
			table = name + cdc.CurrentSuffix
		case dst.Kind == "clickhouse":
			dst.Exec(t, ctx, "OPTIMIZE TABLE "+dst.Table(name)+" FINAL")
		}
		want, types := cdctest.SourceValues(t, ctx, src, name, cols)
		cdctest.Compare(t, ctx, dst, table, cols, types, want, step)
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
