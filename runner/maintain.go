package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Maintain maintains the Iceberg table a task writes (routes.Maintainer,
// Maintain): it compacts the small data files, expires old snapshots and
// removes orphan files, keeping every snapshot and data file that an
// incremental model of the dagfile still needs to read on from its
// committed offset (MaintainConsumed). Offsets never move: the sink's own
// state is carried into the compaction snapshot, and readers skip that
// snapshot's rows as not new.
func (r *Runner) Maintain(ctx context.Context, name string, o routes.MaintainOptions) (*routes.MaintainReport, error) {
	t, err := r.task(name)
	if err != nil {
		return nil, err
	}
	sink := t.Sink()
	if sink.IsZero() {
		return nil, routes.BadInput("task %s writes no table to maintain", name)
	}
	rep, err := r.MaintainTable(ctx, sink, o)
	if err != nil {
		return rep, fmt.Errorf("task %s: %w", name, err)
	}
	return rep, nil
}

// MaintainTable is Maintain of a table on a connection of the dagfile.
func (r *Runner) MaintainTable(ctx context.Context, table dagfile.TableAddr, o routes.MaintainOptions) (*routes.MaintainReport, error) {
	dst, err := r.destination(ctx, table.Conn)
	if err != nil {
		return nil, err
	}
	e, ok := routes.As[routes.Maintainer](dst)
	if !ok {
		return nil, routes.BadInput("weir maintain works on Iceberg tables; %s is on a %T connection", table, dst)
	}
	consumed, err := r.MaintainConsumed(ctx, table)
	if err != nil {
		return nil, err
	}
	o.Consumed = min(o.Consumed, consumed)
	if o.RunID == "" {
		o.RunID = routes.NewRunID()
	}
	rep, err := e.Maintain(ctx, tableRef(table), o)
	if err != nil {
		return rep, fmt.Errorf("maintain %s: %w", table, err)
	}
	return rep, nil
}

// MaintainConsumed is the lowest snapshot sequence number at which an
// incremental model of the dagfile that reads table by snapshot committed
// its offset (routes.AllConsumed when none has): the model reads on from
// there, so that snapshot and the later ones must stay, and data files
// added after it must not be rewritten. A model that has committed
// nothing reads the table from its start (every live row), and a replace
// model or a lookup reads it whole; neither holds anything back, nor does a
// model reading by a column cursor (it compares values, not snapshots).
func (r *Runner) MaintainConsumed(ctx context.Context, table dagfile.TableAddr) (int64, error) {
	consumed := int64(routes.AllConsumed)
	for _, d := range r.file.Tasks {
		if d.Kind != dagfile.KindModel || d.Model.Mode == "replace" {
			continue
		}
		srcs := modelSources(d.Model)
		for _, view := range sortedNames(srcs) {
			cursor := d.Model.Cursor[view]
			if !r.sameTable(srcs[view], table) || d.Model.IsLookup(view) ||
				(cursor != "" && cursor != routes.SnapshotCursor) {
				continue
			}
			if err := r.file.Resolve(d); err != nil {
				return 0, fmt.Errorf("%w: task %s: %w", routes.ErrBadInput, d.Name, err)
			}
			dst, err := r.destination(ctx, d.Model.Sink.Conn)
			if err != nil {
				return 0, err
			}
			marks, found, err := incremental.LoadMarks(ctx, dst, tableRef(d.Model.Sink), d.Name)
			if err != nil {
				return 0, fmt.Errorf("offsets of task %s (in %s): %w", d.Name, d.Model.Sink, err)
			}
			mk, ok := marks[view]
			if !found || !ok || mk.Offset == "" {
				continue
			}
			seq, err := strconv.ParseInt(mk.Offset, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("task %s: offset %q in %s is not a snapshot sequence number: %w", d.Name, mk.Offset, table, err)
			}
			consumed = min(consumed, seq)
		}
	}
	return consumed, nil
}

// sameTable reports whether a and b name the same table: by the same
// connection, or by two connections of the dagfile with the same URL (two
// names for one lake).
func (r *Runner) sameTable(a, b dagfile.TableAddr) bool {
	if !strings.EqualFold(a.Name(), b.Name()) {
		return false
	}
	if strings.EqualFold(a.Conn, b.Conn) {
		return true
	}
	ca, cb := r.file.Connections[a.Conn], r.file.Connections[b.Conn]
	return ca != nil && cb != nil && ca.URL() != "" && ca.URL() == cb.URL()
}
