package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/stream"
)

// Status and reset of stream tasks: the cursor is the one the runner
// reads, the task's state in its sink (docs/streams.md).

// streamStatus reports the task's committed cursor and, where the source
// can tell (Kafka: high-water marks minus the cursor's offsets; SQS: the
// queue's approximate backlog), its lag;
// otherwise the lag is unknown.
func (r *Runner) streamStatus(ctx context.Context, t *dagfile.Task, st *TaskStatus) error {
	run, err := r.newStreamSink(ctx, t, newReport(t))
	if err != nil {
		return err
	}
	st.Committed, st.Mode = run.found, t.Stream.Materialization
	ss := SourceStatus{Name: streamMark, Table: routes.Redact(t.Stream.Source), Cursor: run.cursor,
		Lag: incremental.Lag{Position: run.cursor, Unit: "events"}}
	if !t.Stream.IsTableSource() {
		ends, err := stream.SourceEnds(ctx, r.streamURL(t), r.streamOptions(t), run.cursor)
		if err != nil {
			st.Sources = append(st.Sources, ss)
			return err
		}
		ss.Lag.Head, ss.Lag.Behind, ss.Lag.Known = ends.Latest, ends.Behind, ends.Known
	}
	st.Sources = append(st.Sources, ss)
	return nil
}

// resetStream writes the task's cursor into its sink's state, as a
// commit of no events does: earliest (the source's start), latest (its
// head, for a source that can tell: Kafka) or a cursor of the source's
// form. The next run seeks there; the sink's rows stay.
func (r *Runner) resetStream(ctx context.Context, t *dagfile.Task, to string) (*Report, error) {
	rep := newReport(t)
	err := r.resetStreamTo(ctx, t, strings.TrimSpace(to), rep)
	rep.finish(err)
	if err != nil {
		return rep, fmt.Errorf("reset %s: %w", t.Name, err)
	}
	return rep, nil
}

func (r *Runner) resetStreamTo(ctx context.Context, t *dagfile.Task, to string, rep *Report) error {
	if to == "" {
		return routes.BadInput("reset of stream task %s needs --to: earliest, latest or a cursor", t.Name)
	}
	target, err := r.streamTarget(ctx, t, to)
	if err != nil {
		return err
	}
	run, err := r.newStreamSink(ctx, t, rep)
	if err != nil {
		return err
	}
	eng := r.startEngine(ctx)
	defer r.releaseEngine(eng)
	if run.db, err = eng.get(); err != nil {
		return err
	}
	defer run.dropTemp(context.WithoutCancel(ctx))
	run.checked, run.bad = 0, 0 // the max_bad_ratio window starts again at the new cursor
	run.replay = nil            // a reset replays on purpose: bad events are quarantined again
	if err := run.loadEmpty(ctx); err != nil {
		return err
	}
	if _, err := run.check(ctx); err != nil {
		return err
	}
	if err := run.write(ctx, target, nil); err != nil {
		return err
	}
	rep.Offsets[streamMark] = OffsetRange{Table: routes.Redact(t.Stream.Source), From: run.cursor, To: target}
	return nil
}

// streamTarget is the cursor --to names.
func (r *Runner) streamTarget(ctx context.Context, t *dagfile.Task, to string) (string, error) {
	if t.Stream.IsTableSource() {
		switch to {
		case "earliest":
			return "", nil
		case "latest":
			return "", routes.BadInput("task %s: a table source has no latest to move to; give --to the key to read on after (see weir status)", t.Name)
		}
		return to, nil // a key that does not fit is refused at the next run's Seek
	}
	raw := r.streamURL(t)
	if to != "earliest" && to != "latest" {
		return to, stream.CheckCursor(raw, to)
	}
	if err := stream.CheckCursor(raw, ""); err != nil {
		return "", err
	}
	ends, err := stream.SourceEnds(ctx, raw, r.streamOptions(t), "")
	switch {
	case err != nil:
		return "", err
	case ends.Known && to == "earliest":
		return ends.Earliest, nil
	case ends.Known:
		return ends.Latest, nil
	case to == "earliest":
		return "", nil // the source's start: no resume point
	}
	return "", routes.BadInput("task %s: its source (%s) cannot tell its latest position; give --to the cursor to read on after", t.Name, t.Stream.SourceScheme())
}

// loadEmpty loads an empty batch into outTable: the contract's columns,
// else the sink's (which must exist: without a contract the columns come
// from the events).
func (run *streamRun) loadEmpty(ctx context.Context) error {
	if run.t.Contract != nil {
		rec := run.flat.record(run.r.opts.Allocator, nil, run.s.Key)
		rd, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		rec.Release()
		if err != nil {
			return err
		}
		_, err = run.db.Load(ctx, outTable, rd)
		return err
	}
	src, ok := routes.As[routes.Prober](run.sink)
	var info *routes.TableInfo
	err := errors.New("the sink cannot be read")
	if ok {
		info, err = src.Probe(ctx, run.ref)
	}
	if err != nil {
		return routes.BadInput("task %s has no contract and its sink %s cannot be probed (%v): run it once first, so the sink holds the events' columns", run.t.Name, run.s.Sink, err)
	}
	for _, f := range info.Schema().Fields() {
		run.cols = append(run.cols, f.Name)
	}
	rd, err := array.NewRecordReader(info.Schema(), nil)
	if err != nil {
		return err
	}
	if _, err := run.db.Load(ctx, chunkTable, rd); err != nil {
		return err
	}
	return run.bookkeep(ctx)
}
