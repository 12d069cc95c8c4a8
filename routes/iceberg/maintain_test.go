package iceberg_test

import (
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestMaintain_ReadFromStartAfterRewrites: a read by snapshot from the
// start of the table (a first run bounded by Until, or a replay) returns
// every live row, also those that a compaction (weir maintain) or a
// copy-on-write delete rewrote; a read past the compacted files finds
// nothing new in the compaction.
func TestMaintain_ReadFromStartAfterRewrites(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, f *icebergtest.Fixture) {
		ctx := testContext(t)
		ep := f.Endpoint()
		f.Create(t, ctx, "m", routestest.Rows(1, 10))
		f.Insert(t, ctx, "m", routestest.Rows(11, 20))
		f.Insert(t, ctx, "m", routestest.Rows(21, 30))
		seq := func() string {
			info, _ := ep.Probe(ctx, f.TableRef("m"))
			s, _, err := ep.MaxCursor(ctx, info, routes.SnapshotCursor)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		read := func(after, until string) []int64 {
			return readIDs(t, ctx, f, "m", routes.PlanOptions{Pipes: 2, Cursor: routes.SnapshotCursor, After: after},
				routes.ReadOptions{Cursor: routes.SnapshotCursor, After: after, Until: until})
		}
		before := seq()
		rep, err := ep.Maintain(ctx, f.TableRef("m"), routes.MaintainOptions{Consumed: routes.AllConsumed, RetainLast: 10, RunID: "maintain-test", Skip: []string{"expire", "orphans"}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Compact.Rewritten != 3 || rep.Compact.Written != 1 {
			t.Fatalf("compaction: %+v", rep.Compact)
		}
		compacted := seq()
		if n, _ := strconv.Atoi(compacted); strconv.Itoa(n-1) != before {
			t.Fatalf("compaction made snapshot %s after %s, want one snapshot", compacted, before)
		}
		expectIDs(t, "(, compacted]", read("", compacted), idRange(1, 30))
		expectIDs(t, "(before, compacted]", read(before, compacted), nil)
		if _, err := loadTable(t, ctx, f, "m").Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(1)), nil); err != nil {
			t.Fatal(err)
		}
		expectIDs(t, "(, deleted]", read("", seq()), idRange(2, 30))
	}, "sqlite-file")
}
