package pgwal

import (
	"context"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// incremental drains the slot from pos to the end of the WAL as of now,
// applies the folded window (in chunks) with the new position in one
// destination transaction, and only then confirms the position to the slot.
func (r *run) incremental(ctx context.Context, pos string) (Result, error) {
	res := Result{From: pos, To: pos}
	start, err := pglogrepl.ParseLSN(pos)
	if err != nil {
		return res, fmt.Errorf("saved position %q: %w", pos, err)
	}
	// The destination transaction first: a changelog's checks (a replica
	// table is not a log) answer before the slot does. The window streams
	// into it every cdc.FlushChanges changes: memory is flat in its size.
	tables := make([]*cdc.Table, len(r.tables))
	for i, t := range r.tables {
		tables[i] = &t.Table
	}
	w, tx, err := cdc.Open(ctx, r.dest, r.cfg.DestURL, tables, r.cfg.Changelog)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	s, err := r.openStream(ctx, start)
	if err != nil {
		return res, err
	}
	defer s.close(ctx)
	if err := s.drain(ctx, w); err != nil {
		return res, fmt.Errorf("drain slot %s from %s: %w", r.name, pos, err)
	}
	end := s.received
	if err := cdc.Finish(ctx, tx, w, r.states(end.String(), int64(w.Changes))); err != nil {
		return res, err
	}
	if err := routes.Checkpoint("after-commit"); err != nil { // kill tests: committed, the slot not confirmed yet
		return res, err
	}
	res.To = end.String()
	res.Count(w)
	return res, s.confirm(ctx, end)
}
