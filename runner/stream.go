package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream"
)

// A stream task (docs/streams.md) reads events from a stream source in
// batches: each batch is flattened to Arrow, checked by the contract (bad
// events go to <sink>__quarantine with the reason and the raw payload),
// written to the sink and committed there together with the source's
// cursor (the task's routes.State, like a model's offsets); only then is
// the source told to commit (Kafka offsets, Pub/Sub acks). A restart
// seeks the source to the sink's cursor: a crash between the sink commit
// and the source commit replays at most the last batch, which merge on a
// key absorbs.

// Stream batch defaults.
const (
	DefaultBatchSize     = 10000
	DefaultBatchInterval = time.Second
	// DefaultMinEvents is the fewest events checked (across runs) before
	// max_bad_ratio is judged: one malformed event in a tiny batch of a slow feed
	// is quarantined, not a failure of the task.
	DefaultMinEvents = 100
	streamMark       = "stream" // the name of the source's mark in the task state
	// windowMark is the max_bad_ratio window carried to the next run, in
	// the task state beside the cursor: Offset the bad events, Rows the
	// events checked. Absent once a window reached min_events and was judged.
	windowMark = "stream.window"
	// quarantineFromMark, in the quarantine's own commit (a sink that
	// cannot commit it with the sink's, see quarantine), is the sink's
	// cursor the quarantined batch followed; replayMark, in the sink's
	// commits, the quarantined cursors a run is still reading again (a
	// JSON array). With them a run after a crash between the two commits
	// knows which bad events are quarantined already.
	quarantineFromMark = "stream.quarantine.from"
	replayMark         = "stream.replay"
	sourceCommitPhase  = "before-source-commit"
)

// streamRun is one run of a stream task.
type streamRun struct {
	r        *Runner
	t        *dagfile.Task
	s        *dagfile.Stream
	rep      *Report
	mode     routes.Mode
	sink     routes.Destination
	ref      routes.TableRef
	qref     routes.TableRef
	src      stream.Source
	flat     *flattener
	db       *duck.DB
	cursor   string // committed in the sink
	found    bool   // the sink holds the task's state
	qfound   bool   // the quarantine holds it: a quarantine table without it is a user's
	size     int
	interval time.Duration
	cols     []string // a table source's columns, in the table's order (no contract)
	// checked and bad count the events checked since the window was last
	// judged, earlier runs' included (windowMark): max_bad_ratio is judged
	// over them once they are min_events. judged: it was, in this run.
	checked, bad int64
	judged       bool
	// replay are the cursors of quarantine commits whose batch the sink
	// did not commit (a crash between the two), while the source
	// (stream.Replayer) delivers that batch again; replayed are the
	// places (_weir_seq) in the batch being collected of the events at or
	// before one of them: their bad events are in the quarantine already.
	replay    []string
	replayed  []int64
	replayAll bool // the whole batch (a table source's chunk)
}

// runStream runs a stream task until its source is drained
// (available_now) or ctx ends (continuous): the batch in flight when ctx
// ends is still written and committed.
func (r *Runner) runStream(ctx context.Context, t *dagfile.Task, rep *Report) error {
	run, err := r.newStreamRun(ctx, t, rep)
	if err != nil {
		return err
	}
	defer run.src.Close()
	eng := r.startEngine(ctx)
	defer r.releaseEngine(eng)
	if run.db, err = eng.get(); err != nil {
		return err
	}
	from := run.cursor
	defer func() {
		rep.Offsets[streamMark] = OffsetRange{Table: routes.Redact(t.Stream.Source), From: from, To: run.cursor}
	}()
	return run.loop(ctx)
}

// newStreamSink is a stream run with its sink and the cursor committed
// there, but no source yet.
func (r *Runner) newStreamSink(ctx context.Context, t *dagfile.Task, rep *Report) (*streamRun, error) {
	s := t.Stream
	sink, err := r.destination(ctx, s.Sink.Conn)
	if err != nil {
		return nil, err
	}
	ref := tableRef(s.Sink)
	if err := routes.CheckDestTable(ref, routes.IdentLimitOf(sink)); err != nil {
		return nil, fmt.Errorf("sink %s: %w", s.Sink, err)
	}
	run := &streamRun{r: r, t: t, s: s, rep: rep, mode: routes.ModeAppend, sink: sink, ref: ref,
		qref: QuarantineTable(ref, sink),
		size: cmpOrInt(s.BatchSize, DefaultBatchSize), interval: cmpOrDur(s.BatchInterval, DefaultBatchInterval)}
	rep.QuarantineTable = run.qref
	if s.Materialization == "merge" {
		run.mode = routes.ModeMerge
	}
	rep.Mode = s.Materialization
	marks, found, err := incremental.LoadMarks(ctx, sink, ref, t.Name)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", s.Sink, err)
	}
	run.cursor, run.found = marks[streamMark].Offset, found
	if w, ok := marks[windowMark]; ok {
		run.checked = max(w.Rows, 0)
		run.bad, _ = strconv.ParseInt(w.Offset, 10, 64)
	}
	if run.replay, err = run.pendingQuarantine(ctx, marks); err != nil {
		return nil, err
	}
	run.flat = newFlattener(contractColumns(t.Contract))
	return run, nil
}

// pendingQuarantine are the quarantined cursors the sink's cursor has
// not reached: the quarantine's last commit when it followed the sink's
// cursor (the run died before the sink's commit), and those a replay
// committed in the sink had not reached yet (replayMark).
func (run *streamRun) pendingQuarantine(ctx context.Context, marks incremental.Marks) ([]string, error) {
	var out []string
	if m, ok := marks[replayMark]; ok {
		if err := json.Unmarshal([]byte(m.Offset), &out); err != nil {
			return nil, fmt.Errorf("sink %s: the task state's %s %q: %w", run.s.Sink, replayMark, m.Offset, err)
		}
	}
	q, found, err := incremental.LoadMarks(ctx, run.sink, run.qref, run.t.Name)
	if err != nil {
		return nil, fmt.Errorf("quarantine %s: %w", run.qref, err)
	}
	run.qfound = found
	from, ok := q[quarantineFromMark]
	if to := q[streamMark].Offset; found && ok && from.Offset == run.cursor && to != run.cursor && !slices.Contains(out, to) {
		out = append(out, to)
	}
	return out, nil
}

func (r *Runner) newStreamRun(ctx context.Context, t *dagfile.Task, rep *Report) (*streamRun, error) {
	run, err := r.newStreamSink(ctx, t, rep)
	if err != nil {
		return nil, err
	}
	if run.src, err = r.openStream(ctx, t); err != nil {
		return nil, err
	}
	if err := run.src.Seek(ctx, run.cursor); err != nil {
		run.src.Close()
		return nil, fmt.Errorf("stream %s: seek to %q: %w", t.Name, run.cursor, err)
	}
	return run, nil
}

// streamURL is the task's source URL (or its connection's): a secret.
func (r *Runner) streamURL(t *dagfile.Task) string {
	if c := r.file.Connections[t.Stream.SourceConn]; c != nil {
		return c.URL()
	}
	return t.Stream.SourceURL()
}

// streamOptions are what the task's event source needs of it.
func (r *Runner) streamOptions(t *dagfile.Task) stream.Options {
	return stream.Options{CursorField: t.Stream.Cursor, Group: "weir." + t.Name, ReconnectAttempts: t.Stream.ReconnectAttempts,
		Log: func(format string, args ...any) { r.warnf("task "+t.Name+": "+format, args...) }}
}

// openStream opens the task's source.
func (r *Runner) openStream(ctx context.Context, t *dagfile.Task) (stream.Source, error) {
	raw := r.streamURL(t)
	if t.Stream.IsTableSource() {
		return r.openTableSource(ctx, t, raw)
	}
	src, err := stream.Open(ctx, raw, r.streamOptions(t))
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", t.Name, err)
	}
	return src, nil
}

func contractColumns(c *dagfile.Contract) []string {
	if c == nil {
		return nil
	}
	cols := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		cols[i] = col.Name
	}
	return cols
}

func cmpOrInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

func cmpOrDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// loop collects and commits batches. An available_now task ends at the
// first empty batch; a continuous one when ctx ends, after committing the
// batch it was collecting.
func (run *streamRun) loop(ctx context.Context) error {
	if cs, ok := run.src.(stream.ChunkSource); ok {
		return run.chunkLoop(ctx, cs)
	}
	for {
		events, err := run.collect(ctx)
		if err != nil {
			return err
		}
		if len(events) > 0 {
			// The batch in flight is finished even when ctx ended (SIGTERM).
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), routes.AbortTimeout+run.interval)
			err = run.commitBatch(wctx, events)
			cancel()
			if err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if len(events) == 0 && run.s.Trigger != "continuous" {
			if drained, err := run.drained(ctx); drained || err != nil {
				return err
			}
		}
	}
}

// drained asks a source that knows whether it is read to its end; any
// other source is drained after a batch_interval without events.
func (run *streamRun) drained(ctx context.Context) (bool, error) {
	d, ok := run.src.(stream.Drainer)
	if !ok {
		return true, nil
	}
	done, err := d.Drained(ctx)
	if err != nil {
		return false, fmt.Errorf("stream %s: %w", run.t.Name, err)
	}
	return done, nil
}

// collect reads events until the batch is full, batch_interval has passed
// or ctx ends.
func (run *streamRun) collect(ctx context.Context) ([]stream.Event, error) {
	bctx, cancel := context.WithTimeout(ctx, run.interval)
	defer cancel()
	var events []stream.Event
	for len(events) < run.size {
		ev, err := run.src.Next(bctx)
		if err != nil {
			if bctx.Err() != nil {
				break
			}
			return events, fmt.Errorf("stream %s: %w", run.t.Name, err)
		}
		run.noteReplayed(len(events))
		events = append(events, ev)
	}
	if err := routes.Checkpoint("poll"); err != nil {
		return events, fmt.Errorf("stream %s: %w", run.t.Name, err)
	}
	return events, nil
}

// noteReplayed asks the source whether the event it just delivered (the
// seq-th of the batch) lies at or before a quarantined cursor still being
// read again, and forgets the cursors it has read past. A source that
// cannot tell (stream.Replayer) forgets them all: its bad events are
// quarantined again.
func (run *streamRun) noteReplayed(seq int) {
	if len(run.replay) == 0 {
		return
	}
	rp, ok := run.src.(stream.Replayer)
	if !ok {
		run.replay = nil
		return
	}
	again := false
	run.replay = slices.DeleteFunc(run.replay, func(c string) bool {
		replayed, done := rp.Replayed(c)
		again = again || replayed
		return done
	})
	if again {
		run.replayed = append(run.replayed, int64(seq))
	}
}

func (run *streamRun) forgetReplayed() { run.replayed, run.replayAll = run.replayed[:0], false }

// commitBatch flattens, checks, quarantines, writes and commits one batch,
// then commits the source.
func (run *streamRun) commitBatch(ctx context.Context, events []stream.Event) error {
	defer run.dropTemp(context.WithoutCancel(ctx))
	defer run.forgetReplayed()
	cursor := run.src.Cursor()
	rec := run.flat.record(run.r.opts.Allocator, events, run.s.Key)
	rd, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		return err
	}
	if _, err := run.db.Load(ctx, outTable, rd); err != nil {
		return err
	}
	return run.commitLoaded(ctx, cursor, int64(len(events)))
}

// commitLoaded checks, quarantines, writes and commits the batch loaded
// in outTable (n items), then commits the source.
func (run *streamRun) commitLoaded(ctx context.Context, cursor string, n int64) error {
	bad, err := run.check(ctx)
	if err != nil {
		return err
	}
	run.rep.RowsIn += n
	q, err := run.quarantine(ctx, cursor, bad)
	if err != nil {
		return err
	}
	if err := run.write(ctx, cursor, q); err != nil {
		return err
	}
	run.cursor, run.found = cursor, true
	if err := routes.Checkpoint(sourceCommitPhase); err != nil {
		return fmt.Errorf("stream %s: the sink committed, the source did not (the batch is replayed on restart): %w", run.t.Name, err)
	}
	if err := run.src.Commit(ctx, cursor); err != nil {
		return fmt.Errorf("stream %s: the sink committed, the source did not (the batch is replayed on restart): %w", run.t.Name, err)
	}
	return nil
}

// dropTemp frees the batch's tables in the engine.
func (run *streamRun) dropTemp(ctx context.Context) {
	for _, t := range []string{chunkTable, outTable, checkedTable} {
		run.db.Exec(ctx, "DROP TABLE IF EXISTS "+t)
	}
}

// bad is the condition of a quarantined event.
const badCond = "(" + errorColumn + " IS NOT NULL OR " + reasonColumn + " IS NOT NULL)"

// check types every event and marks it with the contract's reasons
// (_weir_checked, contractSQL: the same check as a model's) and returns
// how many are bad; too many fail the run before anything is written.
func (run *streamRun) check(ctx context.Context) (int64, error) {
	q := fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT *, NULL::VARCHAR AS %s FROM %s", checkedTable, reasonColumn, outTable)
	var plan contractPlan
	c := run.t.Contract
	if c != nil {
		var err error
		if plan, err = contractSQL(c, contractColumns(c), run.rep.RunID, nil); err != nil {
			return 0, fmt.Errorf("contract of %s: %w", run.t.Name, err)
		}
		q = plan.checkSQL
	}
	if err := run.db.Exec(ctx, q); err != nil {
		blame := ""
		if c != nil {
			blame = ruleBlame(c, contractColumns(c), err)
		}
		return 0, routes.BadInput("contract of %s: %s%v", run.t.Name, blame, err)
	}
	var total, bad int64
	if err := run.db.QueryRow(ctx, fmt.Sprintf("SELECT count(*), count(*) FILTER (WHERE %s) FROM %s", badCond, checkedTable), &total, &bad); err != nil {
		return 0, err
	}
	if c != nil {
		// Events that could not be loaded are quarantined for that alone.
		if err := noteContract(ctx, run.db, c, plan, errorColumn+" IS NULL", run.rep, total, bad); err != nil {
			return 0, err
		}
	}
	if c != nil {
		if err := run.judge(total, bad); err != nil {
			return 0, err
		}
	}
	return bad, nil
}

// judge adds a checked batch to the window (which earlier runs may have
// begun) and fails when the window holds min_events and more than
// max_bad_ratio of it is bad. Until it holds min_events the ratio is not
// judged: bad events are quarantined, and the window's counts go on to
// the next run with the cursor (marks).
func (run *streamRun) judge(total, bad int64) error {
	c := run.t.Contract
	run.checked += total
	run.bad += bad
	full := run.checked >= int64(cmpOrInt(run.s.MinEvents, DefaultMinEvents))
	failed := full && float64(run.bad)/float64(run.checked) > c.MaxBadRatio
	if run.rep.Contract != nil {
		run.rep.Contract.Passed = !failed
	}
	if failed {
		return fmt.Errorf("contract of %s: %d of the %d events checked since the window began (earlier runs' included, min_events) break it, above max_bad_ratio %g; the last batch (%d of %d bad) was not committed and is read again on the next run",
			run.t.Name, run.bad, run.checked, c.MaxBadRatio, bad, total)
	}
	run.judged = run.judged || full
	return nil
}

// marks are the task state committed with a batch: the cursor, and the
// window while it has not reached min_events (the next run goes on
// filling it; a judged window starts again).
func (run *streamRun) marks(cursor string) incremental.Marks {
	m := incremental.Marks{streamMark: {Offset: cursor, Rows: -1}}
	if !run.judged && run.checked > 0 {
		m[windowMark] = incremental.Mark{Offset: strconv.FormatInt(run.bad, 10), Rows: run.checked}
	}
	if len(run.replay) > 0 {
		b, _ := json.Marshal(run.replay)
		m[replayMark] = incremental.Mark{Offset: string(b), Rows: -1}
	}
	return m
}

// quarantine appends the bad events (reason, raw payload, run id) to
// <sink>__quarantine with the batch's cursor. Where the sink can commit
// two tables in one step (routes.JointStage: PostgreSQL), the quarantine's
// stage is returned uncommitted, for write to commit with the sink's:
// exactly once. Elsewhere it is committed now, with the sink's cursor it
// follows (quarantineFromMark): a run killed before the sink's commit
// leaves it there, and the next run, reading the batch again from a
// stream.Replayer, leaves out the events it holds (replayed): exactly
// once too. Events of a source that redelivers (SQS, Pub/Sub) are
// quarantined again: at-least-once.
func (run *streamRun) quarantine(ctx context.Context, cursor string, bad int64) (*pending, error) {
	if bad == 0 {
		return nil, nil
	}
	cond := badCond
	if run.replayAll {
		return nil, nil
	}
	if len(run.replayed) > 0 {
		seqs := make([]string, len(run.replayed))
		for i, n := range run.replayed {
			seqs[i] = strconv.FormatInt(n, 10)
		}
		cond += fmt.Sprintf(" AND NOT list_contains([%s], %s)", strings.Join(seqs, ","), seqColumn)
		if err := run.db.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", checkedTable, cond), &bad); err != nil {
			return nil, err
		}
		if bad == 0 {
			return nil, nil
		}
	}
	q := fmt.Sprintf("SELECT coalesce(%s, %s) AS %s, %s AS _weir_payload, %s AS %s FROM %s WHERE %s ORDER BY %s",
		errorColumn, reasonColumn, reasonColumn, rawColumn, duck.Literal(run.rep.RunID), runColumn, checkedTable, cond, seqColumn)
	p, err := run.stageTo(ctx, run.qref, nil, q)
	if err == nil {
		if _, joint := p.stage.(routes.JointStage); joint {
			return p, nil
		}
		p.quarantine = true
		err = run.commit(ctx, p, cursor, "before-quarantine-commit")
	}
	if err != nil {
		return nil, fmt.Errorf("quarantine %s: %w", run.qref, err)
	}
	run.rep.Quarantined += p.n
	return nil, nil
}

// write commits the good events to the sink (the last of each key, for
// merge) with the cursor, and the quarantine's stage q with them when
// there is one.
func (run *streamRun) write(ctx context.Context, cursor string, q *pending) error {
	var cols []string
	switch {
	case run.t.Contract != nil: // typed by the check
		cols = contractColumns(run.t.Contract)
	case run.cols != nil:
		cols = run.cols
	default:
		cols, _ = run.flat.columns()
	}
	sq := fmt.Sprintf("SELECT %s FROM %s WHERE NOT %s", identList(cols), checkedTable, badCond)
	if run.mode == routes.ModeMerge {
		sq += fmt.Sprintf(" QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s DESC) = 1", identList(run.s.Key), seqColumn)
	}
	sq += " ORDER BY " + seqColumn
	p, err := run.stageTo(ctx, run.ref, run.s.Key, sq)
	if err == nil {
		p.with = q
		err = run.commit(ctx, p, cursor, "before-commit")
	} else if q != nil {
		routes.Abort(ctx, q.stage)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", run.s.Sink, err)
	}
	run.rep.RowsOut += p.n
	if q != nil {
		run.rep.Quarantined += q.n
	}
	return nil
}

// pending is a written stage not committed yet.
type pending struct {
	stage routes.Stage
	n     int64
	with  *pending // committed in the same step (routes.JointStage)
	// quarantine: committed alone, before the sink's stage (its state
	// carries quarantineFromMark).
	quarantine bool
}

// stageTo writes a query's rows to a stage of table.
func (run *streamRun) stageTo(ctx context.Context, table routes.TableRef, key []string, q string) (*pending, error) {
	res, err := run.db.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer res.Release()
	mode, fresh := run.mode, false
	if table == run.qref {
		// Fresh: a quarantine table without the task's state is the
		// user's (weir added its columns and appended its rows, exit 0)
		mode, fresh = routes.ModeAppend, !run.qfound
	}
	stage, err := run.sink.Prepare(ctx, sinkInfo(run.t.Name, table, res.Schema(), key),
		routes.WriteOptions{Table: table, Mode: mode, RunID: run.rep.RunID, Key: key, Allocator: run.r.opts.Allocator, Fresh: fresh})
	if err != nil {
		return nil, err
	}
	if table == run.qref {
		run.qfound = true // this run's: committed with the task's state, or the run fails
	}
	n, _, err := routes.WriteOnce(ctx, stage, res, routes.Once{}) // committed by commit, maybe with another stage
	if err != nil {
		return nil, err
	}
	return &pending{stage: stage, n: n}, nil
}

// commit commits a written stage (and the one it carries) with the
// task's cursor, after checking that no other run committed to the sink
// meanwhile.
func (run *streamRun) commit(ctx context.Context, p *pending, cursor, phase string) error {
	state := func(n int64) routes.State {
		marks := run.marks(cursor)
		if p.quarantine {
			marks[quarantineFromMark] = incremental.Mark{Offset: run.cursor, Rows: -1}
		}
		st := incremental.TaskState(run.t.Name, "", marks, run.rep.RunID, n)
		st.Watermark = cursor // also with the window's mark beside it
		return st
	}
	err := run.checkOwner(ctx)
	if err == nil {
		err = routes.Checkpoint(phase)
	}
	if err == nil {
		if p.with != nil {
			err = p.stage.(routes.JointStage).CommitWith(ctx, state(p.n), p.with.stage, state(p.with.n))
		} else {
			err = p.stage.Commit(ctx, state(p.n))
		}
	}
	if err != nil {
		routes.Abort(ctx, p.stage)
		if p.with != nil {
			routes.Abort(ctx, p.with.stage)
		}
	}
	return err
}

// checkOwner fails when another run committed to the sink since this one
// read or committed its cursor: both would commit the same events.
func (run *streamRun) checkOwner(ctx context.Context) error {
	marks, found, err := incremental.LoadMarks(ctx, run.sink, run.ref, run.t.Name)
	if err != nil {
		return err
	}
	if found != run.found || marks[streamMark].Offset != run.cursor {
		return fmt.Errorf("%w: another run of %s committed to %s while this one ran; run it again to go on from its cursor", routes.ErrLocked, run.t.Name, run.s.Sink)
	}
	return nil
}
