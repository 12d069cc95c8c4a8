//go:build attack

package binlog

import (
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

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
