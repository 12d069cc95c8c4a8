package weir_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// varlenCase is one append into a user's destination table of one
// column v: either the value lands exact (want is the destination's
// value as hexSQL reads it: "x" and its hex, or "null") or the run fails and the destination
// keeps its one row.
type varlenCase struct {
	name             string
	src, dst         string // kinds
	srcType, dstType string
	value            string      // SQL literal in the source's dialect
	want             string      // the value's hex in the destination, "" for a refusal
	badInput         bool        // a refusal must be bad input naming the column
	dstSetup         string      // run on the destination first; {schema} is its schema (dstType may name it too)
	mode             routes.Mode // "" append
}

// hexSQL reads row 1's v as "x" and its hex ("null" for NULL, "" for no row).
func hexSQL(d *cdctest.DB) string {
	switch d.Kind {
	case "mysql":
		return "SELECT COALESCE((SELECT COALESCE(CONCAT('x', HEX(v)), 'null') FROM " + d.Table("t") + " WHERE id = 1), '')"
	case "clickhouse":
		return "SELECT concat('x', hex(v)) FROM " + d.Table("t") + " WHERE id = 1"
	}
	return "SELECT COALESCE((SELECT COALESCE('x' || encode(convert_to(v::text, 'UTF8'), 'hex'), 'null') FROM " + d.Table("t") + " WHERE id = 1), '')"
}

func runVarlen(t *testing.T, c varlenCase) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, c.src), cdctest.Open(t, ctx, c.dst)
	if c.src == "clickhouse" {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, v %s) ENGINE = MergeTree ORDER BY id", src.Table("t"), c.srcType))
	} else {
		src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", src.Table("t"), c.srcType))
	}
	src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", src.Table("t"), c.value))
	if c.dstSetup != "" {
		dst.Exec(t, ctx, strings.ReplaceAll(c.dstSetup, "{schema}", dst.Schema))
	}
	dst.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", dst.Table("t"), strings.ReplaceAll(c.dstType, "{schema}", dst.Schema)))
	dst.Exec(t, ctx, "INSERT INTO "+dst.Table("t")+" VALUES (0, NULL)")
	mode := c.mode
	if mode == "" {
		mode = routes.ModeAppend
	}
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	got := dst.Query(t, ctx, hexSQL(dst))
	if c.want != "" {
		if err != nil {
			t.Fatalf("refused a value that fits: %v", err)
		}
		if !strings.EqualFold(got, c.want) {
			t.Fatalf("destination v = %s, want %s (exit 0 with different data)", got, c.want)
		}
		return
	}
	if err == nil {
		t.Fatalf("exit 0; destination v = %.40s… (%d hex digits): the value was changed on the way in", got, len(got)-1)
	}
	t.Log(err)
	if c.badInput && (!errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), dst.Schema+".t.v")) {
		t.Fatalf("err = %v, want bad input naming %s.t.v", err, dst.Schema)
	}
	if n := dst.Query(t, ctx, "SELECT COUNT(*) FROM "+dst.Table("t")); n != "1" || got != "" {
		t.Fatalf("the refused run changed the destination: %s rows, row 1 %q", n, got)
	}
}

// TestVarlenAttack_Routes: the length check on other routes into
// PostgreSQL and MariaDB, and the values at its edges (NULL, empty,
// 4-byte characters), which must land exact when they fit.
func TestVarlenAttack_Routes(t *testing.T) {
	for _, c := range []varlenCase{
		{name: "mysql to pg spaces", src: "mysql", dst: "postgres", srcType: "text", dstType: "varchar(3)", value: "'xyz '", badInput: true},
		{name: "mysql varchar(10) to pg varchar(3)", src: "mysql", dst: "postgres", srcType: "varchar(10)", dstType: "varchar(3)", value: "'xyz  '", badInput: true},
		{name: "clickhouse to pg spaces", src: "clickhouse", dst: "postgres", srcType: "String", dstType: "varchar(3)", value: "'xyz '", badInput: true},
		{name: "clickhouse to mysql spaces", src: "clickhouse", dst: "mysql", srcType: "String", dstType: "varchar(3)", value: "'xyz '", badInput: true},
		{name: "clickhouse FixedString to pg", src: "clickhouse", dst: "postgres", srcType: "FixedString(5)", dstType: "varchar(3)", value: "'xyz  '", badInput: true},
		{name: "pg null", src: "postgres", dst: "postgres", srcType: "text", dstType: "varchar(3)", value: "NULL", want: "null"},
		{name: "pg empty", src: "postgres", dst: "postgres", srcType: "text", dstType: "varchar(3)", value: "''", want: "x"},
		{name: "mysql null", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(3)", value: "NULL", want: "null"},
		{name: "pg emoji fits", src: "postgres", dst: "postgres", srcType: "text", dstType: "varchar(2)", value: "'😀😀'", want: "xf09f9880f09f9880"},
		{name: "pg emoji spaces", src: "postgres", dst: "postgres", srcType: "text", dstType: "varchar(2)", value: "'😀😀 '", badInput: true},
		{name: "mysql utf8mb4 emoji fits", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(2) CHARACTER SET utf8mb4", value: "'😀😀'", want: "xF09F9880F09F9880"},
		{name: "mysql utf8mb4 emoji spaces", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(2) CHARACTER SET utf8mb4", value: "'😀😀 '", badInput: true},
		{name: "mysql utf8mb3 emoji", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(3) CHARACTER SET utf8mb3", value: "'a😀'"},
		// text into a PostgreSQL char(n) is refused by the fixed-width rule, whatever its length
		{name: "pg char(3) spaces", src: "mysql", dst: "postgres", srcType: "text", dstType: "char(3)", value: "'ab   '", badInput: true},
		{name: "pg char(3) short", src: "mysql", dst: "postgres", srcType: "text", dstType: "char(3)", value: "'ab'", badInput: true},
		// an array's elements are cut as a column is: ARRAY['xyz  '] landed as {xyz}, exit 0
		{name: "pg varchar(3)[] spaces", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "varchar(3)[]", value: "ARRAY['xyz  ']", badInput: true},
		{name: "pg varchar(3)[] nested spaces", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "varchar(3)[]", value: "ARRAY[ARRAY['a','b'],ARRAY['c','xyz ']]", badInput: true},
		// a domain's values are cut as its base type's: 'xyz  ' into a domain over varchar(3) landed as 'xyz', exit 0
		{name: "pg domain over varchar(3) spaces", src: "postgres", dst: "postgres", srcType: "text", dstType: "{schema}.d3", value: "'xyz  '", badInput: true,
			dstSetup: "CREATE DOMAIN {schema}.d3 AS varchar(3)"},
		{name: "pg domain over a domain spaces", src: "postgres", dst: "postgres", srcType: "text", dstType: "{schema}.dd3", value: "'xyz '", badInput: true,
			dstSetup: "CREATE DOMAIN {schema}.d3 AS varchar(3); CREATE DOMAIN {schema}.dd3 AS {schema}.d3"},
		{name: "pg domain over varchar(3) fits", src: "postgres", dst: "postgres", srcType: "text", dstType: "{schema}.d3", value: "'xyz'", want: "x78797a",
			dstSetup: "CREATE DOMAIN {schema}.d3 AS varchar(3)"},
		{name: "pg varchar(3)[] fits", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "varchar(3)[]", value: "ARRAY['xyz',NULL,'']", want: "x7b78797a2c4e554c4c2c22227d"},
		{name: "mysql varbinary(10) widens varbinary(3)", src: "mysql", dst: "mysql", srcType: "varbinary(10)", dstType: "varbinary(3)", value: "X'78797a20'", want: "x78797A20"}, // widened
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}

// TestVarlenAttack_MariaDBTextBytes: MariaDB's TINYTEXT, TEXT, TINYBLOB
// and BLOB hold 255 or 65535 bytes, and an INSERT … SELECT of a longer
// value keeps only its length modulo 256 (65536) with no error or note,
// strict mode or not: a 260-byte value landed as its first 4 bytes, exit
// 0. The commit counts their bytes (a text's in the destination's
// character set: 200 'é' fit a latin1 TINYTEXT) and refuses a longer one.
func TestVarlenAttack_MariaDBTextBytes(t *testing.T) {
	for _, c := range []varlenCase{
		{name: "tinytext spaces from pg", src: "postgres", dst: "mysql", srcType: "text", dstType: "tinytext", value: "repeat('a', 250) || repeat(' ', 10)", badInput: true},
		{name: "tinytext spaces", src: "mysql", dst: "mysql", srcType: "text", dstType: "tinytext", value: "CONCAT(REPEAT('a', 250), REPEAT(' ', 10))", badInput: true},
		{name: "tinytext merge", src: "postgres", dst: "mysql", srcType: "text", dstType: "tinytext", value: "repeat('a', 300)", badInput: true, mode: routes.ModeMerge},
		{name: "tinytext letters", src: "mysql", dst: "mysql", srcType: "text", dstType: "tinytext", value: "REPEAT('a', 260)", badInput: true},
		{name: "tinytext multibyte", src: "postgres", dst: "mysql", srcType: "text", dstType: "tinytext", value: "repeat('é', 128)", badInput: true},
		{name: "tinytext varchar(255) of multibyte", src: "mysql", dst: "mysql", srcType: "varchar(255)", dstType: "tinytext", value: "REPEAT('é', 128)", badInput: true},
		{name: "tinytext fits", src: "mysql", dst: "mysql", srcType: "text", dstType: "tinytext", value: "REPEAT('a', 255)", want: "x" + strings.Repeat("61", 255)},
		{name: "latin1 tinytext fits", src: "postgres", dst: "mysql", srcType: "text", dstType: "tinytext CHARACTER SET latin1", value: "repeat('é', 200)", want: "x" + strings.Repeat("E9", 200)},
		{name: "text", src: "mysql", dst: "mysql", srcType: "mediumtext", dstType: "text", value: "REPEAT('a', 65540)", badInput: true},
		{name: "tinyblob", src: "mysql", dst: "mysql", srcType: "blob", dstType: "tinyblob", value: "REPEAT('a', 260)", badInput: true},
		{name: "blob from pg bytea", src: "postgres", dst: "mysql", srcType: "bytea", dstType: "tinyblob", value: "decode(repeat('61', 260), 'hex')", badInput: true},
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}
