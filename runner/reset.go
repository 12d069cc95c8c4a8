package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/cdc/capture"
	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Reset moves a model task's position in its sources to earliest, latest
// (each source's head) or an offset (single-source models), and writes it
// into the sink's state the way a commit does: an empty append committed
// with the new marks, in the sink's own transaction (a sink that does not
// exist yet is created empty). The next run reads on from there; the rows
// already in the sink stay (an upsert replay rewrites them unchanged, an
// append replay adds them again).
func (r *Runner) Reset(ctx context.Context, name, to string) (*Report, error) {
	return r.ResetWith(ctx, name, to, ResetOptions{})
}

// ResetOptions change what Reset does beside moving the position.
type ResetOptions struct {
	// FullRefresh (with --to earliest, model tasks only) also empties the
	// sink, in the same commit as the new position (PostgreSQL: one
	// transaction; Iceberg: one overwrite snapshot that sets the offset),
	// so the next run rebuilds it instead of adding the history again.
	FullRefresh bool
}

// ResetWith is Reset with options.
func (r *Runner) ResetWith(ctx context.Context, name, to string, o ResetOptions) (*Report, error) {
	t, err := r.task(name)
	if err != nil {
		return nil, err
	}
	if o.FullRefresh && (t.Kind != dagfile.KindModel || strings.TrimSpace(to) != "earliest") {
		return nil, routes.BadInput("reset --full-refresh empties a model's sink and replays its sources from the start: it takes a model task and --to earliest (task %s is a %s, --to %q)", name, t.Kind, to)
	}
	if t.Kind == dagfile.KindTransfer && t.Transfer.Mode == string(routes.ModeLogBased) {
		return r.resetLogBased(ctx, t, to)
	}
	if t.Kind == dagfile.KindStream {
		return r.resetStream(ctx, t, to)
	}
	if t.Kind != dagfile.KindModel {
		return nil, routes.BadInput("reset moves a model's offsets, a stream's cursor or a log_based transfer's positions; task %s is a %s, whose watermark follows its destination (use mode: replace to reload it; a backfill plan under way is removed with weir backfill --task %s --abandon)", name, t.Kind, name)
	}
	if strings.TrimSpace(to) == "" {
		return nil, routes.BadInput("reset of model task %s needs --to: earliest, latest or an offset", name)
	}
	target, err := incremental.ParseStart(to)
	if err != nil {
		return nil, err
	}
	if !target.Latest && target.Offset == "" && !o.FullRefresh && t.Model.Mode == "append" {
		r.warnf("task %s: reset --to earliest on an append sink: the next run appends every source row again on top of the rows %s already holds (duplicates); add --full-refresh to empty it in the same commit", name, t.Model.Sink)
	}
	rep := newReport(t)
	err = r.reset(ctx, t, target, rep, o)
	rep.finish(err)
	if err != nil {
		return rep, fmt.Errorf("reset %s: %w", name, err)
	}
	if o.FullRefresh {
		r.warnReaders(t)
	}
	return rep, nil
}

// warnReaders warns about the incremental models that read a sink a
// full refresh emptied: their offsets stay past the old rows, and the
// rebuilt rows arrive again as new ones (an Iceberg source: after an
// overwrite snapshot that on_change reports), so an append or an
// aggregate downstream would count them twice.
func (r *Runner) warnReaders(t *dagfile.Task) {
	sink := strings.ToLower(t.Model.Sink.String())
	for _, d := range r.file.Tasks {
		if d.Kind != dagfile.KindModel || d.Model.Mode == "replace" {
			continue
		}
		for _, s := range d.Sources() {
			if strings.ToLower(s.String()) == sink {
				r.warnf("task %s: model %s reads %s incrementally and keeps its offsets: the rebuilt rows reach it again as new rows (an append or an aggregate there counts them twice); reset it too: weir reset --task %s --to earliest --full-refresh", t.Name, d.Name, t.Model.Sink, d.Name)
				break
			}
		}
	}
}

// resetLogBased forgets a log_based task's saved positions and drops its
// PostgreSQL slot and publication (capture.Drop), so the next run
// bootstraps again; the destination tables stay. It takes no --to other
// than earliest: the change log before now cannot be replayed.
func (r *Runner) resetLogBased(ctx context.Context, t *dagfile.Task, to string) (*Report, error) {
	if to = strings.TrimSpace(to); to != "" && to != "earliest" {
		return nil, routes.BadInput("task %s is log_based: reset re-bootstraps it (omit --to, or --to earliest); %q is not a position it can move to", t.Name, to)
	}
	rep := newReport(t)
	src, dst, pairs, err := r.logBasedPairs(t)
	if err == nil {
		err = capture.DropWith(ctx, src, dst, pairs, capture.Options{Changelog: t.Transfer.Changelog})
	}
	rep.finish(err)
	if err != nil {
		return rep, fmt.Errorf("reset %s: %w", t.Name, err)
	}
	return rep, nil
}

func (r *Runner) reset(ctx context.Context, t *dagfile.Task, target incremental.Start, rep *Report, o ResetOptions) error {
	run, err := r.newModelRun(ctx, t, rep)
	if err != nil {
		return err
	}
	defer run.close()
	run.mode = routes.ModeAppend // commit no rows, only the marks
	if o.FullRefresh {
		run.mode, run.truncate = routes.ModeReplace, true // no rows, in place of every row
	}
	run.resetting = true
	if err := run.openInputs(ctx); err != nil {
		return err
	}
	if len(run.missing) > 0 {
		return routes.BadInput("task %s: %s does not exist yet; run its upstream first", t.Name, strings.Join(run.missing, ", "))
	}
	if target.Offset != "" && len(run.inputs) > 1 {
		return routes.BadInput("task %s reads %d sources: reset --to an offset needs one; use earliest or latest", t.Name, len(run.inputs))
	}
	for _, in := range run.inputs {
		from := ""
		if in.c != nil {
			from = in.c.Position()
		}
		if err := run.seekInput(ctx, in, target); err != nil {
			return fmt.Errorf("seek %s: %w", in.addr, err)
		}
		rep.Offsets[in.name] = OffsetRange{Table: in.addr.String(), From: from, To: in.b.To}
	}
	if err := run.execute(ctx); err != nil {
		return err
	}
	return run.lag(ctx)
}

// seekInput places an input at the target and gives it an empty batch there.
func (run *modelRun) seekInput(ctx context.Context, in *input, target incremental.Start) error {
	if in.c == nil {
		s, err := array.NewRecordReader(in.info.Schema(), nil)
		in.b = &incremental.Batch{Source: in.name, Empty: true, Base: -1, Stream: s}
		return err
	}
	offset := target.Offset
	if target.Latest {
		head, _, err := in.c.Head(ctx)
		if err != nil {
			return err
		}
		offset = head
	}
	in.c.Seek(offset)
	var err error
	in.b, err = in.c.At(ctx)
	return err
}
