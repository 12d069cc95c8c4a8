package binlog

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// fastCases are the column types fastRows decodes itself, with their edge
// values (SQL literals); slowCases are types it leaves to go-mysql.
var fastCases = []struct{ name, typ, values string }{
	{"tinyint", "TINYINT", "-128, 127, 0, -1"},
	{"utinyint", "TINYINT UNSIGNED", "0, 127, 128, 255"},
	{"bool", "TINYINT(1)", "0, 1"},
	{"smallint", "SMALLINT", "-32768, 32767, -1"},
	{"usmallint", "SMALLINT UNSIGNED", "0, 32768, 65535"},
	{"mediumint", "MEDIUMINT", "-8388608, 8388607, -1, 0"},
	{"umediumint", "MEDIUMINT UNSIGNED", "0, 8388608, 16777215"},
	{"int", "INT", "-2147483648, 2147483647, -1, 255, 256"},
	{"uint", "INT UNSIGNED", "0, 2147483648, 4294967295"},
	{"bigint", "BIGINT", "-9223372036854775808, 9223372036854775807, -1"},
	{"ubigint", "BIGINT UNSIGNED", "0, 9223372036854775808, 18446744073709551615"},
	{"float", "FLOAT", "0, -0, 1.5, 3.4e38, -1.17549e-38"},
	{"double", "DOUBLE", "0, -0, 0.1, 1.7976931348623157e308, -2.2250738585072014e-308"},
	{"year", "YEAR", "0, 1901, 2155"},
	{"varchar", "VARCHAR(20)", `'', 'é', '😀🎉', 'a\tb\nc', '\\N', ' '`},
	{"varchar300", "VARCHAR(300)", `'', 'x', REPEAT('ü', 300)`}, // a 2-byte length
	{"char", "CHAR(5)", `'', 'ab', 'ü😀'`},
	{"char255", "CHAR(255)", `'', REPEAT('ü', 255)`}, // over 255 bytes in utf8mb4: a 2-byte length
	{"binary", "BINARY(4)", `x'41420000', x'00004142', x'00000000', x'FFFFFFFF', x'00'`},
	{"binary255", "BINARY(255)", `x'4100', CONCAT(REPEAT(x'01', 254), x'00')`},
	{"varbinary", "VARBINARY(8)", `x'4100', x'', x'00', x'0000000000000000'`},
	{"varbinary300", "VARBINARY(300)", `x'', REPEAT(x'ff', 300)`},
	{"tinytext", "TINYTEXT", `'', 'é'`},
	{"text", "TEXT", `'', '𝄞 mixed ü'`},
	{"mediumtext", "MEDIUMTEXT", `'', REPEAT('ab', 40000)`},
	{"longtext", "LONGTEXT", `'', 'x'`},
	{"tinyblob", "TINYBLOB", `x'', x'00ff'`},
	{"blob", "BLOB", `x'', x'00ff00'`},
	{"mediumblob", "MEDIUMBLOB", `x'', REPEAT(x'00', 70000)`},
	{"longblob", "LONGBLOB", `x'', x'01'`},
	{"enum", "ENUM('red','green','blue')", `'red', 'blue', ''`}, // '' is the invalid value (index 0), non-strict mode
	{"set", "SET('a','b','c')", `'', 'a', 'a,c', 'a,b,c'`},
	{"json", "JSON", `'{"a":1,"a":2}', '{"b" : [1, 2.50]}'`},           // MariaDB's JSON is LONGTEXT (MySQL's has a type of its own: go-mysql's)
	{"set9", "SET('a','b','c','d','e','f','g','h','i')", `'i', 'a,i'`}, // two bytes
}

var slowCases = []struct{ name, typ, values string }{
	{"decimal", "DECIMAL(10,2)", "'-1.25', 0"},
	{"datetime", "DATETIME(6)", "'2024-01-02 03:04:05.123456'"},
	{"bit", "BIT(8)", "b'101'"},
	{"mixed", "INT, w DATE", "1"}, // a fast column beside a slow one: the table is go-mysql's
}

// TestFastRows_SameAsGoMySQL: on the same binlog events (inserts of every
// edge value and NULL, updates, deletes), fastRows gives every row exactly
// what go-mysql's decode of it, converted by layout.row, gives — values and
// Go types — for every column type it decodes; a table with any other type
// is left to go-mysql (no fast decode); and a truncated event is an error.
func TestFastRows_SameAsGoMySQL(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	var stmts []string
	tables := map[string]bool{}
	all := append(append([]struct{ name, typ, values string }{}, fastCases...), slowCases...)
	slow := map[string]bool{}
	for _, c := range slowCases {
		slow[c.name] = true
	}
	for _, c := range all {
		tables[c.name] = true
		var rows []string
		for i, v := range splitValues(c.values) {
			if c.name == "mixed" {
				v += ", '2024-02-29'"
			}
			rows = append(rows, fmt.Sprintf("(%d, %s)", i+1, v))
		}
		null := "NULL"
		if c.name == "mixed" {
			null = "NULL, NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, %s)", len(rows)+1, null))
		stmts = append(stmts, "INSERT INTO %["+c.name+"] VALUES "+strings.Join(rows, ", "),
			"UPDATE %["+c.name+"] SET id = id + 100", "DELETE FROM %["+c.name+"] WHERE id > 101")
	}
	cap := captureRows(t, ctx, all, stmts)
	seen := map[string]int{}
	for _, ev := range cap.events {
		e := ev.Event.(*replication.RowsEvent)
		tbl := cap.d.table(e.Table)
		l, err := cap.d.layout(tbl, e.Table)
		if err != nil {
			t.Fatal(err)
		}
		name := tbl.Source.Name
		wantFast := !slow[name]
		if (l.fast != nil) != wantFast {
			t.Fatalf("%s: fast decode %v, want %v", name, l.fast != nil, wantFast)
		}
		if !wantFast {
			continue
		}
		op, _ := rowsOp(ev.Header.EventType)
		p, _ := pendingOf(e)
		var got [][]any
		if err := l.fastRows(e, p, op == cdc.OpUpdate, func(first, after []any) error {
			got = append(got, first)
			if after != nil {
				got = append(got, after)
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: fastRows: %v", name, err)
		}
		for cut := 1; cut < len(p.data)-p.pos; cut += 7 {
			short := pending{data: p.data[:len(p.data)-cut], pos: p.pos}
			err := l.fastRows(e, short, op == cdc.OpUpdate, func(_, _ []any) error { return nil })
			// a cut between whole images (or pairs) is a shorter event
			if err == nil && !cutBetweenImages(t, l, e, p, len(p.data)-cut, op == cdc.OpUpdate) {
				t.Errorf("%s: fastRows of the event less its last %d bytes: no error", name, cut)
			}
		}
		if err := l.slowRows(e, p); err != nil {
			t.Fatal(err)
		}
		var want [][]any
		for _, image := range e.Rows {
			row, err := l.row(image)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, row)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: fastRows\n%s\ngo-mysql\n%s", name, op, typed(got), typed(want))
		}
		seen[name] += len(got)
	}
	for _, c := range fastCases {
		if seen[c.name] == 0 {
			t.Errorf("%s: no rows event decoded", c.typ)
		}
	}
}

// splitValues splits a list of SQL literals at the commas outside
// parentheses and quotes.
func splitValues(s string) []string {
	var out []string
	depth, quote, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '\'':
			quote = !quote
		case quote:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out, start = append(out, strings.TrimSpace(s[start:i])), i+1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// cutBetweenImages reports whether end is where an image of e ends.
func cutBetweenImages(t *testing.T, l *layout, e *replication.RowsEvent, p pending, end int, update bool) bool {
	data, pos := p.data[p.pos:], p.pos
	for pos < len(p.data) {
		if pos == end {
			return true
		}
		_, n, err := l.image(data, e.ColumnBitmap1, &l.before)
		if err == nil && update {
			var m int
			_, m, err = l.image(data[n:], e.ColumnBitmap2, &l.slabs)
			n += m
		}
		if err != nil {
			t.Fatal(err)
		}
		data, pos = data[n:], pos+n
	}
	return pos == end
}

func typed(rows [][]any) string {
	var b strings.Builder
	for _, r := range rows {
		for _, v := range r {
			s := fmt.Sprintf("%v", v)
			if len(s) > 40 {
				s = s[:40] + "…"
			}
			fmt.Fprintf(&b, " %T(%s)", v, s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// captured is the rows events of a capture's tables.
type captured struct {
	d      *decoder
	events []*replication.BinlogEvent
}

// captureRows creates a table <name> (id INT PRIMARY KEY, v type) per case in a database of its own, runs stmts (%[name]
// stands for a table) and returns their rows events as the drain's syncer
// hands them over (rawRows), with a decoder of the tables.
func captureRows(tb testing.TB, ctx context.Context, cases []struct{ name, typ, values string }, stmts []string) captured {
	tb.Helper()
	url := routestest.ServerURL(tb, "WEIR_TEST_MYSQL")
	u, err := routes.ParseURL(url)
	if err != nil {
		tb.Fatal(err)
	}
	nu := u.URL()
	db, err := sql.Open("mysql", fmt.Sprintf("%s@tcp(%s)/?multiStatements=true", nu.User.String(), nu.Host))
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	schema := routestest.Name("weir_t")
	exec := func(q string) {
		tb.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE " + schema + " CHARACTER SET utf8mb4")
	tb.Cleanup(func() {
		cctx, cancel := routestest.CleanupContext()
		defer cancel()
		db.ExecContext(cctx, "DROP DATABASE IF EXISTS "+schema)
	})
	exec("USE " + schema)
	exec("SET SESSION sql_mode = ''") // ENUM's invalid value ''
	cfg := Config{SourceURL: url, DestURL: routestest.ServerURL(tb, "WEIR_TEST_PG")}
	names := map[string]string{}
	for _, c := range cases {
		names[c.name] = "`" + schema + "`.`" + c.name + "`"
		exec(fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s NULL)", names[c.name], c.typ))
		cfg.Tables = append(cfg.Tables, Pair{Source: routes.TableRef{Schema: schema, Name: c.name}, Dest: routes.TableRef{Schema: "public", Name: "unused"}})
	}
	r, err := open(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.close()
	from, err := r.srv.current(ctx, r.db)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range stmts {
		for name, q := range names {
			s = strings.ReplaceAll(s, "%["+name+"]", q)
		}
		exec(s)
	}
	to, err := r.srv.current(ctx, r.db)
	if err != nil {
		tb.Fatal(err)
	}
	syncer := replication.NewBinlogSyncer(r.syncerConfig())
	defer syncer.Close()
	stream, err := syncer.StartSync(mysql.Position{Name: from.File, Pos: from.Pos})
	if err != nil {
		tb.Fatal(err)
	}
	out := captured{d: newDecoder(r.tables, cfg.SourceURL)}
	file := from.File
	for {
		ev, err := stream.GetEvent(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if rot, ok := ev.Event.(*replication.RotateEvent); ok {
			file = string(rot.NextLogName)
			continue
		}
		if e, ok := ev.Event.(*replication.RowsEvent); ok && out.d.table(e.Table) != nil {
			if _, ok := rowsOp(ev.Header.EventType); ok {
				out.events = append(out.events, ev)
			}
		}
		if ev.Header.LogPos > 0 && !(Position{File: file, Pos: ev.Header.LogPos}).Before(to) {
			return out
		}
	}
}

// BenchmarkRows decodes 15-column rows events shaped as bench/cdc.sh's
// table (a key, then alternating int and md5 text), an insert's and an
// update's: fastRows against go-mysql's decode and layout.row.
func BenchmarkRows(b *testing.B) {
	ctx := routestest.Context(b, 2*time.Minute)
	typ, sets, vals := "INT", "v = v + 1", "seq, seq"
	for i := 2; i < 15; i++ {
		if i%2 == 1 {
			typ, sets, vals = typ+fmt.Sprintf(", c%d INT", i), sets+fmt.Sprintf(", c%d = c%d + 1", i, i), vals+fmt.Sprintf(", seq %% 100000 + %d", i)
		} else {
			typ, sets, vals = typ+fmt.Sprintf(", c%d VARCHAR(40)", i), sets+fmt.Sprintf(", c%d = md5(c%d)", i, i), vals+fmt.Sprintf(", md5(concat(seq, '-%d'))", i)
		}
	}
	cap := captureRows(b, ctx, []struct{ name, typ, values string }{{"wide", typ, ""}}, []string{
		"INSERT INTO %[wide] SELECT " + vals + " FROM seq_1_to_2000",
		"UPDATE %[wide] SET " + sets,
	})
	done := map[cdc.Op]bool{}
	for _, ev := range cap.events {
		e := ev.Event.(*replication.RowsEvent)
		op, _ := rowsOp(ev.Header.EventType)
		if done[op] {
			continue
		}
		done[op] = true
		l, err := cap.d.layout(cap.d.table(e.Table), e.Table)
		if err != nil || l.fast == nil {
			b.Fatalf("layout %v, fast %v", err, l.fast != nil)
		}
		p, _ := pendingOf(e)
		for _, name := range []string{"fast", "go-mysql"} {
			b.Run(fmt.Sprintf("%s/%s", op, name), func(b *testing.B) {
				b.ReportAllocs()
				images := 0 // changes
				for b.Loop() {
					if name == "fast" {
						l.fastRows(e, p, op == cdc.OpUpdate, func(first, after []any) error { images++; return nil })
						continue
					}
					l.slowRows(e, p)
					for _, image := range e.Rows {
						l.row(image)
					}
					if op == cdc.OpUpdate {
						images += len(e.Rows) / 2
					} else {
						images += len(e.Rows)
					}
				}
				b.ReportMetric(float64(images)/float64(b.N), "changes/op")
			})
		}
	}
}
