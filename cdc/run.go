package cdc

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// Result reports one CDC run (pgwal or binlog); weir prints it with --json.
type Result struct {
	Bootstrap bool   `json:"bootstrap"`         // this run was the first load
	Rows      int64  `json:"rows,omitempty"`    // rows the bootstrap loaded
	Changes   int    `json:"changes,omitempty"` // changes drained from the log
	Upserts   int    `json:"upserts,omitempty"` // rows upserted after the fold (per chunk)
	Deletes   int    `json:"deletes,omitempty"` // rows deleted after the fold (per chunk)
	Truncates int    `json:"truncates,omitempty"`
	Appended  int    `json:"appended,omitempty"` // changelog: ops appended to the logs
	From      string `json:"from,omitempty"`     // the position the run started at
	To        string `json:"to"`                 // the position it committed
	// PostgreSQL: the WAL the pair's slot retains after the run (current
	// WAL end − restart_lsn), and what about the source's disk needs
	// attention (a slot over the warning threshold, an unbounded
	// max_slot_wal_keep_size at bootstrap).
	SlotRetained int64    `json:"slot_retained_bytes,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Count fills the change counts of res from a window: what it flushed
// before and what it holds. Upserts and deletes are counted per chunk (a
// key changed in two chunks counts twice).
func (res *Result) Count(w *Window) {
	res.Changes = w.Changes
	res.Appended, res.Truncates = w.logged, w.truncates
	res.Upserts, res.Deletes = w.upserts, w.deletes
	for _, tw := range w.Tables {
		res.Upserts += len(tw.Upserts)
		res.Deletes += len(tw.Deletes)
		if tw.Truncated {
			res.Truncates++
		}
	}
}

// Bootstrap loads one table with routes.Copy (replace) and commits pos as
// its position with the rows (a ReplicaEnsurer creates the replica
// first). An empty source table is applied as a TRUNCATE window instead:
// replace keeps the old table when its source is empty, a replica must
// not.
func Bootstrap(ctx context.Context, src routes.Source, dst routes.Destination, a Applier, t *Table, pos, runID string) (int64, error) {
	// The replica is weir's only when a bootstrap or a run of this source
	// committed into it (its state row says so, weir reset keeps the row);
	// any other table of that name is the user's, whatever its shape, and
	// the copy (or EnsureReplica, given the claim) refuses it instead of
	// replacing it.
	owned, err := ownedBy(ctx, dst, t.Dest, t.Info.SourceID)
	if err != nil {
		return 0, fmt.Errorf("bootstrap %s: %w", t.Source, err)
	}
	re, ensures := routes.As[ReplicaEnsurer](dst)
	if ensures {
		var claim *routes.State
		if !owned {
			claim = &routes.State{SourceID: t.Info.SourceID, RunID: runID}
		}
		if err := re.EnsureReplica(ctx, t, claim); err != nil {
			return 0, fmt.Errorf("bootstrap %s → %s: %w", t.Source, t.Dest, err)
		}
	}
	cr, err := routes.Copy(ctx, src, dst, routes.CopySpec{
		Table: t.Source, DestTable: t.Dest, Mode: routes.ModeReplace, RunID: runID, Position: pos, Fresh: !owned && !ensures})
	if err != nil {
		return 0, fmt.Errorf("bootstrap %s → %s: %w", t.Source, t.Dest, err)
	}
	if !cr.KeptEmpty {
		return cr.Rows, nil
	}
	w := NewWindow()
	if err := w.Add(t, Change{Op: OpTruncate, Position: pos}); err != nil {
		return 0, err
	}
	st := routes.State{SourceID: t.Info.SourceID, Position: pos, RunID: runID}
	if err := a.ApplyWindow(ctx, w, map[routes.TableRef]routes.State{t.Dest: st}); err != nil {
		return 0, fmt.Errorf("bootstrap empty %s → %s: %w", t.Source, t.Dest, err)
	}
	return 0, nil
}

// ownedBy reports whether table is weir's for the source sourceID: a
// bootstrap of that source committed into it, so its state row is there.
func ownedBy(ctx context.Context, dst routes.Destination, table routes.TableRef, sourceID string) (bool, error) {
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		return false, nil
	}
	_, had, err := sr.LoadState(ctx, table, sourceID)
	return had, err
}

// ReplicaEnsurer is a destination whose replica table differs from what
// its bulk load creates (ClickHouse: ReplacingMergeTree with version and
// tombstone columns). Bootstrap has it create the replica before the copy,
// and the route's replace then keeps the replica's shape.
type ReplicaEnsurer interface {
	// EnsureReplica creates t's replica when it is missing and refuses an
	// existing table that is not one. With a claim (a bootstrap into a
	// table weir does not own: ownedBy) any existing table is the user's
	// and refused (routes.Occupied), and the claim, a state without a
	// position, is saved before the replica is created, so a bootstrap
	// that stops before its copy commits leaves a replica the next
	// bootstrap knows as weir's.
	EnsureReplica(ctx context.Context, t *Table, claim *routes.State) error
}

// AsApplier returns dst's Applier, or ErrUnsupported naming the destination.
func AsApplier(dst routes.Destination, url string) (Applier, error) {
	a, ok := routes.As[Applier](dst)
	if !ok {
		return nil, fmt.Errorf("%w: log_based into %s: the destination cannot apply changes (postgres, mysql, clickhouse and iceberg can)", routes.ErrUnsupported, routes.Redact(url))
	}
	return a, nil
}
