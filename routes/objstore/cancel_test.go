package objstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// A run cancelled mid-copy leaves the previous manifest and files readable
// and none of its own files behind.
func TestCopy_CancelKeepsPreviousTable(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		mustCopy(t, ctx, f, "t", routestest.Rows(1, 100), routes.ModeReplace)
		before, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "t")

		cctx, cancel := context.WithCancel(ctx)
		src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: routestest.Rows(1, 30000), BatchLen: 100, Block: make(chan struct{})}
		done := make(chan error, 1)
		go func() {
			_, err := copyFrom(cctx, src, f, "t", routes.ModeReplace, nil)
			done <- err
		}()
		go feed(cctx, src.Block) // slowly, so the run is cancelled mid-copy
		waitForRunFiles(t, ctx, f, "t", before)
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled copy returned %v", err)
		}
		after, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "t")
		if after.RunID != before.RunID || len(after.Files) != len(before.Files) {
			t.Fatalf("the manifest changed: run %s → %s", before.RunID, after.RunID)
		}
		expectRows(t, ctx, f, "t", routestest.Rows(1, 100))
		if left := f.Staging(t, ctx, "t"); len(left) > 0 {
			t.Fatalf("the cancelled run left %v", left)
		}
	})
}

func feed(ctx context.Context, ch chan struct{}) {
	for {
		select {
		case ch <- struct{}{}:
			time.Sleep(5 * time.Millisecond)
		case <-ctx.Done():
			return
		}
	}
}

// waitForRunFiles waits until a new run has staged a part file.
func waitForRunFiles(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string, m *objstore.Manifest) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, k := range f.Keys(ctx, objstoretest.StagingDir(table)) {
			if !strings.Contains(k, "/"+m.RunID+"/") {
				return
			}
		}
	}
	t.Fatal("the second run wrote no file")
}

// A killed run (files written, no commit, no abort, its lease left to
// expire) is invisible to readers following the manifest, and the next run
// sweeps its files: staged ones, ones it had already published into the
// table's folder, and ones of the layout before staging (run=<id>/).
func TestCopy_KilledRunInvisibleThenSwept(t *testing.T) {
	killed := map[string][]string{
		"staged":     {"_weir_staging/t/dead0001/part-dead0001-000-0000.parquet"},
		"publishing": {"_weir_staging/t/dead0001/part-dead0001-001-0000.parquet", "t/part-dead0001-000-0000.parquet"},
		"old layout": {"t/run=dead0001/part-000-0000.parquet"},
	}
	for name, keys := range killed {
		t.Run(name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
				ctx := testContext(t)
				mustCopy(t, ctx, f, "t", routestest.Rows(1, 50), routes.ModeReplace)
				for _, k := range keys {
					f.Put(t, k, []byte("half a file"))
				}
				putLock(t, f, "t", "dead0001", time.Now().Add(-time.Second))
				expectRows(t, ctx, f, "t", routestest.Rows(1, 50))
				if left := f.Staging(t, ctx, "t"); len(left) != len(keys)+1 {
					t.Fatalf("staging = %v, want the killed run's files %v and lock", left, keys)
				}
				mustCopy(t, ctx, f, "t", routestest.Rows(1, 60), routes.ModeAppend)
				expectRows(t, ctx, f, "t", routestest.Rows(1, 60))
				if left := f.Staging(t, ctx, "t"); len(left) > 0 {
					t.Fatalf("the next run left %v", left)
				}
			})
		})
	}
}

// A weir table folder whose first run never committed is not a table.
func TestProbe_UncommittedTableNotFound(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t)
	f.Put(t, "t/run=dead0001/part-000-0000.parquet", []byte("x"))
	_, err := f.Endpoint(t, ctx).Probe(ctx, routes.TableRef{Name: "t"})
	if !errors.Is(err, routes.ErrNotFound) || !strings.Contains(err.Error(), "no committed run") {
		t.Fatalf("probe: got %v, want not found (no committed run)", err)
	}
}
