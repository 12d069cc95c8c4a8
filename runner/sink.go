package runner

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// EngineScheme is the TableInfo.Scheme of a model's output: destinations
// derive their column types from the Arrow types.
const EngineScheme = "duckdb"

// sinkInfo describes a model's output to a destination's Prepare.
func sinkInfo(task string, ref routes.TableRef, schema *arrow.Schema, key []string) *routes.TableInfo {
	cols := make([]routes.Column, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = routes.Column{Name: f.Name, Type: f.Type, Nullable: true}
	}
	return &routes.TableInfo{Scheme: EngineScheme, SourceID: incremental.StateKey(task), Ref: ref, Columns: cols, PrimaryKey: key}
}

// sinkKey is the merge key of an upsert model (nil otherwise).
func (run *modelRun) sinkKey() []string {
	if run.commitMode() == routes.ModeMerge {
		return run.m.Key
	}
	return nil
}

// prepareSink takes the sink's lock and staging object, then checks that
// no other run committed since this one read its marks: two runs that
// polled the same batch must not both commit it.
func (run *modelRun) prepareSink(ctx context.Context, schema *arrow.Schema) (routes.Stage, error) {
	key := run.sinkKey()
	if run.truncate && run.m.Mode == "upsert" {
		key = run.m.Key // the emptied table keeps the key later upserts merge on
	}
	info := sinkInfo(run.t.Name, run.ref, schema, key)
	stage, err := run.sink.Prepare(ctx, info, routes.WriteOptions{Table: run.ref, Mode: run.commitMode(), RunID: run.rep.RunID,
		Key: run.sinkKey(), Allocator: run.r.opts.Allocator, Truncate: run.truncate})
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", run.m.Sink, err)
	}
	marks, found, err := incremental.LoadMarks(ctx, run.sink, run.ref, run.t.Name)
	if err == nil && (found != run.found || marks.Encode() != run.marks.Encode()) {
		err = fmt.Errorf("%w: another run committed to %s while this one ran; retry to read on from its offsets", routes.ErrLocked, run.m.Sink)
	}
	if err != nil {
		routes.Abort(ctx, stage)
		return nil, err
	}
	return stage, nil
}

// finishSink streams the result into the stage and commits it with the
// sources' new marks, or aborts. An all-empty replace keeps the sink.
func (run *modelRun) finishSink(ctx context.Context, stage routes.Stage, res array.RecordReader) error {
	n, kept, err := routes.WriteOnce(ctx, stage, res, routes.Once{
		Keep:   func(int64) bool { return run.mode == routes.ModeReplace && run.rowsIn() == 0 && !run.truncate },
		Phase:  "before-commit",
		Commit: func(ctx context.Context, n int64) error { return run.commit(ctx, stage, n) },
	})
	run.rep.RowsIn, run.rep.RowsOut = run.rowsIn(), n
	if kept {
		run.warnKept()
		return err
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", run.m.Sink, err)
	}
	return nil
}

func (run *modelRun) warnKept() {
	run.rep.NothingNew = true
	run.r.warnf("task %s: every source is empty; %s is left as it was (an empty source never wipes a table)", run.t.Name, run.m.Sink)
}

// commit commits the stage with every source's new mark.
func (run *modelRun) commit(ctx context.Context, stage routes.Stage, rows int64) error {
	batches := map[*incremental.Consumer]*incremental.Batch{}
	for _, in := range run.inputs {
		if in.c != nil {
			batches[in.c] = in.b
		}
	}
	st := routes.State{RunID: run.rep.RunID, Rows: rows}
	if len(batches) == 0 { // replace over tables without a cursor: no offsets
		return stage.Commit(ctx, incremental.TaskState(run.t.Name, "", incremental.Marks{}, st.RunID, rows))
	}
	return incremental.CommitAll(ctx, stage, st, batches)
}

// newMarks are the marks this run commits.
func (run *modelRun) newMarks() (incremental.Marks, string) {
	marks, cursor := incremental.Marks{}, ""
	for _, in := range run.inputs {
		if in.c != nil {
			marks[in.name] = in.b.Mark()
			cursor = in.c.Cursor()
		}
	}
	return marks, cursor
}

// quarantine writes the rows that break the contract to <sink>__quarantine
// and commits them, with this run's marks, before the sink's commit. A
// batch already quarantined by a run that died before its sink commit is
// not quarantined again. A replace model replaces the quarantine table.
func (run *modelRun) quarantine(ctx context.Context, chk *checked) error {
	run.rep.Quarantined = chk.bad
	if run.pending() || chk.bad == 0 && !(run.mode == routes.ModeReplace && run.qfound) {
		return nil
	}
	res, err := run.db.Query(ctx, chk.badSQL)
	if err != nil {
		return err
	}
	defer res.Release()
	mode := routes.ModeAppend
	if run.mode == routes.ModeReplace {
		mode = routes.ModeReplace
	}
	// Fresh: a quarantine table without this task's state row is not weir's
	// (a user's table of that name: a replace model replaced it, exit 0)
	stage, err := run.sink.Prepare(ctx, sinkInfo(run.t.Name, run.qref, res.Schema(), nil),
		routes.WriteOptions{Table: run.qref, Mode: mode, RunID: run.rep.RunID, Allocator: run.r.opts.Allocator, Truncate: run.truncate, Fresh: !run.qfound})
	if err != nil {
		return fmt.Errorf("prepare quarantine %s: %w", run.qref, err)
	}
	return run.commitQuarantine(ctx, stage, res)
}

func (run *modelRun) commitQuarantine(ctx context.Context, stage routes.Stage, res array.RecordReader) error {
	_, _, err := routes.WriteOnce(ctx, stage, res, routes.Once{Phase: "before-quarantine-commit",
		Commit: func(ctx context.Context, n int64) error {
			marks, cursor := run.newMarks()
			return stage.Commit(ctx, incremental.TaskState(run.t.Name, cursor, marks, run.rep.RunID, n))
		}})
	if err != nil {
		return fmt.Errorf("quarantine %s: %w", run.qref, err)
	}
	return nil
}
