package binlog

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestBootstrap_UserTableRefused: a MariaDB replica's bootstrap replaced
// a table the user had created under the destination's name, rows and
// all, with exit 0 (into ClickHouse also when the user's table had the
// replica's shape, _weir_version and _weir_deleted included). weir drops
// only what it created: the bootstrap is refused before a row moves,
// naming the table, the user's table left as it was; a table weir made is
// still re-bootstrapped after weir reset (Drop).
func TestBootstrap_UserTableRefused(t *testing.T) {
	tests := []struct {
		name, kind string
		ddl        string // the user's table; "" for Iceberg: loaded from the source's tu_user
	}{
		{"mysql", "mysql", "(id int PRIMARY KEY, v text)"},
		{"postgres", "postgres", "(id int PRIMARY KEY, v text)"},
		{"clickhouse", "clickhouse", "(id Int32, v String) ENGINE = MergeTree ORDER BY id"},
		{"clickhouse/replica-shaped", "clickhouse", "(id Int32, v Nullable(String), _weir_version UInt64 DEFAULT 0, " +
			"_weir_deleted UInt8 DEFAULT 0) ENGINE = ReplacingMergeTree(_weir_version) ORDER BY id"},
		{"iceberg", "iceberg", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, tt.kind)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("tu")+" (id INT PRIMARY KEY, v VARCHAR(20))")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("tu")+" VALUES (1, 'a'), (2, 'b')")
			if tt.ddl == "" {
				src.Exec(t, ctx, "CREATE TABLE "+src.Table("tu_user")+" (id INT PRIMARY KEY, v VARCHAR(20))")
				src.Exec(t, ctx, "INSERT INTO "+src.Table("tu_user")+" VALUES (1000, 'mine')")
				dst.CopyFrom(t, ctx, src, "tu_user", "tu")
			} else {
				dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("tu")+" "+tt.ddl)
				dst.Exec(t, ctx, "INSERT INTO "+dst.Table("tu")+" (id, v) VALUES (1000, 'mine')")
			}
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("tu"), Dest: dst.Ref("tu")}}}
			_, err := Run(ctx, cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "tu") || !strings.Contains(err.Error(), "weir did not create it") {
				t.Fatalf("run = %v, want bad input naming the table and why", err)
			}
			if ids := dst.Rows(t, ctx, "tu", []string{"id"}); !slices.Equal(ids, []string{"1000"}) {
				t.Fatalf("the user's table holds ids %v after the refused bootstrap, want its [1000]", ids)
			}
			dst.DropTable(t, ctx, "tu")
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			if err := Drop(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("tu")+" VALUES (3, 'c')")
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatalf("bootstrap after reset: %v", err)
			}
			h := func(d *cdctest.DB) string { return d.RowsHash(t, ctx, "tu", []string{"id", "v"}) } // read through the routes: Iceberg has no SQL
			if s, d := h(src), h(dst); s != d {
				t.Fatalf("after the re-bootstrap the replica is %s, the source %s", d, s)
			}
		})
	}
}

// TestBootstrap_OtherSourcesReplicaRefused: a destination table that is
// weir's replica of another source table (its _weir_state row is that
// source's) is not this source's to replace: a second pair into the same
// table is refused before a row moves, the first replica's rows kept; and
// after a weir reset of the first pair (which keeps its row) still refused.
func TestBootstrap_OtherSourcesReplicaRefused(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	for _, n := range []string{"ta", "tb"} {
		src.Exec(t, ctx, "CREATE TABLE "+src.Table(n)+" (id INT PRIMARY KEY, v VARCHAR(20))")
		src.Exec(t, ctx, "INSERT INTO "+src.Table(n)+" VALUES (1, '"+n+"')")
	}
	a := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("ta"), Dest: dst.Ref("tr")}}}
	b := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("tb"), Dest: dst.Ref("tr")}}}
	if _, err := Run(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"after a's bootstrap", "after a's reset"} {
		if step == "after a's reset" {
			if err := Drop(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Run(ctx, b)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "tr") {
			t.Errorf("%s: b's bootstrap into a's replica = %v; want bad input naming tr", step, err)
		}
		if got := dst.Query(t, ctx, "SELECT string_agg(v, ',') FROM "+dst.Table("tr")); got != "ta" {
			t.Errorf("%s: the replica holds %q, want a's row ta", step, got)
		}
	}
}

// TestBootstrap_StateTableNameRefused: a pair whose destination table is
// named like weir's state table is refused before anything is created,
// and a pair into another table of that database then runs (its state
// row lands in weir's own _weir_state).
func TestBootstrap_StateTableNameRefused(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "clickhouse"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("ts")+" (id INT PRIMARY KEY, v VARCHAR(20))")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("ts")+" VALUES (1, 'a')")
			bad := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("ts"), Dest: dst.Ref(routes.StateTableName)}}}
			if _, err := Run(ctx, bad); !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), routes.StateTableName) {
				t.Errorf("a pair into %s: run = %v; want bad input naming it", routes.StateTableName, err)
			}
			good := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("ts"), Dest: dst.Ref("ts")}}}
			if _, err := Run(ctx, good); err != nil {
				t.Fatalf("a pair into ts after the refusal: %v", err)
			}
			src.Exec(t, ctx, "INSERT INTO "+src.Table("ts")+" VALUES (2, 'b')")
			if _, err := Run(ctx, good); err != nil {
				t.Fatalf("the second run into ts: %v", err)
			}
			h := func(d *cdctest.DB) string { return d.Hash(t, ctx, "ts", []string{"id", "v"}, "id") }
			if s, d := h(src), h(dst); s != d {
				t.Errorf("the replica is %s, the source %s", d, s)
			}
		})
	}
}
