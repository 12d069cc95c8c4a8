package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/cdc/capture"
	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// TaskStatus is where a task stands: its committed position in each
// source, the source's head and the lag between them.
type TaskStatus struct {
	Task      string         `json:"task"`
	Kind      string         `json:"kind"`
	Mode      string         `json:"mode"`
	Sink      string         `json:"sink"`
	Committed bool           `json:"committed"` // the sink holds the task's offsets (false before its first commit)
	Sources   []SourceStatus `json:"sources"`
	// Lag is the sum of the sources' lag when they are all in one unit
	// (LagUnit), or all 0; -1 (LagUnit "mixed") when units differ: Lags
	// then has the total of each unit, never a sum across units.
	Lag     int64            `json:"lag"`
	LagUnit string           `json:"lag_unit,omitempty"`
	Lags    map[string]int64 `json:"lags,omitempty"` // per unit: rows, bytes, events summed; key distance, seconds, snapshots the largest
	// Log is a log_based task's place in its source's change log: the
	// bytes of WAL/binlog behind, the slot's retained WAL, a lost slot or
	// purged binlog (then Error says how to re-bootstrap).
	Log *cdc.LogLag `json:"log,omitempty"`
	// Backfill is the task's backfill plan under way and its buckets
	// (weir status --claims; docs/workers.md).
	Backfill *BackfillStatus `json:"backfill,omitempty"`
	Error    string          `json:"error,omitempty"`
	// Err is the error behind Error, for the exit code (bad input: 2).
	Err error `json:"-"`
}

// SourceStatus is one source of a task.
type SourceStatus struct {
	Name    string          `json:"name"` // the view name (models) or the source table (transfers)
	Table   string          `json:"table"`
	Cursor  string          `json:"cursor,omitempty"`
	Lag     incremental.Lag `json:"lag"`
	Missing bool            `json:"missing,omitempty"` // the table does not exist yet
	Lookup  bool            `json:"lookup,omitempty"`  // read whole every run: no position, no lag
}

// Status reports every task's position, head and lag. A task that cannot
// be inspected carries its error; the others are still reported.
func (r *Runner) Status(ctx context.Context, tasks []*dagfile.Task) []TaskStatus {
	out := make([]TaskStatus, 0, len(tasks))
	for _, t := range tasks {
		st := TaskStatus{Task: t.Name, Kind: string(t.Kind), Mode: newReport(t).Mode, Sink: t.Sink().String()}
		var err error
		switch t.Kind {
		case dagfile.KindModel:
			err = r.modelStatus(ctx, t, &st)
		case dagfile.KindTransfer:
			err = r.transferStatus(ctx, t, &st)
		case dagfile.KindStream:
			err = r.streamStatus(ctx, t, &st)
		default:
			err = fmt.Errorf("%w: status of %s tasks", routes.ErrUnsupported, t.Kind)
		}
		if err != nil {
			st.Error, st.Err = routes.Redact(err.Error()), err
		}
		st.totalLag()
		out = append(out, st)
	}
	return out
}

func (r *Runner) modelStatus(ctx context.Context, t *dagfile.Task, st *TaskStatus) error {
	run, err := r.newModelRun(ctx, t, newReport(t))
	if err != nil {
		return err
	}
	defer run.close()
	st.Committed = run.found
	if err := run.openInputs(ctx); err != nil {
		return err
	}
	for _, in := range run.inputs {
		ss := SourceStatus{Name: in.name, Table: in.addr.String(), Lookup: in.lookup}
		if in.c != nil {
			ss.Cursor = in.c.Cursor()
			if ss.Lag, err = in.c.Lag(ctx); err != nil {
				return err
			}
		}
		st.Sources = append(st.Sources, ss)
	}
	for _, addr := range run.missing {
		st.Sources = append(st.Sources, SourceStatus{Name: addr, Table: addr, Missing: true})
	}
	return nil
}

func (r *Runner) transferStatus(ctx context.Context, t *dagfile.Task, st *TaskStatus) error {
	x := t.Transfer
	src, err := r.source(ctx, x.From)
	if err != nil {
		return err
	}
	dst, err := r.destination(ctx, x.To)
	if err != nil {
		return err
	}
	var errs []error
	if x.Mode == string(routes.ModeLogBased) {
		lag, err := r.logLag(ctx, t)
		if err != nil {
			return err
		}
		st.Log = &lag
		if lag.Lost {
			errs = append(errs, fmt.Errorf("%s: re-bootstrap: weir reset --task %s, then run it again", lag.Problem, t.Name))
		}
	}
	for i, from := range t.Sources() {
		ss, err := transferSource(ctx, src, dst, x, from, t.Sinks()[i])
		if st.Log != nil {
			ss.Lag.Head, ss.Lag.Unit = st.Log.Head, "bytes"
			ss.Lag.Behind, ss.Lag.Known = st.Log.Behind, st.Log.Known && ss.Lag.Position != ""
		}
		errs = append(errs, err)
		st.Committed = st.Committed || ss.Lag.Position != ""
		st.Sources = append(st.Sources, ss)
	}
	return errors.Join(errs...)
}

// logLag reads where a log_based task stands in its source's log
// (capture.Status).
func (r *Runner) logLag(ctx context.Context, t *dagfile.Task) (cdc.LogLag, error) {
	src, dst, pairs, err := r.logBasedPairs(t)
	if err != nil {
		return cdc.LogLag{}, err
	}
	return capture.Status(ctx, src, dst, pairs, capture.Options{Changelog: t.Transfer.Changelog, SlotWALWarn: r.opts.SlotWALWarn})
}

// transferSource is one table of a transfer: for append and merge its
// watermark and the source cursor's maximum; replace keeps no offsets.
func transferSource(ctx context.Context, src routes.Source, dst routes.Destination, x *dagfile.Transfer, from, to dagfile.TableAddr) (SourceStatus, error) {
	ss := SourceStatus{Name: from.Name(), Table: from.String()}
	if x.Mode == string(routes.ModeLogBased) {
		return logBasedStatus(ctx, src, dst, from, to, ss)
	}
	if x.Mode != "append" && x.Mode != "merge" {
		return ss, nil
	}
	info, err := src.Probe(ctx, tableRef(from))
	if err != nil {
		return ss, err
	}
	w, err := incremental.Watermark(src, dst, x.Cursor)(ctx, info, tableRef(to))
	if errors.Is(err, incremental.ErrBackfill) {
		err = nil // the lag from the table's offset; weir status --claims shows the buckets
	}
	ss.Cursor = w.Cursor
	if err == nil {
		ss.Lag, err = incremental.CountLag(ctx, src, info, w.Cursor, w.After, w.Until)
	}
	if w.Empty {
		ss.Lag.Head = w.After
	}
	return ss, err
}

// totalLag sums the sources' lags per unit (Lags) and, when they share one
// unit or are all 0, in Lag. A log_based task's tables share one log: its
// lag is the log's, once.
func (st *TaskStatus) totalLag() {
	if st.Log != nil {
		st.Lag, st.LagUnit, st.Lags = st.Log.Behind, "bytes", map[string]int64{"bytes": st.Log.Behind}
		return
	}
	var lags []incremental.Lag
	for _, s := range st.Sources {
		if !s.Missing && !s.Lookup {
			lags = append(lags, s.Lag)
		}
	}
	st.Lag, st.LagUnit, st.Lags = sumLags(lags)
}

// sumLags totals lags per unit — counts (rows, bytes, events) summed,
// distances (key distance, seconds, snapshots) the largest, as one table's
// key distance does not add to another's — and overall only when there is
// one unit (or every lag is 0): -1, "mixed" when units differ, never a sum
// across units.
func sumLags(lags []incremental.Lag) (total int64, unit string, per map[string]int64) {
	var behind int64
	for _, l := range lags {
		if l.Unit == "" {
			continue
		}
		if per == nil {
			per = map[string]int64{}
		}
		if n, seen := per[l.Unit]; seen && !incremental.Additive(l.Unit) {
			per[l.Unit] = max(n, l.Behind)
		} else {
			per[l.Unit] = n + l.Behind
		}
		behind += max(l.Behind, 0)
	}
	switch {
	case len(per) == 1:
		for u, n := range per {
			total, unit = n, u
		}
	case len(per) > 1 && behind > 0:
		total, unit = -1, "mixed"
	}
	return total, unit, per
}
