package weir_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// Attack tests of session 13 (second round), by an outside tester: an
// append into a destination column the user changed to a type the
// lossy-cast rule did not compare (routes.KindOther, or a MariaDB double
// with a fixed scale). Each failed on main with exit 0 and a rounded
// value landed.

// TestAttackS13b_UserTypeHoldsOrRefuses: a PostgreSQL source column of
// type src is appended once (the destination is created), the user
// changes the destination's column to dest, a row with value lands in
// the source, and the next append must refuse with bad input naming the
// column (want "") or land the value as want.
func TestAttackS13b_UserTypeHoldsOrRefuses(t *testing.T) {
	cases := []struct {
		kind, name, src, dest, value, want string
	}{
		// money keeps two decimals: 1.2345 was stored as $1.23.
		{"postgres", "numeric into money", "numeric(10,4)", "money", "1.2345", ""},
		{"postgres", "numeric of the same scale into money", "numeric(10,2)", "money", "1.23", "$1.23"},
		// An array's elements go through their assignment cast: {1.5} was {2}.
		{"postgres", "numeric array into integer array", "numeric[]", "integer[]", "'{1.5}'", ""},
		{"postgres", "integer array into bigint array", "integer[]", "bigint[]", "'{7}'", "{7}"},
		// DOUBLE(M,D) rounds to D decimals: 1.2345 was stored as 1.23.
		{"mysql", "double into double(10,2)", "double precision", "double(10,2)", "1.2345", ""},
		// YEAR takes 1..69 as 2001..2069: 5 was stored as 2005.
		{"mysql", "integer into year", "integer", "year", "5", ""},
		// BIT(n) stores a string's bytes: '5' was stored as 53.
		{"mysql", "text into bit(8)", "text", "bit(8)", "'5'", ""},
		{"mysql", "boolean into bit(1)", "boolean", "bit(1)", "true", "\x01"},
		{"mysql", "decimal into double(10,2)", "numeric(8,2)", "double(10,2)", "1.25", "1.25"},
		// A fixed-width column pads what it stores: CHAR(n) cut 'a  ' to
		// 'a', BINARY(n) and FixedString(n) padded 'ab' with NUL bytes.
		{"mysql", "text into char(5)", "text", "char(5)", "'a  '", ""},
		{"mysql", "varchar into char(5)", "varchar(3)", "char(5)", "'a  '", ""},
		{"mysql", "bytea into binary(4)", "bytea", "binary(4)", `'\x6162'`, ""},
		{"clickhouse", "text into FixedString(5)", "text", "Nullable(FixedString(5))", "'ab'", ""},
		// A char(n) source is weir's CHAR(n): it holds a char of no more width.
		{"mysql", "char(3) into char(3)", "char(3)", "char(3)", "'ab'", "ab"},
		{"mysql", "char(3) into char(5)", "char(3)", "char(5)", "'ab'", "ab"},
		// A wider char is a widening (ALTER … char(5)), as a varchar's.
		{"mysql", "char(5) into char(3)", "char(5)", "char(3)", "'abcde'", "abcde"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, c.kind)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, v "+c.src+")")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, NULL)")
			opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: routes.ModeAppend, Cursor: "id"}
			if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
				t.Fatal(err)
			}
			switch c.kind {
			case "mysql", "clickhouse":
				dst.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN v %s", dst.Table("t"), c.dest))
			default:
				dst.Exec(t, ctx, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN v TYPE %s USING NULL", dst.Table("t"), c.dest))
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (2, "+c.value+")")
			before := driftRows(t, dst, ctx, "id", "v")
			_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
			driftOutcome(t, ctx, dst, err, before, c.src+" into "+c.dest, c.want)
		})
	}
}

// TestAttackS13b_MySQLReplicaCaseInsensitiveKey: a log_based replica the
// user created in MariaDB with the default collation (utf8mb4_general_ci
// holds 'a' = 'A'). The PostgreSQL source has key 'a'; after the
// bootstrap it gains a distinct row 'A', and the apply's INSERT … ON
// DUPLICATE KEY UPDATE would fold it into the row of 'a'. Want: both
// rows, or bad input naming the table. Passes on main: the bootstrap
// replaces the user's table with weir's own (utf8mb4_nopad_bin key), so
// no fold is possible; this guards that.
func TestAttackS13b_MySQLReplicaCaseInsensitiveKey(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (k text PRIMARY KEY, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES ('a', 'one')")
	dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("t")+" (k varchar(20) PRIMARY KEY, v text) DEFAULT CHARSET utf8mb4 COLLATE utf8mb4_general_ci")
	opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + ".t", Mode: routes.ModeLogBased}
	t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, opts) })
	rows := func() string {
		return dst.Query(t, ctx, "SELECT COALESCE(GROUP_CONCAT(CONCAT_WS('|', HEX(k), v) ORDER BY k, v SEPARATOR ' '), '') FROM "+dst.Table("t"))
	}
	_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
	if err == nil {
		src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES ('A', 'two')")
		_, err = weir.Transfer(ctx, src.URL, dst.URL, opts)
	}
	got := rows()
	if err == nil {
		if got != "41|two 61|one" && got != "61|one 41|two" {
			t.Fatalf("exit 0, yet the replica holds %q: two source keys 'a' and 'A', want two rows or a refusal", got)
		}
		return
	}
	if !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("got %v, want bad input (exit 2); replica %q", err, got)
	}
	t.Log(err, got)
}
