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

// runTransfer copies a transfer task's tables one after another, each
// atomically (incremental.Copy: append and merge read past the watermark
// saved in the destination). One table's failure does not
// stop the others; the error joins them all.
func (r *Runner) runTransfer(ctx context.Context, t *dagfile.Task, rep *Report) error {
	x := t.Transfer
	mode, err := routes.ParseMode(x.Mode)
	if err != nil {
		return err
	}
	if mode == routes.ModeLogBased {
		return r.runLogBased(ctx, t, rep)
	}
	src, err := r.source(ctx, x.From)
	if err != nil {
		return err
	}
	dst, err := r.destination(ctx, x.To)
	if err != nil {
		return err
	}
	var errs []error
	for i, from := range t.Sources() {
		spec := r.copySpec(t, mode, from, t.Sinks()[i], rep.RunID)
		if err := r.copyTable(ctx, src, dst, spec, x.Cursor, rep); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", from.Name(), err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

func (r *Runner) copySpec(t *dagfile.Task, mode routes.Mode, from, to dagfile.TableAddr, runID string) routes.CopySpec {
	x := t.Transfer
	budget := routes.Budget{Parallel: x.Parallel, ChunkBytes: int(x.ChunkBytes)}
	if budget.Parallel == 0 {
		budget.Parallel = r.opts.Budget.Parallel
	}
	if budget.ChunkBytes == 0 {
		budget.ChunkBytes = r.opts.Budget.ChunkBytes
	}
	return routes.CopySpec{Table: tableRef(from), DestTable: tableRef(to), Mode: mode, Budget: budget,
		RunID: runID, Key: x.PrimaryKey, Allocator: r.opts.Allocator, Progress: r.opts.Progress}
}

// copyTable runs one table's copy and adds it to the report; an
// incremental window is recorded as the table's offsets.
func (r *Runner) copyTable(ctx context.Context, src routes.Source, dst routes.Destination, spec routes.CopySpec, cursor string, rep *Report) error {
	res, win, err := incremental.Copy(ctx, src, dst, spec, cursor)
	rep.RowsIn += res.Rows
	rep.RowsOut += res.Rows
	rep.Bytes += res.Bytes
	rep.NothingNew = res.NothingNew && (len(rep.Offsets) == 0 || rep.NothingNew)
	to := win.Until
	if win.Empty || err != nil {
		to = win.After
	}
	rep.Offsets[spec.Table.String()] = OffsetRange{Table: spec.Table.String(), From: win.After, To: to}
	return err
}

// runLogBased runs one batch CDC pass of a log_based task (cdc/capture):
// the first run bootstraps, later ones apply the changes logged since. The
// report's offsets are the positions (from is empty after a bootstrap).
func (r *Runner) runLogBased(ctx context.Context, t *dagfile.Task, rep *Report) error {
	src, dst, pairs, err := r.logBasedPairs(t)
	if err != nil {
		return err
	}
	res, err := capture.RunWith(ctx, src, dst, pairs, rep.RunID, capture.Options{Changelog: t.Transfer.Changelog, SlotWALWarn: r.opts.SlotWALWarn})
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		r.warnf("task %s: %s", t.Name, w)
	}
	rep.CDC = &res
	rep.RowsIn = res.Rows + int64(res.Changes)
	rep.RowsOut = res.Rows + int64(res.Upserts+res.Deletes+res.Appended)
	rep.NothingNew = !res.Bootstrap && res.Changes == 0
	for _, p := range pairs {
		rep.Offsets[p.Source.String()] = OffsetRange{Table: p.Source.String(), From: res.From, To: res.To}
	}
	return nil
}

// logBasedPairs resolves a log_based task's source and destination URLs
// and its (source, destination) table pairs.
func (r *Runner) logBasedPairs(t *dagfile.Task) (src, dst string, pairs []cdc.Pair, err error) {
	x := t.Transfer
	urls := make([]string, 2)
	for i, conn := range []string{x.From, x.To} {
		c := r.file.Connections[conn]
		if c == nil {
			return "", "", nil, routes.BadInput("unknown connection %q", conn)
		}
		urls[i] = ResolveURL(c.URL(), r.file.Dir)
	}
	du, err := routes.ParseURL(urls[1])
	if err != nil {
		return "", "", nil, err
	}
	for i, from := range t.Sources() {
		dest, err := routes.DestRef(du, tableRef(from), tableRef(t.Sinks()[i]), "")
		if err != nil {
			return "", "", nil, err
		}
		if dest.Schema == "" { // an unqualified dest_table on PostgreSQL: the capture keys by schema.table
			dest.Schema = from.Schema
		}
		pairs = append(pairs, cdc.Pair{Source: tableRef(from), Dest: dest})
	}
	return urls[0], urls[1], pairs, nil
}

// logBasedStatus reports the CDC position a log_based table committed (a
// WAL LSN or a binlog coordinate), read from the destination's state.
func logBasedStatus(ctx context.Context, src routes.Source, dst routes.Destination, from, to dagfile.TableAddr, ss SourceStatus) (SourceStatus, error) {
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		return ss, nil
	}
	info, err := src.Probe(ctx, tableRef(from))
	if err != nil {
		return ss, err
	}
	st, ok, err := sr.LoadState(ctx, tableRef(to), info.SourceID)
	if ok {
		ss.Lag.Position = st.Position
	}
	return ss, err
}
