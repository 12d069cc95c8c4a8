package pgwal

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestBootstrap_UserTableRefused: a replica's bootstrap replaced a table
// the user had created under the destination's name, rows and all, with
// exit 0. weir drops only what it created: the bootstrap is refused
// before a row moves, naming the table, and the user's table is left as
// it was. A table weir made (its state row says so) is still
// re-bootstrapped after weir reset (Drop).
func TestBootstrap_UserTableRefused(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "clickhouse"} {
		t.Run(kind, func(t *testing.T) {
			e := setupTo(t, kind)
			user := "CREATE TABLE " + e.ddb.Table("items") + " (id int PRIMARY KEY, name text)"
			if kind == "clickhouse" {
				user = "CREATE TABLE " + e.ddb.Table("items") + " (id Int32, name String) ENGINE = MergeTree ORDER BY id"
			}
			e.ddb.Exec(t, e.ctx, user)
			e.ddb.Exec(t, e.ctx, "INSERT INTO "+e.ddb.Table("items")+" VALUES (1000, 'the user''s')")
			_, err := Run(e.ctx, e.cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "items") {
				t.Fatalf("run = %v, want bad input naming the table", err)
			}
			count := "SELECT count(*) FROM " + e.ddb.Table("items") + " WHERE id = 1000"
			if kind == "clickhouse" {
				count = "SELECT toString(count()) FROM " + e.ddb.Table("items") + " WHERE id = 1000"
			}
			if n := e.ddb.Query(t, e.ctx, count); n != "1" {
				t.Fatalf("the user's table holds %s rows after the refused bootstrap, want its 1", n)
			}
			e.ddb.Exec(t, e.ctx, "DROP TABLE "+e.ddb.Table("items"))
			e.run()
			e.assertEqual("bootstrap")
			if err := Drop(e.ctx, e.cfg); err != nil {
				t.Fatal(err)
			}
			e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (51, 'row 51', 510, NULL)`)
			e.run()
			e.assertEqual("bootstrap after reset")
		})
	}
}
