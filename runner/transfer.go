package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// runTransfer copies a transfer task's tables one after another, each
// atomically (routes.Copy); append and merge read past the watermark saved
// in the destination (incremental.Watermark). One table's failure does not
// stop the others; the error joins them all.
func (r *Runner) runTransfer(ctx context.Context, t *dagfile.Task, rep *Report) error {
	x := t.Transfer
	mode, err := routes.ParseMode(x.Mode)
	if err != nil {
		return err
	}
	if mode == routes.ModeLogBased {
		return fmt.Errorf("%w: task %s: mode log_based is run by the CDC runner, not yet by weir once", routes.ErrUnsupported, t.Name)
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
		RunID: runID, Key: x.PrimaryKey, Allocator: r.opts.Allocator}
}

// copyTable runs one table's copy and adds it to the report; an
// incremental window is recorded as the table's offsets.
func (r *Runner) copyTable(ctx context.Context, src routes.Source, dst routes.Destination, spec routes.CopySpec, cursor string, rep *Report) error {
	var win routes.Window
	if spec.Mode == routes.ModeAppend || spec.Mode == routes.ModeMerge {
		wf := incremental.Watermark(src, dst, cursor)
		spec.Window = func(ctx context.Context, info *routes.TableInfo, dest routes.TableRef) (routes.Window, error) {
			w, err := wf(ctx, info, dest)
			win = w
			return w, err
		}
	}
	res, err := routes.Copy(ctx, src, dst, spec)
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
