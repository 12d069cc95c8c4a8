package pgwal

import (
	"context"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/cdc"
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
	if r.cfg.Changelog {
		w = cdc.NewLogWindow()
	}
	if err := s.drain(ctx, w); err != nil {
		return res, fmt.Errorf("drain slot %s from %s: %w", r.name, pos, err)
	}
	end := s.received
	if err := cdc.Apply(ctx, r.dest, r.applier, w, r.states(end.String(), int64(w.Changes))); err != nil {
		return res, err
	}
	res.To = end.String()
	res.Count(w)
	return res, s.confirm(ctx, end)
}
