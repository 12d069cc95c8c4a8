package binlog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// attackS16Cases are the fast row decoder's (rows.go) width edges: every
// integer width at both ends, signed and unsigned, FLOAT/DOUBLE at their
// ends and subnormals, ENUM past 255 members (a 2-byte index), SET of 64
// members (an 8-byte mask), strings whose byte length crosses the 1-byte
// length prefix (VARCHAR(64) in utf8mb4 is 256 bytes, CHAR(64) too), and
// each BLOB/TEXT size class at its prefix's edges.
var attackS16Cases = []cdctest.Case{
	{Name: "utiny", Type: "TINYINT UNSIGNED", Values: lits("0", "255", "128")},
	{Name: "small", Type: "SMALLINT", Values: lits("-32768", "32767", "-1")},
	{Name: "umedium", Type: "MEDIUMINT UNSIGNED", Values: lits("0", "16777215", "8388608")},
	{Name: "medium2", Type: "MEDIUMINT", Values: lits("-1", "-8388607")},
	{Name: "uint2", Type: "INT UNSIGNED", Values: lits("2147483648", "4294967294")},
	{Name: "ubig2", Type: "BIGINT UNSIGNED", Values: lits("1", "18446744073709551614")},
	{Name: "float2", Type: "FLOAT", Values: lits("-3.40282e38", "1e-45", "-1e-45", "16777217")},
	{Name: "double2", Type: "DOUBLE", Values: lits("4.9e-324", "-4.9e-324", "9007199254740993", "-1.7976931348623157e308")},
	{Name: "year2", Type: "YEAR", Values: lits("1999", "2000", "2069")},
	{Name: "enum300", Type: enumOf(300), Values: lits("'e1'", "'e255'", "'e256'", "'e300'")},
	{Name: "set64", Type: setOf(64), Values: lits("'s0'", "'s63'", "'s0,s63'", "'"+allSet(64)+"'", "'s7,s8,s31,s32'")},
	{Name: "set9", Type: setOf(9), Values: lits("'s8'", "'"+allSet(9)+"'")},
	{Name: "vc63", Type: "VARCHAR(63)", Values: lits("REPEAT('😀', 63)", "''")},
	{Name: "vc64", Type: "VARCHAR(64)", Values: lits("REPEAT('😀', 64)", "''", "'a'", "REPEAT('x', 64)")},
	{Name: "vc300", Type: "VARCHAR(300)", Values: lits("REPEAT('é', 300)", "REPEAT('x', 256)", "REPEAT('x', 255)")},
	{Name: "vclatin", Type: "VARCHAR(255) CHARACTER SET ascii", Values: lits("REPEAT('x', 255)", "''")},
	{Name: "vb255", Type: "VARBINARY(255)", Values: lits("REPEAT(x'ff', 255)", "x''")},
	{Name: "vb256", Type: "VARBINARY(256)", Values: lits("REPEAT(x'00', 256)", "REPEAT(x'01', 255)", "x'00'")},
	{Name: "char64", Type: "CHAR(64)", Values: lits("REPEAT('😀', 64)", "'a'", "''", "REPEAT('é', 64)")},
	{Name: "char255", Type: "CHAR(255)", Values: lits("REPEAT('ü', 255)", "'z'")},
	{Name: "tinytext", Type: "TINYTEXT", Values: lits("REPEAT('x', 255)", "''", "REPEAT('é', 127)")},
	{Name: "tinyblob", Type: "TINYBLOB", Values: lits("REPEAT(x'00', 255)", "x''")},
	{Name: "text2", Type: "TEXT", Values: lits("REPEAT('x', 65535)", "REPEAT('x', 256)", "REPEAT('x', 255)")},
	{Name: "blob2", Type: "BLOB", Values: lits("REPEAT(x'ab', 65535)", "REPEAT(x'00', 256)")},
	{Name: "mtext", Type: "MEDIUMTEXT", Values: lits("REPEAT('x', 65536)", "REPEAT('é', 100000)", "''")},
	{Name: "mblob", Type: "MEDIUMBLOB", Values: lits("REPEAT(x'00', 65536)", "x''")},
	{Name: "lblob", Type: "LONGBLOB", Values: lits("REPEAT(x'7f', 16777216)", "x'00'")},
}

func enumOf(n int) string {
	var m []string
	for i := 1; i <= n; i++ {
		m = append(m, fmt.Sprintf("'e%d'", i))
	}
	return "ENUM(" + strings.Join(m, ",") + ")"
}

func setOf(n int) string {
	var m []string
	for i := 0; i < n; i++ {
		m = append(m, fmt.Sprintf("'s%d'", i))
	}
	return "SET(" + strings.Join(m, ",") + ")"
}

func allSet(n int) string {
	var m []string
	for i := 0; i < n; i++ {
		m = append(m, fmt.Sprintf("s%d", i))
	}
	return strings.Join(m, ",")
}

// TestAttackS16_FastDecodeEdges: each edge value lands the same whether the
// bootstrap's bulk read or the binlog's fast decode carried it, into every
// destination.
func TestAttackS16_FastDecodeEdges(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { attackBootstrapVsBinlog(t, kind, attackS16Cases) })
	}
}

func attackBootstrapVsBinlog(t *testing.T, kind string, all []cdctest.Case) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
	cfg := Config{SourceURL: src.URL, DestURL: dst.URL}
	var cases []cdctest.Case
	for _, c := range all {
		if !c.Refuses(kind) {
			cases = append(cases, c)
		}
	}
	insert := func(c cdctest.Case, from int) {
		for i, v := range c.Values { // one row a statement: a 16 MiB value is a packet of its own
			src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, %s)", src.Table(c.Table()), from+i, v.Lit))
		}
		src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, NULL)", src.Table(c.Table()), from+len(c.Values)))
	}
	for _, c := range cases {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s)", src.Table(c.Table()), c.Type))
		insert(c, 1)
		cfg.Tables = append(cfg.Tables, Pair{Source: src.Ref(c.Table()), Dest: dst.Ref(c.Table())})
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	for _, c := range cases {
		insert(c, 1001)
	}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("binlog: %v", err)
	}
	cdctest.SameAsBootstrap(t, ctx, dst, cases, "binlog")
}

// TestAttackS16_WideNullBitmaps: a table of 130 columns (null bitmaps of
// 17 bytes, every fast type among them) whose rows hold NULLs in a pattern
// that differs per row, captured through inserts, updates that null and
// un-null columns and move the primary key, and deletes: the replica
// holds what a bulk read of the source gives, column by column.
func TestAttackS16_WideNullBitmaps(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) { wideNullBitmaps(t, kind) })
	}
}

func wideNullBitmaps(t *testing.T, kind string) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
	types := []string{"INT", "VARCHAR(300)", "TINYINT UNSIGNED", "DOUBLE", "BIGINT", "TEXT", "SMALLINT UNSIGNED", "VARBINARY(10)", "ENUM('a','b')", "SET('x','y','z')", "YEAR", "FLOAT", "CHAR(3)"}
	lit := func(typ string, row, col int) string {
		if (row*7+col*3)%5 == 0 {
			return "NULL"
		}
		switch typ {
		case "VARCHAR(300)", "TEXT", "CHAR(3)":
			return fmt.Sprintf("'%c%d'", 'a'+rune((row+col)%26), row%100)
		case "VARBINARY(10)":
			return fmt.Sprintf("x'%02x00'", (row*col)%256)
		case "ENUM('a','b')":
			return []string{"'a'", "'b'"}[(row+col)%2]
		case "SET('x','y','z')":
			return []string{"''", "'x'", "'y,z'", "'x,y,z'"}[(row+col)%4]
		case "YEAR":
			return fmt.Sprint(1901 + (row+col)%254)
		case "TINYINT UNSIGNED":
			return fmt.Sprint((row * col) % 256)
		case "SMALLINT UNSIGNED":
			return fmt.Sprint((row * col * 31) % 65536)
		}
		return fmt.Sprint((row - 30) * (col + 1))
	}
	const ncols = 130
	var defs, cols []string
	for c := range ncols {
		cols = append(cols, fmt.Sprintf("c%d", c))
		defs = append(defs, fmt.Sprintf("c%d %s", c, types[c%len(types)]))
	}
	table := src.Table("wide")
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, %s)", table, strings.Join(defs, ", ")))
	insert := func(from, to int) {
		for r := from; r < to; r++ {
			var vals []string
			for c := range ncols {
				vals = append(vals, lit(types[c%len(types)], r, c))
			}
			src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, %s)", table, r, strings.Join(vals, ", ")))
		}
	}
	insert(1, 20)
	cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("wide"), Dest: dst.Ref("wide")}}}
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	insert(20, 60)
	src.Exec(t, ctx, fmt.Sprintf("UPDATE %s SET c1 = NULL, c64 = NULL, c129 = 'z', c0 = NULL WHERE id %% 3 = 0", table))
	src.Exec(t, ctx, fmt.Sprintf("UPDATE %s SET c65 = 7, c5 = REPEAT('q', 70000 %% 65535) WHERE id %% 4 = 1", table))
	src.Exec(t, ctx, fmt.Sprintf("UPDATE %s SET id = id + 1000 WHERE id %% 5 = 2", table))
	src.Exec(t, ctx, fmt.Sprintf("DELETE FROM %s WHERE id %% 7 = 3", table))
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("binlog: %v", err)
	}
	live := "wide"
	if kind == "clickhouse" { // the live rows, tombstones left out
		live = "wide_live"
		dst.Exec(t, ctx, fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM %s", dst.Table(live), dst.Live(t, ctx, "wide")))
	}
	want, srcTypes := cdctest.SourceValues(t, ctx, src, "wide", cols)
	cdctest.Compare(t, ctx, dst, live, cols, srcTypes, want, "binlog")
}
