package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// input is one source of a model: a consumer over its table (nil for a
// lookup, and for a table without a cursor read whole by a replace model)
// and the batch this run reads, registered in DuckDB as the view name.
type input struct {
	name string
	addr dagfile.TableAddr
	src  routes.Source
	info *routes.TableInfo
	c    *incremental.Consumer
	b    *incremental.Batch
	view bool // DuckDB owns the stream (loaded)
	// lookup: a source of lookup:, read whole every run (a table a join
	// looks up); it has no consumer and no offsets.
	lookup bool
	// settle: what a backfill under way on the table settled when this
	// run's batch was polled (nil: none under way)
	settle *incremental.Settle
}

func (in *input) release() {
	if in.b != nil && in.b.Stream != nil && !in.view {
		in.b.Stream.Release()
	}
}

// modelSources returns a model's sources by view name: input for source:,
// the names of sources: otherwise.
func modelSources(m *dagfile.Model) map[string]dagfile.TableAddr {
	if !m.Source.IsZero() {
		return map[string]dagfile.TableAddr{"input": m.Source}
	}
	return m.Sources
}

// sortedNames returns the keys of a source map in order.
func sortedNames(srcs map[string]dagfile.TableAddr) []string {
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// openInputs probes each source and places a consumer at the task's
// committed mark (or at start: when the sink holds none).
func (run *modelRun) openInputs(ctx context.Context) error {
	start, err := incremental.ParseStart(run.m.Start)
	if err != nil {
		return err
	}
	srcs := modelSources(run.m)
	for _, name := range sortedNames(srcs) {
		in, err := run.openInput(ctx, name, srcs[name], start)
		if errors.Is(err, routes.ErrNotFound) {
			run.missing = append(run.missing, srcs[name].String())
			continue
		}
		if err != nil {
			return fmt.Errorf("source %s (%s): %w", name, srcs[name], err)
		}
		run.inputs = append(run.inputs, in)
	}
	return nil
}

func (run *modelRun) openInput(ctx context.Context, name string, addr dagfile.TableAddr, start incremental.Start) (*input, error) {
	src, err := run.r.source(ctx, addr.Conn)
	if err != nil {
		return nil, err
	}
	info, err := src.Probe(ctx, tableRef(addr))
	if err != nil {
		return nil, err
	}
	in := &input{name: name, addr: addr, src: src, info: info, lookup: run.m.IsLookup(name)}
	if in.lookup {
		return in, nil // read whole every run, no offsets
	}
	cfg := incremental.Config{Task: run.t.Name, Name: name, Source: src, Table: info.Ref, Start: start,
		Cursor: run.m.Cursor[name], Allocator: run.r.opts.Allocator, Budget: run.r.opts.Budget, Probe: info}
	if mk, ok := run.marks[name]; ok && run.found {
		cfg.Committed = &mk
	}
	in.c, err = incremental.NewConsumer(ctx, cfg)
	var pe *routes.ProbeError
	if run.mode == routes.ModeReplace && errors.As(err, &pe) {
		return in, nil // no cursor: a replace model reads the whole table
	}
	return in, err
}

// poll reads each source's batch: what is past the committed mark for
// append and upsert (bounded by max_batch_rows, and by a batch already
// quarantined but not yet committed); the whole table up to its head for
// replace.
func (run *modelRun) poll(ctx context.Context) error {
	for _, in := range run.inputs {
		if err := run.pollInput(ctx, in); err != nil {
			return fmt.Errorf("poll %s: %w", in.addr, err)
		}
		run.rep.Offsets[in.name] = OffsetRange{Table: in.addr.String(), From: in.b.From, To: in.b.To}
	}
	return nil
}

func (run *modelRun) pollInput(ctx context.Context, in *input) error {
	var err error
	if in.c == nil {
		in.b = &incremental.Batch{Source: in.name, Base: -1}
		in.b.Stream, err = incremental.ReadTable(ctx, in.src, in.info, run.r.opts.Budget, run.r.opts.Allocator)
		return err
	}
	opts := incremental.PollOptions{}
	if run.mode == routes.ModeReplace {
		in.c.Seek("")
	} else {
		if opts.MaxRows, err = run.batchRows(ctx, in); err != nil {
			return err
		}
		opts.Until = run.pendingUntil(in)
		if in.c.Cursor() == routes.SnapshotCursor && in.c.Position() != "" {
			if opts.Until, err = run.snapshotBound(ctx, in, opts); err != nil {
				return err
			}
			opts.MaxRows = 0 // whole snapshots; a first run pages its head snapshot by MaxRows
		}
		opts.Count = run.m.OnChange != "ignore" && in.c.Cursor() != routes.SnapshotCursor
		opts.Settled = run.settled(in)
	}
	in.b, err = in.c.Poll(ctx, opts)
	if err == nil && in.b.Cut && in.settle != nil {
		st := in.settle
		at := fmt.Sprintf("bucket %d's progress", st.Bucket)
		if st.Bucket < 0 {
			at = "the plan's head"
		}
		run.rep.Waiting = append(run.rep.Waiting, fmt.Sprintf("%s: a backfill is under way on it (plan %s of %s, %d buckets): read up to %s %s, %s; the rows past it wait for a later run",
			in.addr, st.Plan.ID, st.Source, st.Plan.Buckets, in.c.Cursor(), incremental.OrStart(in.b.To), at))
		run.r.warnf("task %s: %s", run.t.Name, run.rep.Waiting[len(run.rep.Waiting)-1])
	}
	return err
}

// settled is the Poll hook that stops an input's batch at what a backfill
// under way on its table has committed whole (incremental.Settled; the
// order Poll asks it in makes it race-free): a source that lists its
// states (PostgreSQL, Iceberg), read by a column cursor. An Iceberg table
// read by snapshots needs none: its snapshots are read in commit order.
func (run *modelRun) settled(in *input) func(context.Context) (string, bool, error) {
	sl, ok := routes.As[routes.StateLister](in.src)
	if !ok || in.c.Cursor() == routes.SnapshotCursor {
		return nil
	}
	return func(ctx context.Context) (string, bool, error) {
		states, err := sl.States(ctx, in.info.Ref)
		if err != nil {
			return "", false, err
		}
		st, ok, err := incremental.Settled(in.info.Ref, states, in.c.Cursor())
		if err != nil || !ok {
			return "", false, err
		}
		in.settle = &st
		return st.Offset, true, nil
	}
}

// snapshotBound applies max_batch_rows to an Iceberg source past its
// first read, whose offsets are snapshots: a batch is whole snapshots, as
// many as fit in max_batch_rows by their summaries' added-records, and at
// least one. (A first run reads the table's current snapshot, an
// incremental read from the start would miss rewritten files; the
// consumer pages through it by max_batch_rows, committing its place inside
// the snapshot.) The bound is opts.Until, or the pending batch's end when
// there is one.
func (run *modelRun) snapshotBound(ctx context.Context, in *input, opts incremental.PollOptions) (string, error) {
	if opts.MaxRows <= 0 || opts.Until != "" {
		return opts.Until, nil
	}
	sum, err := snapshotSummary(ctx, in, in.c.Position(), "")
	if err != nil {
		return "", fmt.Errorf("max_batch_rows: %w", err)
	}
	var rows int64
	for i, s := range sum.Snapshots {
		rows += max(s.AddedRows, 0)
		if i > 0 && rows > opts.MaxRows {
			return strconv.FormatInt(sum.Snapshots[i-1].SequenceNumber, 10), nil
		}
	}
	return "", nil
}

// pendingUntil: when the quarantine table holds a mark ahead of the sink's,
// a run quarantined that batch and died before its sink commit; this run
// reads exactly that batch again, so its bad rows are not quarantined twice.
func (run *modelRun) pendingUntil(in *input) string {
	q, ok := run.qmarks[in.name]
	if !run.qfound || !ok || q.Offset == "" {
		return ""
	}
	if incremental.Compare(q.Offset, in.c.Position()) > 0 {
		return q.Offset
	}
	return ""
}

// pending reports whether this run re-reads a batch already quarantined.
func (run *modelRun) pending() bool {
	if !run.qfound || run.mode == routes.ModeReplace {
		return false
	}
	for _, in := range run.inputs {
		if in.lookup {
			continue
		}
		if q, ok := run.qmarks[in.name]; !ok || q.Offset != in.b.To || q.Page != in.b.Page {
			return false
		}
	}
	return len(run.inputs) > 0
}

// loadInputs copies each batch into DuckDB as a temporary table named
// like its view (input, or the names of sources:). A raw Arrow view would
// be read once only, and DuckDB's pushdowns into it are wrong (see package
// duck): the copy is Arrow into DuckDB's columns, never row by row.
func (run *modelRun) loadInputs(ctx context.Context) error {
	for _, in := range run.inputs {
		in.view = true
		if _, err := run.db.Load(ctx, in.name, in.b.Stream); err != nil {
			return fmt.Errorf("load %s: %w", in.addr, err)
		}
	}
	return nil
}

// rowsIn sums the rows the sources delivered.
func (run *modelRun) rowsIn() int64 {
	var n int64
	for _, in := range run.inputs {
		n += in.b.Rows()
	}
	return n
}
