package weir_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestOwnership_NameOverTheLimit: a destination table name longer than
// the server's identifier limit is refused, exit 2, naming it, before
// anything is created: PostgreSQL cuts such a name to 63 bytes with only
// a notice, so a replace, an append or a log_based bootstrap into
// "<63 bytes>_x" landed in (a replace: dropped and replaced) the user's
// table named by its first 63 bytes; MariaDB refuses a name over 64
// characters with a raw server error. The user's table keeps its row.
func TestOwnership_NameOverTheLimit(t *testing.T) {
	tests := []struct {
		name  string
		kind  string
		user  string   // the user's table: what the server cuts the long name to
		long  string   // weir's destination table
		modes []string // a routes.Mode, or "changelog" (log_based --changelog)
	}{
		{"postgres/ascii", "postgres", strings.Repeat("o", 63), strings.Repeat("o", 63) + "_x", []string{"replace", "append", "merge", "log_based", "changelog"}},
		{"postgres/cut inside a rune", "postgres", strings.Repeat("ü", 31) + "x", strings.Repeat("ü", 31) + "xü", []string{"replace", "log_based"}},
		{"mysql", "mysql", strings.Repeat("o", 64), strings.Repeat("o", 64) + "_x", []string{"replace", "append", "log_based", "changelog"}},
	}
	for _, tt := range tests {
		for _, mode := range tt.modes {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				ctx := routestest.Context(t, 2*time.Minute)
				src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, tt.kind)
				src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id bigint PRIMARY KEY, v text)")
				src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" SELECT g, 'v' || g FROM generate_series(1, 5) g")
				dst.Exec(t, ctx, "CREATE TABLE "+dst.Table(tt.user)+" (id bigint PRIMARY KEY, v text)")
				dst.Exec(t, ctx, "INSERT INTO "+dst.Table(tt.user)+" VALUES (1000, 'mine')")
				o := weir.TransferOptions{Tables: []string{src.Schema + ".t"}, DestTable: dst.Schema + "." + tt.long, Mode: routes.Mode(mode), Cursor: "id"}
				if mode == "changelog" {
					o.Mode, o.Changelog, o.Cursor = routes.ModeLogBased, true, ""
				}
				if o.Mode == routes.ModeLogBased {
					o.Cursor = ""
					t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, dst.URL, o) })
				}
				_, err := weir.Transfer(ctx, src.URL, dst.URL, o)
				if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tt.long) {
					t.Errorf("transfer into %q = %v, want bad input naming it", tt.long, err)
				}
				if got := dst.Query(t, ctx, "SELECT count(*) FROM "+dst.Table(tt.user)+" WHERE id = 1000 AND v = 'mine'"); got != "1" {
					t.Errorf("the user's %q holds %s of its row, want 1", tt.user, got)
				}
			})
		}
	}
}
