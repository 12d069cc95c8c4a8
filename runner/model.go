package runner

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// QuarantineSuffix names the table a model's bad rows go to: <sink>__quarantine.
const QuarantineSuffix = "__quarantine"

// QuarantineTable is sink's quarantine table in dst, <sink>__quarantine,
// shortened to fit dst's identifier limit (routes.SideName): PostgreSQL
// cut a longer name back onto the sink's own.
func QuarantineTable(sink routes.TableRef, dst routes.Destination) routes.TableRef {
	return routes.TableRef{Schema: sink.Schema, Name: routes.SideName("", sink.Name, QuarantineSuffix, routes.IdentLimitOf(dst))}
}

// modelRun is one batch of one model task.
type modelRun struct {
	r       *Runner
	t       *dagfile.Task
	m       *dagfile.Model
	rep     *Report
	mode    routes.Mode // how the sink commits: append, merge (upsert) or replace
	sink    routes.Destination
	ref     routes.TableRef   // the sink table
	qref    routes.TableRef   // <sink>__quarantine
	marks   incremental.Marks // committed in the sink
	found   bool              // the sink holds the task's state
	qmarks  incremental.Marks // committed in the quarantine table
	qfound  bool
	inputs  []*input
	missing []string // sources that do not exist yet
	engine  *engineFuture
	db      *duck.DB
	// resetting: a reset commits the new marks with no rows (this is empty)
	resetting bool
	// truncate: reset --full-refresh replaces the sink (and quarantine)
	// with no rows, in the commit of the new marks
	truncate bool
}

// runModel reads what is new in the model's sources, runs its SQL in
// DuckDB, checks its contract and commits the result with the new offsets
// in the sink's own commit.
//
// A source with more than one batch (max_batch_rows, or its default from
// the memory budget) is read batch after batch, each committed with its
// offsets, up to the heads the first batch saw: a run killed between them
// resumes after the last committed one.
func (r *Runner) runModel(ctx context.Context, t *dagfile.Task, rep *Report) error {
	var heads map[string]string
	for {
		b := &Report{Offsets: map[string]OffsetRange{}, RunID: rep.RunID}
		more, err := r.runModelBatch(ctx, t, b, &heads)
		rep.fold(b)
		if err != nil || !more {
			return err
		}
	}
}

// runModelBatch runs one batch; more says another is due.
func (r *Runner) runModelBatch(ctx context.Context, t *dagfile.Task, rep *Report, heads *map[string]string) (more bool, err error) {
	run, err := r.newModelRun(ctx, t, rep)
	if err != nil {
		return false, err
	}
	defer run.close()
	run.engine = r.startEngine(ctx)
	if err := run.openInputs(ctx); err != nil {
		return false, err
	}
	if err := run.noNullCursors(ctx); err != nil {
		return false, err
	}
	if len(run.missing) > 0 {
		// An upstream task that has not loaded anything yet: nothing to read.
		r.warnf("task %s: %s does not exist yet (has its upstream run?); nothing to do", t.Name, strings.Join(run.missing, ", "))
		rep.NothingNew = true
		return false, nil
	}
	if err := run.poll(ctx); err != nil {
		return false, err
	}
	if *heads == nil {
		*heads = map[string]string{}
		for _, in := range run.inputs {
			if in.b != nil {
				(*heads)[in.name] = in.b.Head
			}
		}
	}
	if err := run.checkChanges(ctx); err != nil {
		return false, err
	}
	if run.nothingNew() {
		rep.NothingNew = true
		return false, run.lag(ctx)
	}
	if err := run.execute(ctx); err != nil {
		return false, err
	}
	return run.more(*heads), run.lag(ctx)
}

func (r *Runner) newModelRun(ctx context.Context, t *dagfile.Task, rep *Report) (*modelRun, error) {
	m := t.Model
	mode, err := sinkMode(m.Mode)
	if err != nil {
		return nil, err
	}
	sink, err := r.destination(ctx, m.Sink.Conn)
	if err != nil {
		return nil, err
	}
	ref := tableRef(m.Sink)
	if err := routes.CheckDestTable(ref, routes.IdentLimitOf(sink)); err != nil {
		return nil, fmt.Errorf("sink %s: %w", m.Sink, err)
	}
	run := &modelRun{r: r, t: t, m: m, rep: rep, mode: mode, sink: sink, ref: ref,
		qref: QuarantineTable(ref, sink)}
	rep.QuarantineTable = run.qref
	if run.marks, run.found, err = incremental.LoadMarks(ctx, sink, ref, t.Name); err != nil {
		return nil, fmt.Errorf("sink %s: %w", m.Sink, err)
	}
	if t.Contract != nil {
		if run.qmarks, run.qfound, err = incremental.LoadMarks(ctx, sink, run.qref, t.Name); err != nil {
			return nil, fmt.Errorf("quarantine %s: %w", run.qref, err)
		}
	}
	return run, nil
}

// sinkMode maps a model's mode to the sink's commit mode.
func sinkMode(mode string) (routes.Mode, error) {
	switch mode {
	case "", "append":
		return routes.ModeAppend, nil
	case "upsert":
		return routes.ModeMerge, nil
	case "replace":
		return routes.ModeReplace, nil
	}
	return "", routes.BadInput("model mode %q: use append, upsert or replace", mode)
}

// commitMode is how the sink commits: the model's mode, except that an
// incremental aggregate with no group_by (one row) replaces that row.
func (run *modelRun) commitMode() routes.Mode {
	if a := run.m.Aggregate; a != nil && len(a.GroupBy) == 0 && run.mode == routes.ModeMerge {
		return routes.ModeReplace
	}
	return run.mode
}

// close releases the input streams and clears the engine for the next run.
func (run *modelRun) close() {
	for _, in := range run.inputs {
		in.release()
	}
	if run.engine != nil {
		run.r.releaseEngine(run.engine)
	}
}

// nothingNew: every source is past nothing new since the last commit, so
// the run writes nothing (a replace model recomputes only when a source
// moved, which only Iceberg snapshots tell reliably). Lookups do not count:
// a change in a looked-up table alone recomputes nothing.
func (run *modelRun) nothingNew() bool {
	if !run.found {
		return false
	}
	polled := false
	for _, in := range run.inputs {
		if in.lookup && run.mode != routes.ModeReplace {
			continue
		}
		polled = true
		mk, ok := run.marks[in.name]
		if !ok || in.c == nil || in.b.To != mk.Offset || in.b.Paging {
			return false
		}
		if run.mode == routes.ModeReplace && in.c.Cursor() != routes.SnapshotCursor {
			return false
		}
	}
	return polled
}

// lag records how far the sources are behind their heads after the run:
// the head as polled (rows that arrived since wait for the next run).
func (run *modelRun) lag(ctx context.Context) error {
	var lags []incremental.Lag
	for _, in := range run.inputs {
		if in.c == nil {
			continue
		}
		to := in.b.To
		if run.rep.Held > 0 {
			to = in.b.From // nothing was committed
		}
		var l incremental.Lag
		var err error
		if in.b.Head == "" {
			l, err = in.c.Lag(ctx)
		} else {
			l, err = incremental.CountLag(ctx, in.src, in.info, in.c.Cursor(), to, in.b.Head)
		}
		if err != nil {
			return err
		}
		lags = append(lags, l)
	}
	run.rep.Lag, run.rep.LagUnit, run.rep.Lags = sumLags(lags)
	return nil
}

// sqlText is the model's SQL, inline or from sql_file, without a trailing
// semicolon.
func (run *modelRun) sqlText() (string, error) {
	text := run.m.SQL
	if run.m.SQLPath != "" {
		data, err := os.ReadFile(run.m.SQLPath)
		if err != nil {
			return "", routes.BadInput("model %s: sql_file: %v", run.t.Name, err)
		}
		text = string(data)
	}
	text = strings.TrimRight(strings.TrimSpace(text), "; \t\r\n")
	if text == "" {
		return "", routes.BadInput("model %s: the SQL is empty", run.t.Name)
	}
	return text, nil
}

// execute runs the SQL over the registered batches, quarantines the rows
// that break the contract, and writes and commits the rest.
func (run *modelRun) execute(ctx context.Context) error {
	text, err := run.sqlText()
	if err != nil {
		return err
	}
	if run.engine == nil {
		run.engine = run.r.startEngine(ctx)
	}
	if run.db, err = run.engine.get(); err != nil {
		return err
	}
	if err := run.loadInputs(ctx); err != nil {
		return err
	}
	why, held, err := run.unmatched(ctx)
	if err != nil {
		return err
	}
	if held > 0 {
		run.rep.Held = held
		run.r.warnf("task %s: %s: the batch is held (on_missing: hold), nothing is committed and the next run reads it again", run.t.Name, why)
		return nil
	}
	if run.m.Aggregate != nil {
		if text, err = run.aggregate(ctx, text); err != nil {
			return err
		}
	} else {
		thisText := text
		if c := run.t.Contract; c != nil && c.Materialization != nil && c.Materialization.SCD2 != nil {
			thisText = "SELECT * FROM " + dagfile.ThisView // the dimension as it stands: its current versions
		}
		if err := run.loadThis(ctx, thisText); err != nil {
			return err
		}
	}
	c := run.t.Contract
	if c == nil && run.commitMode() == routes.ModeMerge {
		// An upsert batch must not repeat a key: the check keeps the last
		// row of each (contractSQL), with no rules of its own.
		c = &dagfile.Contract{MaxBadRatio: 1}
	}
	if c == nil {
		return run.writeDirect(ctx, text)
	}
	chk, err := run.checkContract(ctx, c, text)
	if err != nil {
		return err
	}
	return run.writeChecked(ctx, chk)
}

// writeDirect streams the SQL's result into the sink.
func (run *modelRun) writeDirect(ctx context.Context, text string) error {
	if _, err := run.db.Plan(ctx, text); err != nil {
		return routes.BadInput("model %s: %v", run.t.Name, err)
	}
	res, err := run.db.Query(ctx, text)
	if err != nil {
		return routes.BadInput("model %s: %v", run.t.Name, err)
	}
	defer res.Release()
	stage, err := run.prepareSink(ctx, res.Schema())
	if err != nil {
		return err
	}
	return run.finishSink(ctx, stage, res)
}

// writeChecked quarantines the bad rows, then streams the good ones into
// the sink.
func (run *modelRun) writeChecked(ctx context.Context, chk *checked) error {
	schema, err := run.db.Schema(ctx, chk.goodSQL)
	if err != nil {
		return err
	}
	stage, err := run.prepareSink(ctx, schema)
	if err != nil {
		return err
	}
	if err := run.quarantine(ctx, chk); err != nil {
		routes.Abort(ctx, stage)
		return err
	}
	res, err := run.db.Query(ctx, chk.goodSQL)
	if err != nil {
		routes.Abort(ctx, stage)
		return err
	}
	defer res.Release()
	if err := run.finishSink(ctx, stage, res); err != nil {
		return err
	}
	if dup := chk.total - chk.bad - run.rep.RowsOut; run.commitMode() == routes.ModeMerge && dup > 0 && !hasPost(chk.contract) && generated(chk.contract) == nil {
		run.r.warnf("task %s: %d rows of the batch repeat a key (%s) of a later row: the last row of each key, in the SQL's order, was written", run.t.Name, dup, strings.Join(run.m.Key, ", "))
	}
	return nil
}

// noNullCursors refuses an append or upsert model whose source's nullable
// cursor holds NULLs: those rows would never be read (the rule of
// incremental transfers, docs/failure-modes.md). A replace model reads its
// sources whole.
func (run *modelRun) noNullCursors(ctx context.Context) error {
	if run.mode == routes.ModeReplace {
		return nil
	}
	for _, in := range run.inputs {
		if in.c == nil {
			continue
		}
		if err := in.c.NoNullCursor(ctx); err != nil {
			return fmt.Errorf("source %s (%s): %w", in.name, in.addr, err)
		}
	}
	return nil
}
