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

// TestVarlen_TooLongRefused: an append or merge into a user's table whose
// column has a declared length (varchar(n), char(n), varbinary(n)) from a
// source column that is not bounded by it. PostgreSQL cuts a value's
// excess when it is spaces ('xyz ' lands in varchar(3) as 'xyz'), MySQL
// and MariaDB too with only a note, strict mode or not: exit 0, different
// data. The commit checks the staged values first and refuses a longer one
// with bad input naming the column, the declared length and the value's
// length (never the value), and the destination keeps its rows. A value
// that fits lands exact (characters are counted, not bytes: 'éé' fits
// varchar(2); a char(5)'s padding is not counted), and so does one from
// a source column of the same length.
func TestVarlen_TooLongRefused(t *testing.T) {
	cases := []struct {
		name            string
		src             string // kind of the source; "" the destination's
		srcType, dstCol string // the source's column type, the destination's
		value           string // SQL literal in the source's dialect
		got             int    // the value's length a refusal names; 0: it lands exact
		kinds           []string
	}{
		{name: "fits", srcType: "text", dstCol: "varchar(3)", value: "'xyz'"},
		{name: "one trailing space", srcType: "text", dstCol: "varchar(3)", value: "'xyz '", got: 4},
		{name: "trailing spaces", srcType: "text", dstCol: "varchar(3)", value: "'xyz   '", got: 6},
		{name: "too long", srcType: "text", dstCol: "varchar(3)", value: "'xyzd'", got: 4},
		{name: "multibyte fits", srcType: "text", dstCol: "varchar(2)", value: "'éé'"},
		{name: "multibyte too long", srcType: "text", dstCol: "varchar(2)", value: "'éé '", got: 3},
		{name: "source of the same length", srcType: "varchar(3)", dstCol: "varchar(3)", value: "'xyz'"},
		{name: "char source of padding only", srcType: "char(5)", dstCol: "varchar(3)", value: "'xy'"}, // its padding is not its value: 'xy' lands
		{name: "bytes too long", srcType: "blob", dstCol: "varbinary(3)", value: "X'78797a00'", got: 4, kinds: []string{"mysql"}},
		{name: "bytes fit", srcType: "blob", dstCol: "varbinary(3)", value: "X'78797a'", kinds: []string{"mysql"}},
		{name: "from postgres", src: "postgres", srcType: "text", dstCol: "varchar(3)", value: "'xyz '", got: 4, kinds: []string{"mysql"}},
		{name: "from postgres varchar", src: "postgres", srcType: "varchar(3)", dstCol: "varchar(3)", value: "'xyz'", kinds: []string{"mysql"}},
	}
	for _, kind := range []string{"postgres", "mysql"} {
		for _, mode := range []routes.Mode{routes.ModeAppend, routes.ModeMerge} {
			for _, c := range cases {
				if c.kinds != nil && c.kinds[0] != kind {
					continue
				}
				t.Run(kind+"/"+string(mode)+"/"+c.name, func(t *testing.T) {
					ctx := routestest.Context(t, 2*time.Minute)
					srcKind := c.src
					if srcKind == "" {
						srcKind = kind
					}
					src, dst := cdctest.Open(t, ctx, srcKind), cdctest.Open(t, ctx, kind)
					src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", src.Table("t"), c.srcType))
					src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", src.Table("t"), c.value))
					dst.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", dst.Table("t"), c.dstCol))
					dst.Exec(t, ctx, "INSERT INTO "+dst.Table("t")+" VALUES (0, NULL)")
					read := func(d *cdctest.DB) string { // each row's value in hex: a cut space shows
						if d.Kind == "mysql" {
							return d.Query(t, ctx, "SELECT GROUP_CONCAT(CONCAT(id, ':', HEX(v)) ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
						}
						return d.Query(t, ctx, "SELECT string_agg(id || ':' || encode(convert_to(v::text, 'UTF8'), 'hex'), ',' ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
					}
					before := dst.Query(t, ctx, "SELECT COUNT(*) FROM "+dst.Table("t"))
					opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"}
					_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
					if c.got == 0 {
						if err != nil {
							t.Fatal(err)
						}
						if got, want := read(dst), read(src); !strings.EqualFold(got, want) {
							t.Fatalf("destination %s, source %s", got, want)
						}
						return
					}
					n := c.dstCol[strings.Index(c.dstCol, "(")+1 : len(c.dstCol)-1]
					if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), dst.Schema+".t.v") ||
						!strings.Contains(err.Error(), "("+n+")") || !strings.Contains(err.Error(), fmt.Sprintf("%d %s", c.got, map[bool]string{true: "bytes", false: "characters"}[strings.Contains(c.dstCol, "binary")])) ||
						!strings.Contains(err.Error(), "ALTER TABLE") || strings.Contains(err.Error(), "xyz") {
						t.Fatalf("err = %v, want bad input naming %s.t.v, its %s (%s), the value's length %d, the ALTER, and not the value; destination %s",
							err, dst.Schema, c.dstCol, n, c.got, read(dst))
					}
					t.Log(err)
					if after := dst.Query(t, ctx, "SELECT COUNT(*) FROM "+dst.Table("t")); after != before || read(dst) != "" {
						t.Fatalf("the refused run changed the destination: %s rows (was %s), new rows %q", after, before, read(dst))
					}
				})
			}
		}
	}
}
