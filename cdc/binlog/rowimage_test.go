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

// TestRun_PartialRowImageRefused: binlog_row_image is a session variable,
// so a session can log partial images while the server's global is FULL
// (which the probe checks). A NOBLOB update left out the unchanged TEXT
// column and the replica landed it NULL, exit 0; a MINIMAL one failed the
// apply with PostgreSQL's raw NOT NULL error. Both are refused before the
// window is applied, exit 2, naming the setting; the replica is unchanged.
func TestRun_PartialRowImageRefused(t *testing.T) {
	for _, img := range []string{"MINIMAL", "NOBLOB"} {
		t.Run(img, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("m")+" (id INT PRIMARY KEY, a INT, b VARCHAR(10), c TEXT)")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("m")+" VALUES (1, 1, 'x', 'blob1'), (2, 2, 'y', 'blob2')")
			cfg := Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []Pair{{Source: src.Ref("m"), Dest: dst.Ref("m")}}}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			src.Exec(t, ctx, "SET SESSION binlog_row_image = '"+img+"'")
			src.Exec(t, ctx, "UPDATE "+src.Table("m")+" SET a = 10 WHERE id = 1")
			src.Exec(t, ctx, "DELETE FROM "+src.Table("m")+" WHERE id = 2")
			src.Exec(t, ctx, "SET SESSION binlog_row_image = 'FULL'")
			_, err := Run(ctx, cfg)
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "binlog_row_image") {
				t.Fatalf("run = %v; want bad input naming binlog_row_image", err)
			}
			const want = "1:1:x:blob1 2:2:y:blob2"
			if got := dst.Query(t, ctx, "SELECT string_agg(id || ':' || coalesce(a::text,'N') || ':' || coalesce(b,'N') || ':' || coalesce(c,'N'), ' ' ORDER BY id) FROM "+dst.Table("m")); got != want {
				t.Errorf("replica after the refusal %q, want it unchanged: %q", got, want)
			}
		})
	}
}
