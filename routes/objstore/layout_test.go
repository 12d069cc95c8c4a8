package objstore_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// A table written before runs staged their files (data under run=<id>/)
// is read, appended to without moving its files, and laid out flat by
// its next replace.
func TestOldLayout_ReadAppendReplace(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		ep := f.Endpoint(t, ctx)
		f.CreateOldLayout(t, ctx, "t", routestest.Rows(1, 100))
		expectRows(t, ctx, f, "t", routestest.Rows(1, 100))
		old, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
		if len(old.Files) == 0 || !strings.HasPrefix(old.Files[0].Path, "run=") {
			t.Fatalf("fixture is not laid out the old way: %v", old.Files)
		}

		for round, rows := range [][]routestest.Row{routestest.Rows(101, 160), routestest.Rows(161, 230)} {
			mustCopy(t, ctx, f, "t", rows, routes.ModeAppend)
			expectRows(t, ctx, f, "t", routestest.Rows(1, rows[len(rows)-1].ID))
			m, _ := objstoretest.ReadManifest(t, ctx, ep, "t")
			keys := f.Keys(ctx, "t")
			for i, file := range m.Files {
				if i < len(old.Files) && file != old.Files[i] {
					t.Fatalf("append %d changed the old file %v into %v", round, old.Files[i], file)
				}
				if i >= len(old.Files) && strings.Contains(file.Path, "/") {
					t.Fatalf("append %d published %s outside the table's folder", round, file.Path)
				}
				if !slices.Contains(keys, "t/"+file.Path) {
					t.Fatalf("append %d: %s is listed but missing", round, file.Path)
				}
			}
		}

		mustCopy(t, ctx, f, "t", routestest.Rows(1, 40), routes.ModeReplace)
		expectRows(t, ctx, f, "t", routestest.Rows(1, 40))
		for _, k := range f.Keys(ctx, "t") {
			if strings.Contains(k, "run=") {
				t.Fatalf("replace left the old layout's %s", k)
			}
		}
		if left := f.Staging(t, ctx, "t"); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})
}

// Bad settings of the layout are caught when the endpoint opens or the
// stage is prepared, before a row moves: an S3 file larger than one
// CopyObject can publish, a run id that cannot name files.
func TestLayout_BadInput(t *testing.T) {
	ctx := testContext(t)
	for _, c := range []struct {
		fixture func(testing.TB, ...string) *objstoretest.Fixture
		query   string
		ok      bool
	}{
		{objstoretest.NewS3, "file_bytes=4294967296", true},
		{objstoretest.NewS3, "file_bytes=4294967297", false},
		{objstoretest.NewS3, "file_bytes=10000000000", false},
		{objstoretest.NewFile, "file_bytes=10000000000", true},
		{objstoretest.NewGCS, "file_bytes=10000000000", true},
	} {
		f := c.fixture(t, c.query)
		dst, err := routes.OpenDestination(ctx, f.URL())
		if err == nil {
			dst.Close()
		}
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, routes.ErrBadInput)) {
			t.Errorf("%s: got %v, want ok=%v (or a bad-input error)", f.URL(), err, c.ok)
		}
	}
	f := objstoretest.NewFile(t)
	for _, id := range []string{"a/b", "../x", "", "run id", strings.Repeat("x", 65)} {
		st, err := f.Endpoint(t, ctx).Prepare(ctx, routestest.MemInfo("t"), routes.WriteOptions{Mode: routes.ModeReplace, RunID: id})
		if id == "" {
			if err != nil {
				t.Fatalf("an empty run id gets a fresh one: %v", err)
			}
			st.Abort(ctx)
			continue
		}
		if err == nil {
			st.Abort(ctx)
		}
		if !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("run id %q: got %v, want a bad-input error", id, err)
		}
	}
}
