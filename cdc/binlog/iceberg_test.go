package binlog

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestIceberg_CrashBetweenTables: Iceberg commits each table on its own;
// a run that dies between two tables' commits leaves one ahead. The next
// run restarts from the lowest coordinate: the replica re-applies the
// replayed transactions (binlog rows are full images: idempotent), the
// changelog drops the ones its log holds (no op twice, none lost).
func TestIceberg_CrashBetweenTables(t *testing.T) {
	for _, changelog := range []bool{false, true} {
		t.Run(map[bool]string{false: "replica", true: "changelog"}[changelog], func(t *testing.T) {
			e := setup(t, "iceberg")
			e.cfg.Changelog = changelog
			accounts := e.src.Table("accounts")
			e.exec("CREATE TABLE " + accounts + " (id INT PRIMARY KEY, v VARCHAR(20))")
			e.exec("INSERT INTO " + accounts + " VALUES (1, 'a'), (2, 'b')")
			e.cfg.Tables = append(e.cfg.Tables, Pair{Source: e.src.Ref("accounts"), Dest: e.dst.Ref("accounts")})
			e.run()
			tbl := e.src.Table("items")
			e.exec(`BEGIN; UPDATE ` + accounts + ` SET v = 'x' WHERE id = 1; UPDATE ` + tbl + ` SET n = 0 WHERE id = 4;
DELETE FROM ` + accounts + ` WHERE id = 2; COMMIT`)
			e.exec(`UPDATE ` + accounts + ` SET id = 10 WHERE id = 1`)
			routes.SetCheckpointHook(func(s string) error {
				if s == "apply-between-tables" { // accounts committed, items not
					return errors.New("injected failure")
				}
				return nil
			})
			t.Cleanup(func() { routes.SetCheckpointHook(nil) })
			if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("run = %v, want the injected failure between the commits", err)
			}
			routes.SetCheckpointHook(nil)
			// accounts holds the window, items does not.
			if changelog {
				if got := e.dst.LogOps(t, e.ctx, "accounts", "id", false); !slices.Equal(got, []string{"U 1", "D 2", "D 1", "U 10"}) {
					t.Fatalf("accounts log after the failed run: %v", got)
				}
				if got := e.logOps(false); len(got) != 0 {
					t.Fatalf("items log after the failed run: %v, want no op", got)
				}
			} else if got := e.dst.Rows(t, e.ctx, "accounts", []string{"id", "v"}); !slices.Equal(got, []string{"10|x"}) {
				t.Fatalf("accounts after the failed run: %v, want 10|x", got)
			}
			e.exec(`INSERT INTO ` + accounts + ` VALUES (3, 'c')`)
			e.exec(`UPDATE ` + tbl + ` SET name = 'y' WHERE id = 5`)
			e.run()
			cols := []string{"id", "v"}
			if changelog {
				if got, want := e.dst.LogOps(t, e.ctx, "accounts", "id", false), []string{"U 1", "D 2", "D 1", "U 10", "I 3"}; !slices.Equal(got, want) {
					t.Fatalf("accounts log ops %v, want %v", got, want)
				}
				e.assertLog("items", []string{"U 4", "U 5"})
				e.assertCurrent("items")
				if s, d := e.src.RowsHash(t, e.ctx, "accounts", cols), e.dst.CurrentHash(t, e.ctx, "accounts", cols, []string{"id"}); s != d {
					t.Fatalf("accounts current state %s != source %s", d, s)
				}
				return
			}
			e.assertEqual("items")
			if s, d := e.src.RowsHash(t, e.ctx, "accounts", cols), e.dst.RowsHash(t, e.ctx, "accounts", cols); s != d {
				t.Fatalf("accounts: destination %s != source %s", d, s)
			}
		})
	}
}
