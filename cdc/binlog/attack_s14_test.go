//go:build attack

package binlog

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS14_NonUTF8Column: the binlog carries a text column's bytes in
// the column's own character set; the capture hands them on as UTF-8
// (layout.value, convString) without converting. Bytes that are not valid
// UTF-8 fail the run (PostgreSQL "invalid byte sequence", MySQL warning
// 1366: loud, exit 1); bytes that happen to be valid UTF-8 land as another
// text, exit 0: latin1 'Ã©' (C3 A9) lands as 'é', ucs2 'ab' (00 61 00 62)
// as "\x00a\x00b". The bulk read (the server converts to utf8mb4) gives
// the source's text.
func TestAttackS14_NonUTF8Column(t *testing.T) {
	cases := []struct{ name, typ, lit, want string }{
		{"lat", "VARCHAR(20) CHARACTER SET latin1", "'Ã©'", "Ã©"},
		{"latt", "TEXT CHARACTER SET latin1", "'Ã¼ber'", "Ã¼ber"},
		{"ucs", "VARCHAR(10) CHARACTER SET ucs2", "'ab'", "ab"},
	}
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			for _, c := range cases {
				src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s)", src.Table(c.name), c.typ))
				cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref(c.name), Dest: dst.Ref(c.name)}}}
				if _, err := Run(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, %s)", src.Table(c.name), c.lit))
				if got := src.Query(t, ctx, "SELECT v FROM "+src.Table(c.name)); got != c.want {
					t.Fatalf("source %s holds %q, want %q", c.typ, got, c.want)
				}
				if _, err := Run(ctx, cfg); err != nil {
					t.Errorf("%s = %s: run: %v", c.typ, c.lit, err)
					continue
				}
				if got := dst.Query(t, ctx, "SELECT v FROM "+dst.Table(c.name)+" WHERE id = 1"); got != c.want {
					t.Errorf("%s = %s: run exit 0, destination holds %q, source %q", c.typ, c.lit, got, c.want)
				}
			}
		})
	}
}

// TestAttackS14_KeysAndGenerated: generated columns, an UPDATE of the
// primary key (also swapping two keys), a delete and re-insert of one key
// in one run, all held to a bulk read of the source.
func TestAttackS14_KeysAndGenerated(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			tbl := src.Table("kg")
			src.Exec(t, ctx, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, other INT, v VARCHAR(10), g1 INT AS (other * 2) VIRTUAL, g2 VARCHAR(20) AS (CONCAT(v, '!')) PERSISTENT)")
			src.Exec(t, ctx, "INSERT INTO "+tbl+" (id, other, v) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')")
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("kg"), Dest: dst.Ref("kg")}}}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			src.Exec(t, ctx, "UPDATE "+tbl+" SET id = 10, other = 11 WHERE id = 1")
			src.Exec(t, ctx, "BEGIN; UPDATE "+tbl+" SET id = 100 WHERE id = 2; UPDATE "+tbl+" SET id = 2 WHERE id = 3; UPDATE "+tbl+" SET id = 3 WHERE id = 100; COMMIT")
			src.Exec(t, ctx, "DELETE FROM "+tbl+" WHERE id = 10")
			src.Exec(t, ctx, "INSERT INTO "+tbl+" (id, other, v) VALUES (10, 99, 'z')")
			src.Exec(t, ctx, "INSERT INTO "+tbl+" (id, other, v) VALUES (4, 4, 'd')")
			src.Exec(t, ctx, "UPDATE "+tbl+" SET id = 5 WHERE id = 4")
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			cols := []string{"other", "v", "g1", "g2"}
			want, types := cdctest.SourceValues(t, ctx, src, "kg", cols)
			cdctest.Compare(t, ctx, dst, "kg", cols, types, want, "keys")
		})
	}
}
