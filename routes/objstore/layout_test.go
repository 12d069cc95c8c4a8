package objstore_test

import (
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
