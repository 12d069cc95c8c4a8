package pgwal

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestBootstrap_UserTableRefused: a replica's bootstrap replaced a table
// the user had created under the destination's name, rows and all, with
// exit 0 (into ClickHouse also when the user's table had the replica's
// shape, _weir_version and _weir_deleted included). weir drops only what
// it created: the bootstrap is refused before a row moves, naming the
// table, and the user's table is left as it was. A table weir made (its
// state row says so) is still re-bootstrapped after weir reset (Drop).
func TestBootstrap_UserTableRefused(t *testing.T) {
	tests := []struct {
		name, kind string
		ddl        string // the user's table; "" for Iceberg: loaded from the source's user_items
	}{
		{"postgres", "postgres", "(id int PRIMARY KEY, name text, n int, big text)"},
		{"mysql", "mysql", "(id int PRIMARY KEY, name text, n int, big text)"},
		{"clickhouse", "clickhouse", "(id Int32, name String, n Int32, big String) ENGINE = MergeTree ORDER BY id"},
		{"clickhouse/replica-shaped", "clickhouse", "(id Int32, name String, n Nullable(Int32), big Nullable(String), " +
			"_weir_version UInt64 DEFAULT 0, _weir_deleted UInt8 DEFAULT 0) ENGINE = ReplacingMergeTree(_weir_version) ORDER BY id"},
		{"iceberg", "iceberg", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setupTo(t, tt.kind)
			if tt.ddl == "" {
				e.sdb.Exec(t, e.ctx, "CREATE TABLE "+e.sdb.Table("user_items")+" (id int PRIMARY KEY, name text, n int, big text)")
				e.sdb.Exec(t, e.ctx, "INSERT INTO "+e.sdb.Table("user_items")+" VALUES (1000, 'the user''s', 1, NULL)")
				e.ddb.CopyFrom(t, e.ctx, e.sdb, "user_items", "items")
			} else {
				e.ddb.Exec(t, e.ctx, "CREATE TABLE "+e.ddb.Table("items")+" "+tt.ddl)
				e.ddb.Exec(t, e.ctx, "INSERT INTO "+e.ddb.Table("items")+" (id, name, n, big) VALUES (1000, 'the user''s', 1, 'x')")
			}
			_, err := Run(e.ctx, e.cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "items") || !strings.Contains(err.Error(), "weir did not create it") {
				t.Fatalf("run = %v, want bad input naming the table and why", err)
			}
			if ids := e.ddb.Rows(t, e.ctx, "items", []string{"id"}); !slices.Equal(ids, []string{"1000"}) {
				t.Fatalf("the user's table holds ids %v after the refused bootstrap, want its [1000]", ids)
			}
			e.ddb.DropTable(t, e.ctx, "items")
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

// TestBootstrap_StoppedBeforeCopyRetries: a bootstrap that stops after
// the destination made the replica (ClickHouse creates it before the
// copy) and before the copy committed leaves a table without a position;
// it is weir's (its claim says so), so the next run bootstraps into it
// instead of refusing it as the user's.
func TestBootstrap_StoppedBeforeCopyRetries(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			e := setupTo(t, kind)
			copying := false
			setFailpoint(t, func(stage string) error {
				if stage == "bootstrap-copy" {
					copying = true
				} else if stage == "probe" && copying {
					return errors.New("injected failure")
				}
				return nil
			})
			if _, err := Run(e.ctx, e.cfg); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("bootstrap with a failure before its copy = %v, want the injected failure", err)
			}
			setFailpoint(t, nil)
			if res := e.run(); !res.Bootstrap {
				t.Fatalf("run after the stopped bootstrap = %+v, want a bootstrap", res)
			}
			e.assertEqual("after the retried bootstrap")
		})
	}
}
