package weir_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestFixedWidth_MySQLCharLandsExact: an append or merge into a user's
// MySQL/MariaDB char(n) or binary(n) is not length-checked
// (routes.CheckLength is for varchar and text), because the only sources
// it holds (routes.Holds) cannot carry a value it would alter: a char(m)
// of m ≤ n (from MySQL char(m), PostgreSQL character(m) with m ≤ 255, a
// uuid as CHAR(36)) holds at most m characters and no trailing space
// that counts (MySQL strips them on read; PostgreSQL's character(m)
// ignores them: its ::text drops them), and a binary(n) only a binary(n),
// byte for byte with its padding. A wider char(m) widens the column. Each
// case lands the source's value as the source's own text renders it.
// Anything else (text, a varchar, bytes) is refused by Holds
// (TestDrift_LossyCastRefused).
func TestFixedWidth_MySQLCharLandsExact(t *testing.T) {
	cases := []struct {
		name            string
		src             string // kind of the source
		srcType, dstCol string
		value           string // SQL literal in the source's dialect
	}{
		{"char into a wider char", "mysql", "char(3)", "char(5)", "'ab'"},
		{"char with a trailing space into the same", "mysql", "char(3)", "char(3)", "'ab '"},
		{"full char into the same", "mysql", "char(3)", "char(3)", "'abc'"},
		{"wider char widens", "mysql", "char(5)", "char(3)", "'abcde'"},
		{"binary into the same", "mysql", "binary(3)", "binary(3)", "X'6100'"},
		{"postgres character into a wider char", "postgres", "character(3)", "char(5)", "'ab'"},
		{"postgres character with its padding", "postgres", "character(3)", "char(3)", "'a  '"},
		{"postgres uuid into char(36)", "postgres", "uuid", "char(36)", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"},
	}
	for _, mode := range []routes.Mode{routes.ModeAppend, routes.ModeMerge} {
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				ctx := routestest.Context(t, 2*time.Minute)
				src, dst := cdctest.Open(t, ctx, c.src), cdctest.Open(t, ctx, "mysql")
				src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", src.Table("t"), c.srcType))
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", src.Table("t"), c.value))
				dst.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", dst.Table("t"), c.dstCol))
				dst.Exec(t, ctx, "INSERT INTO "+dst.Table("t")+" VALUES (0, NULL)")
				read := func(d *cdctest.DB) string { // each new row's value in hex: a cut space or a NUL shows
					if d.Kind == "mysql" {
						return d.Query(t, ctx, "SELECT GROUP_CONCAT(CONCAT(id, ':', HEX(v)) ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
					}
					return d.Query(t, ctx, "SELECT string_agg(id || ':' || encode(convert_to(v::text, 'UTF8'), 'hex'), ',' ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
				}
				opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"}
				if _, err := weir.Transfer(ctx, src.URL, dst.URL, opts); err != nil {
					t.Fatal(err)
				}
				if got, want := read(dst), read(src); !strings.EqualFold(got, want) {
					t.Fatalf("destination %s, source %s", got, want)
				}
			})
		}
	}
}
