package iceberg_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// The REST catalog path runs the core tests through forEachCatalog
// (rest-file); these check that the in-test REST server enforces commit
// requirements the way a real one does, so the REST tests prove something.

func TestREST_CommitRequirements(t *testing.T) {
	f := icebergtest.NewREST(t)
	ctx := testContext(t)
	f.Create(t, ctx, "t", routestest.Rows(1, 10))
	stale := loadTable(t, ctx, f, "t")
	staleID := stale.CurrentSnapshot().SnapshotID
	f.Insert(t, ctx, "t", routestest.Rows(11, 20))
	fresh := loadTable(t, ctx, f, "t")
	freshID := fresh.CurrentSnapshot().SnapshotID
	tests := []struct {
		name string
		req  table.Requirement
		ok   bool
	}{
		{"stale ref snapshot", table.AssertRefSnapshotID("main", &staleID), false},
		{"other table uuid", table.AssertTableUUID(uuid.New()), false},
		{"other schema id", table.AssertCurrentSchemaID(fresh.Schema().ID + 1), false},
		{"table must not exist", table.AssertCreate(), false},
		{"current ref snapshot", table.AssertRefSnapshotID("main", &freshID), true},
	}
	cat := f.Endpoint().Catalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			upd := table.NewSetPropertiesUpdate(iceberg.Properties{"probe": tc.name})
			_, _, err := cat.CommitTable(ctx, fresh.Identifier(), []table.Requirement{tc.req}, []table.Update{upd})
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, table.ErrCommitFailed)) {
				t.Fatalf("commit: %v; want ok=%v or a commit conflict", err, tc.ok)
			}
			if got := loadTable(t, ctx, f, "t").Properties()["probe"]; (got == tc.name) != tc.ok {
				t.Fatalf("property after the commit: %q", got)
			}
		})
	}
}

// TestREST_ConcurrentCommitsOneWins: commits that all build on the same
// snapshot race; exactly one lands, the others conflict.
func TestREST_ConcurrentCommitsOneWins(t *testing.T) {
	f := icebergtest.NewREST(t)
	ctx := testContext(t)
	f.Create(t, ctx, "t", routestest.Rows(1, 10))
	base := loadTable(t, ctx, f, "t")
	parent := base.CurrentSnapshot()
	cat := f.Endpoint().Catalog()
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap := *parent
			snap.SnapshotID = parent.SnapshotID + int64(i) + 1
			snap.ParentSnapshotID = &parent.SnapshotID
			snap.SequenceNumber = parent.SequenceNumber + 1
			snap.TimestampMs = time.Now().UnixMilli()
			reqs := []table.Requirement{table.AssertRefSnapshotID("main", &parent.SnapshotID)}
			upds := []table.Update{table.NewAddSnapshotUpdate(&snap), table.NewSetSnapshotRefUpdate("main", snap.SnapshotID, table.BranchRef, 0, 0, 0)}
			_, _, errs[i] = cat.CommitTable(ctx, base.Identifier(), reqs, upds)
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, table.ErrCommitFailed):
			t.Fatalf("commit %d: %v; want success or a commit conflict", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent commits on one parent landed (%v); want exactly 1", won, n, errs)
	}
	if got := len(loadTable(t, ctx, f, "t").Metadata().Snapshots()); got != 2 {
		t.Fatalf("%d snapshots after the race, want 2", got)
	}
}
