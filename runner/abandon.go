package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// noPlan is Work's answer when the table's state holds no plan (main,
// nil when the table has none): caught up when a plan was finished here,
// or when there is no backlog; a task never planned whose table has rows
// to copy is bad input naming weir backfill (a worker has nothing to
// claim, and "caught up" would be a lie).
func (s *splitTask) noPlan(ctx context.Context, res BackfillResult, main *routes.State) (BackfillResult, error) {
	res.CaughtUp, res.NoPlan = true, res.Plan.ID == ""
	if main != nil {
		res.Offset = main.Watermark
		return res, nil
	}
	win, err := incremental.Watermark(s.src, s.dst, s.cursor)(ctx, s.info, s.spec.DestTable)
	if err != nil || win.Empty {
		res.Offset = win.After
		return res, err
	}
	return BackfillResult{Task: res.Task}, routes.BadInput("task %s has no backfill plan and %s has rows past %s to copy: run weir backfill --task %s --shards N first (or weir once --task %s)",
		s.t.Name, s.info.Ref, incremental.OrStart(win.After), s.t.Name, s.t.Name)
}

// Abandon removes task's backfill plan under way: the table's state goes
// back to the offset the plan started after, in one fenced commit under
// the destination's exclusive lock, and the plan's buckets are forgotten
// in the claim store. It is refused (bad input) once a bucket committed
// rows: they are in the table, and the next run from that offset would
// copy them again; the workers must finish that plan. A bucket's commit
// checks, under its shared lock, that its plan is still the table's
// (splitTask.holds), so no worker commits after the abandon. Abandoned is
// false when no plan is under way.
func (r *Runner) Abandon(ctx context.Context, name string, store claims.Store) (BackfillResult, error) {
	res := BackfillResult{Task: name}
	s, err := r.split(ctx, name)
	if err != nil {
		return res, err
	}
	p, prev, ok, err := s.plan(ctx)
	if err != nil || !ok {
		if prev != nil {
			res.Offset = prev.Watermark
		}
		return res, err
	}
	res.Plan = p
	state := routes.State{SourceID: s.info.SourceID, Cursor: s.cursor, Watermark: p.After, RunID: routes.NewRunID()}
	if err := s.commitState(ctx, state, prev, finishCommit, s.nothingCommitted(p)); err != nil {
		if errors.Is(err, routes.ErrFenced) {
			err = fmt.Errorf("%w: task %s: the plan's state changed while it was abandoned (a worker finished it?); look again", routes.ErrLocked, name)
		}
		return res, fmt.Errorf("abandon plan %s of task %s: %w", p.ID, name, err)
	}
	res.Abandoned, res.Offset = true, p.After
	if err := store.Forget(ctx, claimsTask(name, p)); err != nil {
		r.warnf("task %s: plan %s abandoned in the sink; its buckets stay in the claim store (unused): %v", name, p.ID, err)
	}
	return res, nil
}

// nothingCommitted checks, with the table's exclusive lock held (no
// bucket commits meanwhile), that no bucket of p committed progress past
// its start.
func (s *splitTask) nothingCommitted(p incremental.Plan) func(context.Context) error {
	return func(ctx context.Context) error {
		for i := range p.Buckets {
			st, err := s.state(ctx, incremental.BucketKey(s.info.SourceID, i))
			if err != nil {
				return err
			}
			if st == nil {
				continue
			}
			after, _ := p.Bucket(i)
			if _, ok := p.BucketToken(st.Position); ok && st.Watermark != after {
				return routes.BadInput("task %s: bucket %d of plan %s committed rows up to %s: they are in %s, and a run from the plan's offset (%s) would copy them again. "+
					"Let the workers finish the plan (weir worker --task %s)", s.t.Name, i, p.ID, st.Watermark, s.spec.DestTable, incremental.OrStart(p.After), s.t.Name)
			}
		}
		return nil
	}
}
