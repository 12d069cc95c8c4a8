package binlog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestAttackS10_ChangelogSourceColumnNamedLikeLogColumn: a source column
// named like one the log adds (_weir_op) cannot be logged as is: that is
// bad input to refuse before the bootstrap loads anything, naming the
// table and column. Every destination instead loaded <table>__weir_base
// and then failed creating the log with the server's error, exit 1
// (MySQL "Error 1060 (42S21): Duplicate column name '_weir_op'", PG
// "column \"_weir_op\" specified more than once", ClickHouse
// DUPLICATE_COLUMN), leaving __weir_base behind.
func TestAttackS10_ChangelogSourceColumnNamedLikeLogColumn(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql", "clickhouse"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, kind)
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("tw")+" (id INT PRIMARY KEY, _weir_op VARCHAR(5))")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("tw")+" VALUES (1, 'mine')")
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Changelog: true,
				Tables: []Pair{{Source: src.Ref("tw"), Dest: dst.Ref("tw")}}}
			_, err := Run(ctx, cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "_weir_op") {
				t.Fatalf("run = %v, want bad input naming column _weir_op", err)
			}
		})
	}
}
