package pgwal

import (
	"context"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// incremental drains the slot from pos to the end of the WAL as of now,
// applies the folded window with the new position in one destination
// transaction, and only then confirms the position to the slot.
func (r *run) incremental(ctx context.Context, pos string) (Result, error) {
	res := Result{From: pos, To: pos}
	start, err := pglogrepl.ParseLSN(pos)
	if err != nil {
		return res, fmt.Errorf("saved position %q: %w", pos, err)
	}
	s, err := r.openStream(ctx, start)
	if err != nil {
		return res, err
	}
	defer s.close(ctx)
	w := cdc.NewWindow()
	if err := s.drain(ctx, w); err != nil {
		return res, fmt.Errorf("drain slot %s from %s: %w", r.name, pos, err)
	}
	end := s.received
	a := &applier{conn: r.dst, fail: r.fail}
	if err := a.ApplyWindow(ctx, w, r.states(end.String(), w)); err != nil {
		return res, err
	}
	res.To = end.String()
	count(&res, w)
	return res, s.confirm(ctx, end)
}

// states is the state row of every pair at position pos.
func (r *run) states(pos string, w *cdc.Window) map[routes.TableRef]routes.State {
	out := map[routes.TableRef]routes.State{}
	for i, t := range r.tables {
		out[t.Dest] = routes.State{SourceID: r.cfg.sourceID(r.cfg.Tables[i]), Position: pos, RunID: r.runID, Rows: int64(w.Changes)}
	}
	return out
}

func count(res *Result, w *cdc.Window) {
	res.Changes = w.Changes
	for _, tw := range w.Tables {
		res.Upserts += len(tw.Upserts)
		res.Deletes += len(tw.Deletes)
		if tw.Truncated {
			res.Truncates++
		}
	}
}
