package routes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"
)

// CopySpec is one table's transfer from a source to a destination.
type CopySpec struct {
	Table     TableRef // source table
	DestTable TableRef // destination table; empty means the source's name
	// DestSchema, when set, replaces the schema of the destination table. With
	// no DestTable the name is the probed one (a file source's orders.csv
	// lands as orders), so it is applied after the probe. The rule: DestRef.
	DestSchema string
	Mode       Mode
	Budget     Budget
	RunID      string
	Key        []string // merge key; default the source's primary key
	// Window, when set, bounds an incremental read after the probe; its
	// Until is committed as the new watermark (package incremental).
	Window        WindowFunc
	Position      string // CDC position to commit with the data
	NoPassthrough bool   // force the Arrow path even when both sides speak a wire format
	Fresh         bool   // the destination table must not exist (WriteOptions.Fresh)
	Progress      *Progress
	Allocator     memory.Allocator
	// Fence, when set, makes the copy one step of a bucket of a shared
	// backfill (docs/workers.md): the stage is prepared shared
	// (SharedDestination) and committed with FencedStage.CommitIf, the
	// state keyed Fence.SourceID instead of the table's.
	Fence *Fence
}

// Fence is a copy's compare-and-set commit: its state is saved under
// SourceID only if the state saved there is Prev (nil: none). Hold, when
// set, is asked just before the commit, while the stage holds its shared
// lock (so no exclusive commit lands between the answer and the commit);
// an error aborts the commit.
type Fence struct {
	SourceID string
	Prev     *State
	Hold     func(context.Context) error
}

// CopyResult reports one table's transfer.
type CopyResult struct {
	Table      string `json:"table"`
	DestTable  string `json:"dest_table"`
	Rows       int64  `json:"rows"`
	Bytes      int64  `json:"bytes"`
	Pipes      int    `json:"pipes"`
	Native     bool   `json:"passthrough"`
	KeptEmpty  bool   `json:"kept_empty,omitempty"`  // empty source: destination left as it was
	NothingNew bool   `json:"nothing_new,omitempty"` // incremental run found no new rows
	// Unchanged: a replace found the source's content version equal to the
	// one the destination's last replace committed; nothing was read.
	Unchanged bool `json:"unchanged,omitempty"`
	// SourceRevision is the revision a VersionedSource read (github://:
	// the commit SHA its ref resolved to).
	SourceRevision string        `json:"source_revision,omitempty"`
	Watermark      string        `json:"watermark,omitempty"`
	Elapsed        time.Duration `json:"-"`
}

// Copy moves one table: probe, plan, prepare (lock + staging), one pipe per
// range under the budget, then commit with the state, or abort on any error
// or cancel so the destination stays as it was.
func Copy(ctx context.Context, src Source, dst Destination, spec CopySpec) (CopyResult, error) {
	start := time.Now()
	res := CopyResult{Table: spec.Table.String()}
	if err := Checkpoint("probe"); err != nil {
		return res, err
	}
	info, err := src.Probe(ctx, spec.Table)
	if err != nil {
		return res, suggestTable(ctx, src, spec.Table, err)
	}
	if spec, err = spec.withDefaults(info, dst); err != nil {
		return res, err
	}
	res.DestTable = spec.DestTable.String()
	spec.Progress.begin(spec.Table.String(), info.RowEstimate)
	log := slog.Default().With("table", res.Table)
	log.InfoContext(ctx, "probe", "columns", len(info.Columns), "rows_est", info.RowEstimate, "elapsed", time.Since(start))
	if err := CheckDestTable(spec.DestTable, IdentLimitOf(dst)); err != nil {
		return res, err
	}
	if err := notItself(ctx, src, dst, info, spec.DestTable); err != nil {
		return res, err
	}
	// A first look at the window, before the lock: bad input (the cursor)
	// and "nothing new" end the run without locking anything. Nothing new
	// now stays nothing new under the lock, or another run is committing.
	win, err := spec.window(ctx, info)
	if err != nil || win.Empty {
		res.NothingNew, res.Watermark = win.Empty, win.After
		return res, err
	}
	if spec.Position, res.SourceRevision, err = sourceVersion(ctx, src, info, spec); err != nil {
		return res, err
	}
	if info.Empty && spec.Mode == ModeReplace && !spec.Fresh {
		// An empty source never wipes a table (commit); known empty at the
		// probe, nothing is locked or read.
		res.KeptEmpty = true
		log.InfoContext(ctx, "commit", "dest_table", res.DestTable, "rows", 0, "kept_empty", true)
		return res, nil
	}
	stage, err := prepare(ctx, dst, info, spec)
	if err != nil {
		return res, err
	}
	log.InfoContext(ctx, "prepare", "dest_table", res.DestTable, "mode", spec.Mode)
	if res.Unchanged, err = unchanged(ctx, dst, info, spec); err != nil || res.Unchanged {
		if aerr := Abort(ctx, stage); err == nil {
			err = aerr
		}
		log.InfoContext(ctx, "unchanged", "dest_table", res.DestTable, "revision", res.SourceRevision)
		return res, err
	}
	err = copyLocked(ctx, src, stage, info, spec, &res)
	if err != nil {
		Abort(ctx, stage)
	}
	res.Elapsed = time.Since(start)
	if err == nil {
		log.InfoContext(ctx, "commit", "dest_table", res.DestTable, "rows", res.Rows, "bytes", res.Bytes, "passthrough", res.Native,
			"kept_empty", res.KeptEmpty, "nothing_new", res.NothingNew, "elapsed", res.Elapsed)
	}
	return res, err
}

// prepare prepares the destination: shared for a fenced copy.
func prepare(ctx context.Context, dst Destination, info *TableInfo, spec CopySpec) (Stage, error) {
	opts := WriteOptions{Table: spec.DestTable, Mode: spec.Mode, RunID: spec.RunID, Key: spec.Key, Allocator: spec.Allocator, Fresh: spec.Fresh}
	if spec.Fence == nil {
		return dst.Prepare(ctx, info, opts)
	}
	sd, ok := As[SharedDestination](dst)
	if !ok {
		return nil, fmt.Errorf("%w: the destination of %s cannot be written by several workers at once (a fenced, shared commit)", ErrUnsupported, spec.Table)
	}
	return sd.PrepareShared(ctx, info, opts)
}

// copyLocked runs with the destination's lock held. The window that binds
// the run is decided here, from the destination's state under the lock: a
// run that committed between the first look and the lock moved the
// watermark, and its rows must not be read again.
func copyLocked(ctx context.Context, src Source, stage Stage, info *TableInfo, spec CopySpec, res *CopyResult) error {
	win, err := spec.window(ctx, info)
	if err != nil {
		return err
	}
	if win.Empty {
		res.NothingNew, res.Watermark = true, win.After
		return Abort(ctx, stage)
	}
	ranges, err := src.Plan(ctx, info, PlanOptions{Pipes: spec.Budget.Parallel, Cursor: win.Cursor, After: win.After})
	if err != nil {
		return fmt.Errorf("plan %s: %w", spec.Table, err)
	}
	slog.InfoContext(ctx, "plan", "table", res.Table, "ranges", len(ranges), "parallel", spec.Budget.Parallel)
	res.Pipes = min(len(ranges), spec.Budget.Parallel)
	if err := runPipes(ctx, src, stage, ranges, spec, win, res); err != nil {
		return err
	}
	return commit(ctx, stage, info, spec, win, res)
}

// sourceVersion is the State.Position a VersionedSource's table commits
// with, and its revision for the report.
func sourceVersion(ctx context.Context, src Source, info *TableInfo, spec CopySpec) (position, revision string, err error) {
	v, ok := As[VersionedSource](src)
	if !ok || spec.Position != "" {
		return spec.Position, "", nil
	}
	rev, ver, err := v.TableVersion(ctx, info)
	if err != nil {
		return "", "", fmt.Errorf("version of %s: %w", spec.Table, err)
	}
	if spec.Mode == ModeReplace {
		return "version=" + ver + " rev=" + rev, rev, nil
	}
	return "rev=" + rev, rev, nil
}

// unchanged reports a replace whose source version is the one the
// destination's last replace from it committed (read under the lock).
func unchanged(ctx context.Context, dst Destination, info *TableInfo, spec CopySpec) (bool, error) {
	ver, _, ok := strings.Cut(spec.Position, " rev=")
	sr, isReader := As[StateReader](dst)
	if spec.Mode != ModeReplace || !ok || !strings.HasPrefix(ver, "version=") || !isReader {
		return false, nil
	}
	st, found, err := sr.LoadState(ctx, spec.DestTable, info.SourceID)
	if err != nil || !found {
		return false, err
	}
	last, _, _ := strings.Cut(st.Position, " rev=")
	return last == ver, nil
}

// notItself refuses a destination that is the source table itself: its
// swap would replace the table with a copy of itself, losing its indexes,
// triggers and grants. Where both ends can ask their server
// (TableIdentifier) the server's answer decides, whatever the URLs spell;
// else the destination, opened as a source, names its table the way the
// source does (same endpoint identity, same schema.table). A destination
// table that does not exist is another table.
func notItself(ctx context.Context, src Source, dst Destination, info *TableInfo, dest TableRef) error {
	refuse := &ProbeError{Table: info.Ref.String(), Problem: fmt.Sprintf("the destination %s is the source table itself", dest),
		Hint: "name another table with --dest-table or --dest-schema, or another destination URL"}
	si, sok := As[TableIdentifier](src)
	di, dok := As[TableIdentifier](dst)
	if sok && dok {
		did, err := di.TableID(ctx, dest)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		sid, serr := si.TableID(ctx, info.Ref)
		if err == nil && serr == nil {
			if sid == did {
				return refuse
			}
			return nil
		}
		// A server that cannot say who it is: compare the URLs below.
	}
	ds, ok := As[Prober](dst)
	if !ok {
		return nil
	}
	dinfo, err := ds.Probe(ctx, dest)
	if err != nil {
		return nil
	}
	srcID, _, _ := strings.Cut(info.SourceID, "#")
	dstID, _, _ := strings.Cut(dinfo.SourceID, "#")
	if srcID == "" || srcID != dstID || info.Ref != dinfo.Ref {
		return nil
	}
	return refuse
}

// DestinationOf is the table a copy of the probed info with spec lands
// in on dst: the one rule Copy applies (DestRef with dst's URL).
func DestinationOf(info *TableInfo, dst Destination, spec CopySpec) (TableRef, error) {
	var u *URL
	if l, ok := As[Located](dst); ok {
		u = l.Location()
	}
	return DestRef(u, info.Ref, spec.DestTable, spec.DestSchema)
}

func (s CopySpec) withDefaults(info *TableInfo, dst Destination) (CopySpec, error) {
	var err error
	if s.DestTable, err = DestinationOf(info, dst, s); err != nil {
		return s, err
	}
	if s.Mode == "" {
		s.Mode = ModeReplace
	}
	if s.RunID == "" {
		s.RunID = NewRunID()
	}
	if len(s.Key) == 0 {
		s.Key = info.PrimaryKey
	}
	if s.Allocator == nil {
		s.Allocator = memory.DefaultAllocator
	}
	s.Budget = s.Budget.Fill()
	return s, nil
}

func (s CopySpec) window(ctx context.Context, info *TableInfo) (Window, error) {
	if s.Window == nil {
		return Window{}, nil
	}
	return s.Window(ctx, info, s.DestTable)
}

func commit(ctx context.Context, stage Stage, info *TableInfo, spec CopySpec, win Window, res *CopyResult) error {
	if res.Rows == 0 && spec.Mode == ModeReplace {
		// An empty source never wipes a table: keep what is there.
		res.KeptEmpty = true
		return Abort(ctx, stage)
	}
	if err := Checkpoint("before-commit"); err != nil {
		return err
	}
	state := State{SourceID: info.SourceID, Cursor: win.Cursor, Watermark: win.Until, Position: spec.Position, RunID: spec.RunID, Rows: res.Rows}
	res.Watermark = state.Watermark
	if f := spec.Fence; f != nil {
		state.SourceID = f.SourceID
		fs, ok := stage.(FencedStage)
		if !ok {
			return fmt.Errorf("commit %s: %w: the stage cannot fence its commit", spec.DestTable, ErrUnsupported)
		}
		if f.Hold != nil {
			if err := f.Hold(ctx); err != nil {
				return fmt.Errorf("commit %s: %w", spec.DestTable, err)
			}
		}
		if err := fs.CommitIf(ctx, state, f.Prev); err != nil {
			return fmt.Errorf("commit %s: %w", spec.DestTable, err)
		}
		return Checkpoint("after-commit")
	}
	if err := stage.Commit(ctx, state); err != nil {
		return fmt.Errorf("commit %s: %w", spec.DestTable, err)
	}
	return Checkpoint("after-commit")
}

func runPipes(ctx context.Context, src Source, stage Stage, ranges []Range, spec CopySpec, win Window, res *CopyResult) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(spec.Budget.Parallel)
	var mu sync.Mutex
	for _, r := range ranges {
		g.Go(func() error {
			rows, bytes, native, err := runPipe(gctx, src, stage, r, spec, win)
			mu.Lock()
			defer mu.Unlock()
			res.Rows += rows
			res.Bytes += bytes
			res.Native = res.Native || native
			return err
		})
	}
	err := g.Wait()
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("copy %s: %w", spec.Table, ctx.Err())
	}
	return err
}

func runPipe(ctx context.Context, src Source, stage Stage, r Range, spec CopySpec, win Window) (rows, bytes int64, native bool, err error) {
	s, err := src.Read(ctx, r, ReadOptions{Cursor: win.Cursor, After: win.After, Until: win.Until, ChunkBytes: spec.Budget.ChunkBytes, Allocator: spec.Allocator})
	if err != nil {
		return 0, 0, false, fmt.Errorf("read %s: %w", r.Label, err)
	}
	defer s.Release()
	c, _ := As[Counter](s)
	done := spec.Progress.track(c)
	defer done()
	rows, native, err = Pipe(ctx, stage, s, !spec.NoPassthrough)
	if c != nil {
		bytes = c.Bytes()
	}
	if err != nil {
		return rows, bytes, native, fmt.Errorf("%s: %w", r.Label, err)
	}
	return rows, bytes, native, nil
}

// Pipe loads one stream into a stage: the native wire format when the stream
// offers one the stage accepts (like io.Copy trying WriterTo), else Arrow.
func Pipe(ctx context.Context, stage Stage, s Stream, allowNative bool) (int64, bool, error) {
	if ns, ok := s.(NativeStream); ok && allowNative {
		if nw, ok := stage.(NativeWriter); ok && nw.AcceptsNative(ns.Format()) {
			n, err := nw.WriteNative(ctx, ns)
			if !errors.Is(err, ErrNoPassthrough) {
				return n, true, err
			}
		}
	}
	n, err := stage.Write(ctx, s)
	return n, false, err
}

// Progress sums what the live pipes have read, for a progress line. A nil
// *Progress ignores everything.
type Progress struct {
	mu          sync.Mutex
	live        map[*Counter]struct{}
	rows, bytes atomic.Int64 // from finished pipes
	table       string       // the table being copied
	estimate    int64        // sum of the probes' row estimates so far
}

// ProgressStats is what a progress line shows.
type ProgressStats struct {
	Table    string // the table being copied
	Rows     int64  // rows read so far, every table
	Bytes    int64  // bytes read so far, every table
	Estimate int64  // the probes' row estimates summed over the tables begun; 0 unknown
}

// Snapshot returns rows and bytes read so far.
func (p *Progress) Snapshot() (rows, bytes int64) {
	s := p.Stats()
	return s.Rows, s.Bytes
}

// Stats returns the counts so far and the estimate they are measured against.
func (p *Progress) Stats() ProgressStats {
	if p == nil {
		return ProgressStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := ProgressStats{Table: p.table, Rows: p.rows.Load(), Bytes: p.bytes.Load(), Estimate: p.estimate}
	for c := range p.live {
		s.Rows += (*c).Rows()
		s.Bytes += (*c).Bytes()
	}
	return s
}

// begin records the table a Copy starts on and its probe's row estimate.
func (p *Progress) begin(table string, estimate int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.table = table
	p.estimate += max(estimate, 0)
}

func (p *Progress) track(c Counter) (done func()) {
	if p == nil || c == nil {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil {
		p.live = map[*Counter]struct{}{}
	}
	key := &c
	p.live[key] = struct{}{}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.live, key)
		p.rows.Add(c.Rows())
		p.bytes.Add(c.Bytes())
	}
}
