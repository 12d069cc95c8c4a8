package objstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

func TestStage_RoundTrip(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		res, err := copyRows(t, ctx, f, "orders", routestest.Rows(1, 500), routes.ModeReplace)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 500 {
			t.Fatalf("copied %d rows, want 500", res.Rows)
		}
		expectRows(t, ctx, f, "orders", routestest.Rows(1, 500))
		m, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "orders")
		if len(m.Files) < 3 || m.Rows != 500 {
			t.Fatalf("manifest lists %d files and %d rows; want one file or more per pipe and 500 rows", len(m.Files), m.Rows)
		}
		if left := f.Staging(t, ctx, "orders"); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})
}

func TestStage_ReplaceRetiresOldFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		ep := f.Endpoint(t, ctx)
		mustCopy(t, ctx, f, "t", routestest.Rows(1, 100), routes.ModeReplace)
		first, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
		mustCopy(t, ctx, f, "t", routestest.Rows(1, 120), routes.ModeReplace)
		second, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
		expectRows(t, ctx, f, "t", routestest.Rows(1, 120))
		keys := f.Keys(ctx, "t")
		for _, file := range first.Files {
			if slices.Contains(keys, "t/"+file.Path) {
				t.Errorf("old run's file %s is still there", file.Path)
			}
		}
		for _, file := range second.Files {
			if !strings.HasPrefix(file.Path, "part-"+second.RunID+"-") || strings.Contains(file.Path, "/") {
				t.Errorf("replace manifest lists %s, not a file of run %s in the table's folder", file.Path, second.RunID)
			}
		}
	})
}

func TestStage_AppendAddsRun(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		ep := f.Endpoint(t, ctx)
		src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: routestest.Rows(1, 100), BatchLen: 30}
		mustCopyFrom(t, ctx, src, f, "t", routes.ModeReplace)
		first, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
		src.Rows = routestest.Rows(1, 160) // 60 new rows past the watermark
		res := mustCopyFrom(t, ctx, src, f, "t", routes.ModeAppend)
		if res.Rows != 60 || res.Watermark != "160" {
			t.Fatalf("append copied %d rows up to %q, want 60 up to 160", res.Rows, res.Watermark)
		}
		second, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
		expectRows(t, ctx, f, "t", routestest.Rows(1, 160))
		if len(second.Files) <= len(first.Files) || !slices.Equal(second.Files[:len(first.Files)], first.Files) {
			t.Fatalf("append manifest does not keep the first run's files first:\n%v\n%v", first.Files, second.Files)
		}
		st, ok, err := ep.LoadState(ctx, routes.TableRef{Name: "t"}, src.Table.SourceID)
		if err != nil || !ok || st.Watermark != "160" || st.Cursor != "id" {
			t.Fatalf("state = %+v, %v, %v; want watermark 160 on id", st, ok, err)
		}
		res = mustCopyFrom(t, ctx, src, f, "t", routes.ModeAppend)
		if !res.NothingNew {
			t.Fatalf("a replay appended %d rows", res.Rows)
		}
	})
}

func TestStage_MergeUnsupported(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t)
	stage, err := f.Endpoint(t, ctx).Prepare(ctx, routestest.MemInfo("t"), routes.WriteOptions{Mode: routes.ModeMerge})
	if !errors.Is(err, routes.ErrUnsupported) || stage != nil {
		t.Fatalf("merge: got %v, want ErrUnsupported", err)
	}
}

func mustCopy(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string, rows []routestest.Row, mode routes.Mode) routes.CopyResult {
	t.Helper()
	res, err := copyRows(t, ctx, f, table, rows, mode)
	if err != nil {
		t.Fatalf("copy %s: %v", mode, err)
	}
	return res
}

func mustCopyFrom(t *testing.T, ctx context.Context, src routes.Source, f *objstoretest.Fixture, table string, mode routes.Mode) routes.CopyResult {
	t.Helper()
	res, err := copyFrom(ctx, src, f, table, mode, nil)
	if err != nil {
		t.Fatalf("copy %s: %v", mode, err)
	}
	return res
}
