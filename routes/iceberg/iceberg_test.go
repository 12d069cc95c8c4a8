package iceberg_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// updated returns rows lo..hi with a changed name, as an upsert brings them.
func updated(lo, hi int64) []routestest.Row {
	rows := routestest.Rows(lo, hi)
	for i := range rows {
		s := "updated"
		rows[i].Name = &s
	}
	return rows
}

// noWindow makes a merge read its whole source (an upsert of a delta table).
func noWindow(context.Context, *routes.TableInfo, routes.TableRef) (routes.Window, error) {
	return routes.Window{}, nil
}

func TestDestination_ModesHistoryAndState(t *testing.T) {
	forEachCatalog(t, testModesHistoryAndState)
}

func testModesHistoryAndState(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 100))
	copyTables(t, ctx, f, "src", "dst", routes.ModeReplace)
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 100))

	f.Insert(t, ctx, "src", routestest.Rows(101, 150))
	copyTables(t, ctx, f, "src", "dst", routes.ModeReplace)
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 150))

	f.Insert(t, ctx, "src", routestest.Rows(151, 200))
	if res := copyTables(t, ctx, f, "src", "dst", routes.ModeAppend); res.Rows != 50 || res.Watermark != "200" {
		t.Fatalf("append: %d rows up to %s, want 50 up to 200", res.Rows, res.Watermark)
	}
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 200))
	expectState(t, ctx, f, "src", "dst", "200")

	f.Create(t, ctx, "delta", append(updated(50, 60), routestest.Rows(201, 210)...))
	spec := routes.CopySpec{Table: f.TableRef("delta"), DestTable: f.TableRef("dst"), Mode: routes.ModeMerge, Window: noWindow}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatalf("merge: %v", err)
	}
	want := routestest.Rows(1, 210)
	copy(want[49:60], updated(50, 60))
	expectRows(t, ctx, f, "dst", want)

	ops := operations(t, ctx, f, "dst")
	if !reflect.DeepEqual(ops, []string{"append", "overwrite", "append", "overwrite"}) {
		t.Fatalf("snapshot operations %v, want append (first load), overwrite (replace), append, overwrite (merge)", ops)
	}
	expectNoStaging(t, ctx, f, "dst")
}

// expectState checks the saved watermark in the table property, in the
// snapshot summary, and through LoadState (also once the property is gone).
func expectState(t *testing.T, ctx context.Context, f *icebergtest.Fixture, src, dst, watermark string) {
	t.Helper()
	ep := f.Endpoint()
	info, err := ep.Probe(ctx, f.TableRef(src))
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := ep.LoadState(ctx, f.TableRef(dst), info.SourceID)
	if err != nil || !ok || st.Watermark != watermark || st.Cursor != "id" || st.RunID == "" {
		t.Fatalf("LoadState: %+v %v %v; want watermark %s on id", st, ok, err, watermark)
	}
	tbl := loadTable(t, ctx, f, dst)
	if _, ok := tbl.Properties()[wice.StatePrefix+info.SourceID]; !ok {
		t.Fatalf("no state property on %s: %v", dst, tbl.Properties())
	}
	sum := tbl.CurrentSnapshot().Summary.Properties
	if sum[wice.WatermarkPrefix+info.SourceID] != watermark || sum[wice.RunProperty] != st.RunID {
		t.Fatalf("snapshot summary %v lacks watermark %s of run %s", sum, watermark, st.RunID)
	}
	// The property lost (another tool rewrote the properties): the summary serves.
	tx := tbl.NewTransaction()
	if err := tx.RemoveProperties([]string{wice.StatePrefix + info.SourceID}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	st2, ok, err := ep.LoadState(ctx, f.TableRef(dst), info.SourceID)
	if err != nil || !ok || st2 != st {
		t.Fatalf("state from the summary: %+v %v %v; want %+v", st2, ok, err, st)
	}
}

func expectNoStaging(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string) {
	t.Helper()
	if left := f.Staging(t, ctx, name); len(left) > 0 {
		t.Fatalf("left behind for %s: %v", name, left)
	}
}

func TestSource_IncrementalBySnapshot(t *testing.T) {
	forEachCatalog(t, testIncrementalBySnapshot, "sqlite-file", "sqlite-s3", "rest-file")
}

func testIncrementalBySnapshot(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	ep := f.Endpoint()
	f.Create(t, ctx, "t", routestest.Rows(1, 10))
	f.Insert(t, ctx, "t", routestest.Rows(11, 20))
	seq := func() string {
		info, _ := ep.Probe(ctx, f.TableRef("t"))
		s, ok, err := ep.MaxCursor(ctx, info, routes.SnapshotCursor)
		if err != nil || !ok {
			t.Fatalf("MaxCursor: %v %v", ok, err)
		}
		return s
	}
	read := func(after, until string) []int64 {
		return readIDs(t, ctx, f, "t", routes.PlanOptions{Pipes: 3, Cursor: routes.SnapshotCursor, After: after},
			routes.ReadOptions{Cursor: routes.SnapshotCursor, After: after, Until: until})
	}
	s2 := seq()
	if s2 != "2" {
		t.Fatalf("sequence number after two appends: %s", s2)
	}
	expectIDs(t, "(1, 2]", read("1", s2), idRange(11, 20))
	expectIDs(t, "(, 2]", read("", s2), idRange(1, 20))

	// An upsert: ids 5..7 change, 21..22 arrive. Its rows must appear.
	f.Create(t, ctx, "delta", append(updated(5, 7), routestest.Rows(21, 22)...))
	spec := routes.CopySpec{Table: f.TableRef("delta"), DestTable: f.TableRef("t"), Mode: routes.ModeMerge, Window: noWindow}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatal(err)
	}
	s3 := seq()
	expectIDs(t, "(2, 3]", read(s2, s3), []int64{5, 6, 7, 21, 22})
	expectIDs(t, "(1, 3]", read("1", s3), append([]int64{5, 6, 7}, idRange(11, 22)...))
	expectIDs(t, "(, 3]", read("", s3), idRange(1, 22))
	expectIDs(t, "(3, 3]", read(s3, s3), nil)
	expectIDs(t, "(1, 2] after more commits", read("1", s2), idRange(11, 20))

	expectChanges(t, ctx, ep, f.TableRef("t"), "1", s2, false)
	expectChanges(t, ctx, ep, f.TableRef("t"), s2, s3, true)

	// A delete: flagged, and the rows it kept (rewritten) are not new.
	if _, err := loadTable(t, ctx, f, "t").Delete(ctx, iceberg.EqualTo(iceberg.Reference("id"), int64(1)), nil); err != nil {
		t.Fatal(err)
	}
	s4 := seq()
	sum := expectChanges(t, ctx, ep, f.TableRef("t"), s3, s4, true)
	if sum.DeletedRows+sum.AddedDeleteRows == 0 {
		t.Fatalf("delete reported no deleted rows: %+v", sum)
	}
	expectIDs(t, "(3, 4]", read(s3, s4), nil)
}

func expectIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("incremental read %s: got ids %v, want %v", what, got, want)
	}
}

func expectChanges(t *testing.T, ctx context.Context, ep *wice.Endpoint, ref routes.TableRef, after, until string, flagged bool) routes.ChangeSummary {
	t.Helper()
	sum, err := ep.Changes(ctx, ref, after, until)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Flagged() != flagged {
		t.Fatalf("Changes(%s, %s] flagged %v, want %v: %+v", after, until, sum.Flagged(), flagged, sum)
	}
	return sum
}

func TestSource_TimeTravel(t *testing.T) {
	f := icebergtest.New(t)
	ctx := testContext(t)
	f.Create(t, ctx, "t", routestest.Rows(1, 10))
	first := loadTable(t, ctx, f, "t").CurrentSnapshot().SnapshotID
	f.Insert(t, ctx, "t", routestest.Rows(11, 20))
	pinned := f.TableRef("t")
	pinned.Name += wice.SnapshotSep + itoa(first)
	spec := routes.CopySpec{Table: pinned, DestTable: f.TableRef("old")}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatal(err)
	}
	expectRows(t, ctx, f, "old", routestest.Rows(1, 10))
}

func TestDestination_CancelKeepsSnapshot(t *testing.T) {
	forEachCatalog(t, testCancelKeepsSnapshot, "sqlite-file", "sqlite-s3", "rest-file")
}

func testCancelKeepsSnapshot(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 400000))
	f.Create(t, ctx, "dst", routestest.Rows(1, 10))
	before := loadTable(t, ctx, f, "dst").Metadata().Snapshots()
	cctx, cancel := context.WithCancel(ctx)
	progress := &routes.Progress{}
	go func() {
		for cctx.Err() == nil {
			if rows, _ := progress.Snapshot(); rows > 20000 {
				cancel()
			}
		}
	}()
	spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Progress: progress,
		Budget: routes.Budget{Parallel: 2, ChunkBytes: 16 << 10}}
	_, err := copyURLs(cctx, f.URL(), f.URL(), spec)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: got %v, want context.Canceled", err)
	}
	after := loadTable(t, ctx, f, "dst").Metadata().Snapshots()
	if len(after) != len(before) {
		t.Fatalf("a cancelled run added a snapshot: %d → %d", len(before), len(after))
	}
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 10))
	expectNoStaging(t, ctx, f, "dst")
}

func TestDestination_ConcurrentPrepareOneLocked(t *testing.T) {
	forEachCatalog(t, testConcurrentPrepareOneLocked)
}

func testConcurrentPrepareOneLocked(t *testing.T, f *icebergtest.Fixture) {
	ctx := testContext(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 10))
	info, err := f.Endpoint().Probe(ctx, f.TableRef("src"))
	if err != nil {
		t.Fatal(err)
	}
	stages, errs := make([]routes.Stage, 2), make([]error, 2)
	var wg sync.WaitGroup
	for i := range stages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst, err := routes.OpenDestination(ctx, f.URL()) // its own catalog connection
			if err != nil {
				errs[i] = err
				return
			}
			t.Cleanup(func() { dst.Close() })
			stages[i], errs[i] = dst.Prepare(ctx, info, routes.WriteOptions{Table: f.TableRef("dst"), Mode: routes.ModeReplace, RunID: "run" + itoa(int64(i))})
		}()
	}
	wg.Wait()
	var le *routes.LockedError
	won := 0
	if errs[1] == nil {
		won = 1
	}
	if errs[won] != nil || !errors.As(errs[1-won], &le) || le.RunID != "run"+itoa(int64(won)) {
		t.Fatalf("two Prepares: %v and %v; want one to win and the other to be locked by it", errs[0], errs[1])
	}
	if err := stages[won].Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.Endpoint().LockHolder(ctx, f.TableRef("dst")); ok {
		t.Fatal("Abort left the lease")
	}
}

func TestDestination_NoLeakedMemory(t *testing.T) {
	f := icebergtest.New(t)
	ctx := testContext(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f.Create(t, ctx, "src", routestest.Rows(1, 5000))
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeMerge} {
		spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: mode, Allocator: mem, Window: noWindow}
		if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 5000))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestS3Warehouse_Locations: with an s3:// warehouse every file of a table
// lives in the bucket, and no location carries the warehouse's secret.
func TestS3Warehouse_Locations(t *testing.T) {
	f := icebergtest.New(t, icebergtest.S3Warehouse())
	ctx := testContext(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 50))
	copyTables(t, ctx, f, "src", "dst", routes.ModeReplace)
	tbl := loadTable(t, ctx, f, "dst")
	locs := []string{tbl.Location(), tbl.MetadataLocation()}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		locs = append(locs, task.File.FilePath())
	}
	if len(locs) < 3 {
		t.Fatalf("no data files in %v", locs)
	}
	for _, l := range locs {
		if !strings.HasPrefix(l, "s3://weir/") || strings.Contains(l, "weirsecret") {
			t.Fatalf("location %s: want s3://weir/… without credentials", l)
		}
	}
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 50))
}

// TestNullCount: the NULLs of a column, counted from the data files' null
// counts (only appends) and by a scan once a merge's equality deletes
// apply (the files then count rows the deletes retired): the count is the
// live rows' either way. Name is NULL for ids 7, 14, 21, …; ts for 6, 12, 18, ….
func TestNullCount(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	ep := f.Endpoint()
	count := func(name, col string) int64 {
		t.Helper()
		info, err := ep.Probe(ctx, f.TableRef(name))
		if err != nil {
			t.Fatal(err)
		}
		n, err := ep.NullCount(ctx, info, col)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.Create(t, ctx, "src", routestest.Rows(1, 20))
	f.Insert(t, ctx, "src", routestest.Rows(21, 30))
	if ts, name := count("src", "ts"), count("src", "name"); ts != 5 || name != 4 {
		t.Fatalf("appended table: %d NULL ts, %d NULL name; want 5 and 4", ts, name)
	}
	copyTables(t, ctx, f, "src", "dst", routes.ModeMerge)
	if ts := count("dst", "ts"); ts != 5 {
		t.Fatalf("merged table: %d NULL ts, want 5", ts)
	}
	// Rewrite ids 1..12 by merge (they keep their values): the files now
	// hold 42 rows, 7 NULL ts among them, 30 of them live.
	f.Create(t, ctx, "again", routestest.Rows(1, 12))
	if _, err := copyURLs(ctx, f.URL(), f.URL(), routes.CopySpec{Table: f.TableRef("again"), DestTable: f.TableRef("dst"), Mode: routes.ModeMerge, Window: noWindow}); err != nil {
		t.Fatal(err)
	}
	if ts, name := count("dst", "ts"), count("dst", "name"); ts != 5 || name != 4 {
		t.Fatalf("table with equality deletes: %d NULL ts, %d NULL name; want 5 and 4 (the live rows')", ts, name)
	}
}
