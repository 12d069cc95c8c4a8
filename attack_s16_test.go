package weir_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS16_UserColumnCuts: a user's destination column of a type the
// server cuts or rounds without an error on the way in (PostgreSQL's
// one-byte "char", name's 63 bytes, an interval with fields or a
// precision, MariaDB latin1 text), appended into from text or an
// interval. Each value must land exact or be refused with the
// destination unchanged.
func TestAttackS16_UserColumnCuts(t *testing.T) {
	long := "'" + strings.Repeat("abcdefghij", 7) + "'" // 70 bytes
	at63 := "'" + strings.Repeat("é", 31) + "a'"        // 63 bytes, 32 characters
	over63 := "'" + strings.Repeat("é", 32) + "'"       // 64 bytes, 32 characters: name keeps 31 of them
	hex63 := "x" + strings.Repeat("c3a9", 31) + "61"
	for _, c := range []varlenCase{
		{name: "pg char1 from text", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'abc'", badInput: true},
		{name: "pg char1 fits", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'a'", want: "x61"},
		{name: "pg name from text", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: long, badInput: true},
		{name: "mysql to pg name", src: "mysql", dst: "postgres", srcType: "text", dstType: "name", value: long, badInput: true},
		{name: "pg interval(0) from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval(0)", value: "'1.5 seconds'"},
		{name: "pg interval year to month from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval year to month", value: "'1 year 2 days'"},
		{name: "pg interval day from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval day", value: "'3 days 04:05:06'"},
		{name: "pg char1 empty", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "''", want: "x"},
		{name: "pg char1 two-byte", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'é'", badInput: true},
		{name: "pg char1 null", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "NULL", want: "null"},
		{name: "pg char1 from char1", src: "postgres", dst: "postgres", srcType: `"char"`, dstType: `"char"`, value: `'z'::"char"`, want: "x7a"},
		{name: "pg name at 63 bytes", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: at63, want: hex63},
		{name: "pg name 32 chars 64 bytes", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: over63, badInput: true},
		{name: "pg name[] from text[]", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "name[]", value: "ARRAY[" + long + "]", badInput: true},
		{name: "pg char1 merge", src: "mysql", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'ab'", badInput: true, mode: routes.ModeMerge},
		{name: "pg name merge", src: "postgres", dst: "postgres", srcType: "varchar(100)", dstType: "name", value: long, badInput: true, mode: routes.ModeMerge},
		{name: "pg name from name", src: "postgres", dst: "postgres", srcType: "name", dstType: "name", value: at63, want: hex63},
		{name: "mysql latin1 varchar from pg emoji", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(10) CHARACTER SET latin1", value: "'a😀'"},
		{name: "mysql latin1 text from pg cjk", src: "postgres", dst: "mysql", srcType: "text", dstType: "text CHARACTER SET latin1", value: "'中文'"},
		{name: "mysql latin1 varchar fits", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(3) CHARACTER SET latin1", value: "'éé'", want: "xE9E9"},
		{name: "mysql ascii varchar from pg", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(10) CHARACTER SET ascii", value: "'é'"},
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}

// TestAttackS16_FloatCursorRoleDigits: an append by a float8 cursor from
// a source whose role prints floats with 15 digits (ALTER ROLE … SET
// extra_float_digits = 0): the cursor's text is the column's ::text, so
// the maximum 0.30000000000000004 was read as 0.3, the run read up to 0.3
// and the row above it was never read: 1 row of 2 after three runs, exit 0.
func TestAttackS16_FloatCursorRoleDigits(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
	role := src.Schema + "_r"
	src.Exec(t, ctx, fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER", role))
	src.Exec(t, ctx, fmt.Sprintf("ALTER ROLE %s SET extra_float_digits = 0", role))
	t.Cleanup(func() {
		cctx, cancel := routestest.CleanupContext()
		defer cancel()
		conn, err := pgx.Connect(cctx, src.URL)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(cctx)
		if _, err := conn.Exec(cctx, "DROP ROLE "+role); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	srcURL := strings.Replace(src.URL, "//root@", "//"+role+"@", 1)
	src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, v float8)", src.Table("t")))
	src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, 0.1), (2, 0.30000000000000004)", src.Table("t")))
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: routes.ModeAppend, Cursor: "v"}
	for run := range 3 {
		if _, err := weir.Transfer(ctx, srcURL, dst.URL, opts); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	if n := dst.Query(t, ctx, "SELECT count(*) FROM "+dst.Table("t")); n != "2" {
		t.Fatalf("destination holds %s rows after three runs of two source rows, want 2", n)
	}
}
