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

// TestStateTable_NotWeirsRefused: a destination database whose
// _weir_state is the user's own table (another tool's, or one made by
// hand) is refused, bad input naming it, and the table keeps its rows:
// weir would read its watermarks from it and write its commits into it.
// PostgreSQL and MySQL already refused it (cmd/weir TestCLI_BadInputExit2);
// ClickHouse failed raw (exit 1) on the columns it lacks.
func TestStateTable_NotWeirsRefused(t *testing.T) {
	for _, kind := range []string{"clickhouse"} {
		for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeAppend} {
			t.Run(kind+"/"+string(mode), func(t *testing.T) {
				ctx := routestest.Context(t, 2*time.Minute)
				src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, kind)
				src.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v text)", src.Table("t")))
				src.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (1, 'a')", src.Table("t")))
				dst.Exec(t, ctx, "CREATE TABLE "+dst.Table("_weir_state")+" (dest_table String, note String) ENGINE = MergeTree ORDER BY dest_table")
				dst.Exec(t, ctx, "INSERT INTO "+dst.Table("_weir_state")+" VALUES ('mine', 'keep me')")
				opts := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestSchema: dst.Schema, Mode: mode, Cursor: "id"}
				_, err := weir.Transfer(ctx, src.URL, dst.URL, opts)
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), dst.Schema+"._weir_state") {
					t.Fatalf("err = %v, want bad input naming %s._weir_state", err, dst.Schema)
				}
				t.Log(err)
				if got := dst.Query(t, ctx, "SELECT groupArray(concat(dest_table, ':', note)) FROM "+dst.Table("_weir_state")); got != "['mine:keep me']" {
					t.Fatalf("the user's _weir_state now holds %s", got)
				}
			})
		}
	}
}
