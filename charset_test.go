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

// TestCharset_UnrepresentableRefused: an append or merge into a user's
// MySQL/MariaDB table whose text column is in a character set that cannot
// hold a source value (an emoji or 𝄞 into utf8mb3, 名 into latin1). Under
// weir's strict session the INSERT … SELECT from staging failed with the
// server's raw "Incorrect string value" (exit 1); a session that was not
// strict stored '?' instead, exit 0. The commit now checks the staged
// values first and refuses, bad input naming table.column, its character
// set and the ALTER … CONVERT TO CHARACTER SET utf8mb4, never the value;
// the destination keeps its rows. A value the set holds lands exact.
func TestCharset_UnrepresentableRefused(t *testing.T) {
	cases := []struct {
		name    string
		src     string // kind of the source
		srcType string // the source's column; "" text
		dstCol  string // the destination's column
		value   string // SQL literal in the source's dialect
		charset string // the set a refusal names; "" it lands exact
	}{
		{name: "emoji into utf8mb3", src: "mysql", dstCol: "varchar(20) CHARACTER SET utf8mb3", value: "'a😀b'", charset: "utf8mb3"},
		{name: "clef into utf8mb3 text", src: "mysql", dstCol: "text CHARACTER SET utf8mb3", value: "'𝄞'", charset: "utf8mb3"},
		{name: "cjk into latin1", src: "mysql", dstCol: "varchar(20) CHARACTER SET latin1", value: "'名前'", charset: "latin1"},
		{name: "emoji into latin1 char", src: "mysql", srcType: "char(5)", dstCol: "char(5) CHARACTER SET latin1", value: "'😀'", charset: "latin1"},
		{name: "latin1 holds e-acute", src: "mysql", dstCol: "varchar(20) CHARACTER SET latin1", value: "'café'"},
		{name: "utf8mb3 holds cjk", src: "mysql", dstCol: "varchar(20) CHARACTER SET utf8mb3", value: "'名前'"},
		{name: "question mark lands", src: "mysql", dstCol: "varchar(20) CHARACTER SET latin1", value: "'a?b'"},
		{name: "from postgres emoji into utf8mb3", src: "postgres", dstCol: "varchar(20) CHARACTER SET utf8mb3", value: "'a😀b'", charset: "utf8mb3"},
		{name: "from postgres e-acute into latin1", src: "postgres", dstCol: "varchar(20) CHARACTER SET latin1", value: "'café'"},
	}
	for _, mode := range []routes.Mode{routes.ModeAppend, routes.ModeMerge} {
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				ctx := routestest.Context(t, 2*time.Minute)
				src, dst := cdctest.Open(t, ctx, c.src), cdctest.Open(t, ctx, "mysql")
				srcType := c.srcType
				if srcType == "" {
					srcType = "text"
				}
				src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", src.Table("t"), srcType))
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", src.Table("t"), c.value))
				dst.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v %s)", dst.Table("t"), c.dstCol))
				dst.Exec(t, ctx, "INSERT INTO "+dst.Table("t")+" VALUES (0, NULL)")
				read := func(d *cdctest.DB) string { // each new row's value as UTF-8 hex: a '?' shows
					if d.Kind == "mysql" {
						return d.Query(t, ctx, "SELECT GROUP_CONCAT(CONCAT(id, ':', HEX(CONVERT(v USING utf8mb4))) ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
					}
					return d.Query(t, ctx, "SELECT string_agg(id || ':' || encode(convert_to(v, 'UTF8'), 'hex'), ',' ORDER BY id) FROM "+d.Table("t")+" WHERE id > 0")
				}
				opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"}
				_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
				if c.charset == "" {
					if err != nil {
						t.Fatal(err)
					}
					if got, want := read(dst), read(src); !strings.EqualFold(got, want) {
						t.Fatalf("destination %s, source %s", got, want)
					}
					return
				}
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), dst.Schema+".t.v") ||
					!strings.Contains(err.Error(), c.charset) || !strings.Contains(err.Error(), "CONVERT TO CHARACTER SET utf8mb4") ||
					strings.Contains(err.Error(), strings.Trim(c.value, "'")) {
					t.Fatalf("err = %v, want bad input naming %s.t.v, %s and the ALTER, not the value; destination %s", err, dst.Schema, c.charset, read(dst))
				}
				t.Log(err)
				if n := dst.Query(t, ctx, "SELECT COUNT(*) FROM "+dst.Table("t")); n != "1" || read(dst) != "" {
					t.Fatalf("the refused run changed the destination: %s rows, new rows %q", n, read(dst))
				}
			})
		}
	}
}
