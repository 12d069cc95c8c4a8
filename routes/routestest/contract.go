package routestest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// The contract suite: what routes/routes.go promises of every Source and
// Destination, run by each adapter's own package test against its real
// server (RunSourceTests, RunDestinationTests). The root matrix
// (RunCell) checks pairs end to end; this checks one adapter's side of
// the seam, the cases a pair cannot reach (a plan's range edges, a
// cancel between batches, a lock holder's name, the commit checkpoint).

// SourceFixture is a Fixture a source reads from.
type SourceFixture interface {
	Fixture
	// CreateKeyless makes table name with the single column id (a
	// nullable 64-bit integer) and no primary key, holding ids in order:
	// nil is a NULL, repeats are allowed.
	CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64)
}

// RunSourceTests runs the source contract against fix's server.
func RunSourceTests(t *testing.T, fix SourceFixture, caps Caps) {
	ctx := Context(t, 5*time.Minute)
	t.Run("missing_table_is_probe_error", func(t *testing.T) { missingTable(t, ctx, fix) })
	t.Run("plan_covers_every_row_once", func(t *testing.T) { planCoversOnce(t, ctx, fix) })
	t.Run("cancelled_read_ends_with_ctx_err", func(t *testing.T) { cancelledRead(t, ctx, fix) })
}

// DestFixture is a Fixture a destination writes into; the suite writes its
// tables through the destination itself (Create and Insert are not used).
type DestFixture = Fixture

// RunDestinationTests runs the destination contract against fix's server.
// caps.Append says whether the destination takes append mode.
func RunDestinationTests(t *testing.T, fix DestFixture, caps Caps) {
	ctx := Context(t, 5*time.Minute)
	d := &destRun{fix: fix, caps: caps}
	t.Run("abort_after_commit_is_noop", func(t *testing.T) { d.abortAfterCommit(t, ctx) })
	t.Run("abort_keeps_previous_table", func(t *testing.T) { d.abortKeeps(t, ctx) })
	t.Run("second_prepare_is_locked_naming_holder", func(t *testing.T) { d.locked(t, ctx) })
	t.Run("state_round_trip", func(t *testing.T) { d.stateRoundTrip(t, ctx) })
	t.Run("checkpoints_in_order", func(t *testing.T) { d.checkpointOrder(t, ctx) })
	t.Run("failure_at_commit_checkpoint_is_atomic", func(t *testing.T) { d.failAtCommit(t, ctx) })
}

// CheckedAllocator returns an allocator that fails the test at its end if
// any Arrow buffer it handed out is still held.
func CheckedAllocator(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func openSource(t *testing.T, ctx context.Context, fix Fixture) routes.Source {
	t.Helper()
	s, err := routes.OpenSource(ctx, fix.URL())
	if err != nil {
		t.Fatalf("open source: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ref(t testing.TB, fix Fixture, name string) routes.TableRef {
	r, err := routes.ParseTableRef(fix.Ref(name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func missingTable(t *testing.T, ctx context.Context, fix SourceFixture) {
	src := openSource(t, ctx, fix)
	_, err := src.Probe(ctx, ref(t, fix, Name("missing")))
	var pe *routes.ProbeError
	if !errors.As(err, &pe) || !errors.Is(err, routes.ErrBadInput) {
		t.Fatalf("probe of a missing table: got %v (%T), want a *routes.ProbeError (bad input, exit 2)", err, err)
	}
	if pe.Table == "" {
		t.Fatalf("the probe error names no table: %v", err)
	}
}

// planCoversOnce plans tables of awkward shapes into 1..16 pipes and reads
// every range: each row must come back exactly once. The row estimate is
// raised so a small table is split as a big one would be.
func planCoversOnce(t *testing.T, ctx context.Context, fix SourceFixture) {
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -100_001, -1, 0, 1, 99_999, 100_000, 100_001, math.MaxInt64 - 1, math.MaxInt64}
	keyed := Rows(1, 600) // dense: every cut of an equal-width split is a row
	for _, id := range edges {
		if id < 1 || id > 600 {
			keyed = append(keyed, Row{ID: id}) // NULLs elsewhere
		}
	}
	var keyless []*int64
	for i := range 1500 {
		v := int64(i % 700) // repeats
		keyless = append(keyless, &v)
		if i%9 == 0 {
			keyless = append(keyless, nil)
		}
	}
	for _, id := range edges {
		keyless = append(keyless, &id)
	}
	dense, sparse, nokey := Name("plan_dense"), Name("plan_edges"), Name("plan_nokey")
	fix.Create(t, ctx, dense, keyed[:200]) // three writes: a file source has three files to plan
	fix.Insert(t, ctx, dense, keyed[200:400])
	fix.Insert(t, ctx, dense, keyed[400:600])
	fix.Create(t, ctx, sparse, keyed)
	fix.CreateKeyless(t, ctx, nokey, keyless)
	want := map[string][]*int64{dense: ids(keyed[:600]), sparse: ids(keyed), nokey: keyless}
	for _, tbl := range []string{dense, sparse, nokey} {
		for _, pipes := range []int{1, 2, 3, 7, 16} {
			t.Run(fmt.Sprintf("%s/pipes=%d", strings.SplitN(tbl, "_", 3)[1], pipes), func(t *testing.T) {
				src := openSource(t, ctx, fix) // a fresh source: no snapshot pinned by an earlier plan
				info, err := src.Probe(ctx, ref(t, fix, tbl))
				if err != nil {
					t.Fatal(err)
				}
				info.RowEstimate = 1 << 40
				ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: pipes})
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				t.Logf("%d ranges", len(ranges))
				got := readIDs(t, ctx, src, ranges)
				if diff := countDiff(want[tbl], got); diff != "" {
					t.Fatalf("%d ranges %v: rows not read exactly once: %s", len(ranges), labels(ranges), diff)
				}
			})
		}
	}
}

func ids(rows []Row) []*int64 {
	out := make([]*int64, len(rows))
	for i := range rows {
		out[i] = &rows[i].ID
	}
	return out
}

func labels(ranges []routes.Range) []string {
	var out []string
	for i, r := range ranges {
		if i == 3 && len(ranges) > 4 {
			return append(out, fmt.Sprintf("… %d more", len(ranges)-3))
		}
		out = append(out, r.Label)
	}
	return out
}

// readIDs reads the id column of every range, with a checked allocator:
// every batch must be released by the time its stream is.
func readIDs(t *testing.T, ctx context.Context, src routes.Source, ranges []routes.Range) []*int64 {
	t.Helper()
	mem := CheckedAllocator(t)
	var out []*int64
	for _, r := range ranges {
		s, err := src.Read(ctx, r, routes.ReadOptions{Columns: []string{"id"}, ChunkBytes: 4 << 10, Allocator: mem})
		if err != nil {
			t.Fatalf("read %s: %v", r.Label, err)
		}
		for s.Next() {
			rec := s.RecordBatch()
			idx := rec.Schema().FieldIndices("id")
			if len(idx) != 1 {
				t.Fatalf("read %s: no id column in %s", r.Label, rec.Schema())
			}
			out = append(out, intValues(t, rec.Column(idx[0]))...)
		}
		err = s.Err()
		s.Release()
		if err != nil {
			t.Fatalf("read %s: %v", r.Label, err)
		}
	}
	return out
}

func intValues(t *testing.T, a arrow.Array) []*int64 {
	out := make([]*int64, a.Len())
	for i := range out {
		if a.IsNull(i) {
			continue
		}
		var v int64
		switch c := a.(type) {
		case *array.Int64:
			v = c.Value(i)
		case *array.Int32:
			v = int64(c.Value(i))
		case *array.Uint64:
			v = int64(c.Value(i))
		default:
			t.Fatalf("id column is %s, want an integer", a.DataType())
		}
		out[i] = &v
	}
	return out
}

// countDiff compares two multisets of ids (nil = NULL).
func countDiff(want, got []*int64) string {
	key := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	n := map[string]int{}
	for _, p := range want {
		n[key(p)]++
	}
	for _, p := range got {
		n[key(p)]--
	}
	var bad []string
	for k, c := range n {
		switch {
		case c > 0:
			bad = append(bad, fmt.Sprintf("id %s missed %d time(s)", k, c))
		case c < 0:
			bad = append(bad, fmt.Sprintf("id %s read %d extra time(s)", k, -c))
		}
	}
	slices.Sort(bad)
	if len(bad) > 8 {
		bad = append(bad[:8], fmt.Sprintf("… %d more", len(bad)-8))
	}
	return strings.Join(bad, "; ")
}

// cancelledRead cancels a read before its first batch and after it: the
// stream ends with the context's error, releases its memory and leaves no
// goroutine behind.
func cancelledRead(t *testing.T, ctx context.Context, fix SourceFixture) {
	tbl := Name("cancel")
	fix.Create(t, ctx, tbl, Rows(1, 20000))
	for _, after := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("after_%d_batches", after), func(t *testing.T) {
			src := openSource(t, ctx, fix)
			info, err := src.Probe(ctx, ref(t, fix, tbl))
			if err != nil {
				t.Fatal(err)
			}
			ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
			if err != nil {
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			mem := CheckedAllocator(t)
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s, err := src.Read(rctx, ranges[0], routes.ReadOptions{ChunkBytes: 4 << 10, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < after; i++ {
				if !s.Next() {
					t.Fatalf("the stream ended after %d batches (%v): the table must be read in more", i, s.Err())
				}
			}
			cancel()
			for s.Next() { // a batch already decoded may still come
			}
			err = s.Err()
			s.Release()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("after a cancel the stream ended with %v, want the context's error", err)
			}
			waitGoroutines(t, before)
		})
	}
}

// waitGoroutines fails unless the goroutine count falls back to n within
// a few seconds (a stream's producer must end with its stream).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines left after the stream's release, %d before its read:\n%s", runtime.NumGoroutine(), n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// destRun is one destination's contract run.
type destRun struct {
	fix  DestFixture
	caps Caps
}

func (d *destRun) open(t *testing.T, ctx context.Context) routes.Destination {
	t.Helper()
	dst, err := routes.OpenDestination(ctx, d.fix.URL())
	if err != nil {
		t.Fatalf("open destination: %v", err)
	}
	t.Cleanup(func() { dst.Close() })
	return dst
}

// stage prepares tbl and writes rows into it (batches of 40 rows built
// with mem, which the destination also gets).
func (d *destRun) stage(t *testing.T, ctx context.Context, dst routes.Destination, tbl string, mode routes.Mode, rows []Row, mem memory.Allocator) routes.Stage {
	t.Helper()
	info := MemInfo(d.fix.Ref(tbl))
	st, err := dst.Prepare(ctx, info, routes.WriteOptions{Table: ref(t, d.fix, tbl), Mode: mode, RunID: routes.NewRunID(), Key: info.PrimaryKey, Allocator: mem})
	if err != nil {
		t.Fatalf("prepare %s: %v", mode, err)
	}
	var batches []arrow.RecordBatch
	for i := 0; i < len(rows); i += 40 {
		batches = append(batches, Batch(mem, rows[i:min(i+40, len(rows))]))
	}
	s := BatchStream(ctx, info.Schema(), batches...)
	defer s.Release()
	n, err := st.Write(ctx, s)
	if err != nil || n != int64(len(rows)) {
		st.Abort(ctx)
		t.Fatalf("write %d rows: wrote %d, %v", len(rows), n, err)
	}
	return st
}

func (d *destRun) commit(t *testing.T, ctx context.Context, tbl string, mode routes.Mode, rows []Row, state routes.State) {
	t.Helper()
	mem := CheckedAllocator(t)
	st := d.stage(t, ctx, d.open(t, ctx), tbl, mode, rows, mem)
	if err := st.Commit(ctx, state); err != nil {
		st.Abort(ctx)
		t.Fatalf("commit: %v", err)
	}
}

func (d *destRun) abortAfterCommit(t *testing.T, ctx context.Context) {
	tbl := Name("abortcommit")
	mem := CheckedAllocator(t)
	st := d.stage(t, ctx, d.open(t, ctx), tbl, routes.ModeReplace, Rows(1, 50), mem)
	if err := st.Commit(ctx, routes.State{SourceID: "routestest://a#t", Rows: 50}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := st.Abort(ctx); err != nil {
		t.Fatalf("abort after commit: %v, want a no-op", err)
	}
	expectRows(t, ctx, d.fix, tbl, Rows(1, 50))
}

func (d *destRun) abortKeeps(t *testing.T, ctx context.Context) {
	tbl := Name("abortkeeps")
	d.commit(t, ctx, tbl, routes.ModeReplace, Rows(1, 50), routes.State{SourceID: "routestest://a#t", Rows: 50})
	modes := []routes.Mode{routes.ModeReplace}
	if d.caps.Append {
		modes = append(modes, routes.ModeAppend)
	}
	if d.caps.Merge {
		modes = append(modes, routes.ModeMerge)
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			mem := CheckedAllocator(t)
			changed := append(Rows(40, 60), Row{ID: -5})
			changed[0].Name = nil
			st := d.stage(t, ctx, d.open(t, ctx), tbl, mode, changed, mem)
			if err := st.Abort(ctx); err != nil {
				t.Fatalf("abort: %v", err)
			}
			expectRows(t, ctx, d.fix, tbl, Rows(1, 50))
		})
	}
}

// locked: a second Prepare on the table, from another opening of the
// destination (another process, in real life), is refused naming the
// first run; once the first aborts, the table can be prepared again.
func (d *destRun) locked(t *testing.T, ctx context.Context) {
	tbl := Name("locked")
	d.commit(t, ctx, tbl, routes.ModeReplace, Rows(1, 10), routes.State{SourceID: "routestest://a#t", Rows: 10})
	info := MemInfo(d.fix.Ref(tbl))
	opts := func(run string) routes.WriteOptions {
		return routes.WriteOptions{Table: ref(t, d.fix, tbl), Mode: routes.ModeReplace, RunID: run, Key: info.PrimaryKey}
	}
	holder := routes.NewRunID()
	first, err := d.open(t, ctx).Prepare(ctx, info, opts(holder))
	if err != nil {
		t.Fatalf("first prepare: %v", err)
	}
	second, err := d.open(t, ctx).Prepare(ctx, info, opts(routes.NewRunID()))
	if err == nil {
		second.Abort(ctx)
	}
	var le *routes.LockedError
	switch {
	case !errors.As(err, &le):
		t.Errorf("second prepare: got %v (%T), want a *routes.LockedError", err, err)
	case le.RunID != holder:
		t.Errorf("second prepare: %v names run %q, want the holder %q", err, le.RunID, holder)
	}
	if err := first.Abort(ctx); err != nil {
		t.Fatalf("abort the holder: %v", err)
	}
	third, err := d.open(t, ctx).Prepare(ctx, info, opts(routes.NewRunID()))
	if err != nil {
		t.Fatalf("prepare after the holder aborted: %v", err)
	}
	third.Abort(ctx)
	expectRows(t, ctx, d.fix, tbl, Rows(1, 10))
}

// stateRoundTrip: the state a commit saves is the state LoadState reads,
// per source; a later commit's replaces it; another source has none.
func (d *destRun) stateRoundTrip(t *testing.T, ctx context.Context) {
	tbl := Name("state")
	src := "routestest://h:1/db#s." + tbl
	states := []routes.State{
		{SourceID: src, Cursor: "id", Watermark: "50", Position: "0/16B3748", RunID: routes.NewRunID(), Rows: 50},
		{SourceID: src, Cursor: "id", Watermark: "2024-01-02 03:04:05.000006", Position: "mysql-bin.000003:4567", RunID: routes.NewRunID(), Rows: 10},
	}
	mode := routes.ModeReplace
	if d.caps.Append {
		mode = routes.ModeAppend
	}
	dst := d.open(t, ctx)
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		t.Fatalf("%T is not a routes.StateReader", dst)
	}
	if _, found, err := sr.LoadState(ctx, ref(t, d.fix, tbl), src); err != nil || found {
		t.Fatalf("state of a table never written: found=%v err=%v, want none", found, err)
	}
	for i, want := range states {
		d.commit(t, ctx, tbl, mode, Rows(int64(i*50+1), int64(i*50+50)), want)
		got, found, err := sr.LoadState(ctx, ref(t, d.fix, tbl), src)
		if err != nil || !found {
			t.Fatalf("load state after commit %d: found=%v err=%v", i+1, found, err)
		}
		if got.SourceID != want.SourceID || got.Cursor != want.Cursor || got.Watermark != want.Watermark ||
			got.Position != want.Position || got.RunID != want.RunID || got.Rows != want.Rows {
			t.Fatalf("commit %d saved %+v, LoadState read %+v", i+1, want, got)
		}
	}
	if _, found, err := sr.LoadState(ctx, ref(t, d.fix, tbl), "routestest://other#t"); err != nil || found {
		t.Fatalf("state of another source: found=%v err=%v, want none", found, err)
	}
}

// copyWithHook runs routes.Copy from an in-memory source into tbl with the
// checkpoint hook set, and returns the phases it saw.
func (d *destRun) copyWithHook(t *testing.T, ctx context.Context, tbl string, rows []Row, hook func(string) error) ([]string, error) {
	t.Helper()
	mem := CheckedAllocator(t)
	src := &MemSource{Table: MemInfo("mem." + tbl), Rows: rows, BatchLen: 25}
	var phases []string
	var mu sync.Mutex // pipes may reach a phase from their own goroutines
	restore := routes.SetCheckpointHook(func(p string) error {
		mu.Lock()
		if p != "mid-copy" || !slices.Contains(phases, p) {
			phases = append(phases, p)
		}
		mu.Unlock()
		return hook(p)
	})
	defer restore()
	_, err := routes.Copy(ctx, src, d.open(t, ctx), routes.CopySpec{Table: src.Table.Ref, DestTable: ref(t, d.fix, tbl),
		Mode: routes.ModeReplace, Budget: routes.Budget{Parallel: 1}, Allocator: mem})
	return phases, err
}

// checkpointOrder: a copy passes the phases in order, the destination's
// own "commit" between before-commit and after-commit.
func (d *destRun) checkpointOrder(t *testing.T, ctx context.Context) {
	phases, err := d.copyWithHook(t, ctx, Name("phases"), Rows(1, 100), func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"probe", "before-commit", "commit", "after-commit"}
	var got []string
	for _, p := range phases {
		if slices.Contains(want, p) {
			got = append(got, p)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v in this order (all seen: %v)", got, want, phases)
	}
}

var errInjected = errors.New("routestest: injected failure at the commit checkpoint")

// failAtCommit: an error at the destination's commit checkpoint fails the
// run, and the table and its state are either both the previous ones or
// both the new ones (a destination that commits in two steps may roll
// forward), never a mix; nothing is left staged.
func (d *destRun) failAtCommit(t *testing.T, ctx context.Context) {
	tbl := Name("failcommit")
	old := routes.State{SourceID: "mem://#mem." + tbl, Rows: 30, RunID: routes.NewRunID()}
	d.commit(t, ctx, tbl, routes.ModeReplace, Rows(1, 30), old)
	_, err := d.copyWithHook(t, ctx, tbl, Rows(1, 80), func(p string) error {
		if p == "commit" {
			return errInjected
		}
		return nil
	})
	if !errors.Is(err, errInjected) {
		t.Fatalf("copy with a failing commit checkpoint: got %v, want the injected error", err)
	}
	got, _ := d.fix.Read(t, ctx, tbl)
	sr, _ := routes.As[routes.StateReader](d.open(t, ctx))
	st, _, lerr := sr.LoadState(ctx, ref(t, d.fix, tbl), old.SourceID)
	if lerr != nil {
		t.Fatalf("load state: %v", lerr)
	}
	switch {
	case len(got) == 30 && st.RunID == old.RunID:
		expectRows(t, ctx, d.fix, tbl, Rows(1, 30))
	case len(got) == 80 && st.Rows == 80:
		expectRows(t, ctx, d.fix, tbl, Rows(1, 80))
	default:
		t.Fatalf("after a failed commit the table has %d rows and the state %+v: data and state disagree, or the table is neither the old one (30 rows) nor the new (80)", len(got), st)
	}
}

// CapsOf returns the modes scheme registers (routes.RegisterScheme) as
// Caps, so the suite runs every mode the registry promises.
func CapsOf(scheme string) Caps {
	info, _ := routes.Describe(scheme)
	return Caps{Append: slices.Contains(info.Modes, routes.ModeAppend), Merge: slices.Contains(info.Modes, routes.ModeMerge)}
}
