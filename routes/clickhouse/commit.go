package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

// Commit makes the staged rows visible and saves state. With no
// transactions to lean on it writes the state record as applying, lands
// the data in one atomic statement per step (EXCHANGE TABLES or one
// multi-table RENAME for a swap, ATTACH PARTITION … FROM per partition for
// append and merge), then writes the record as committed; LoadState
// decides an interrupted commit from the data.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	if st.done {
		return errors.New("stage already finished")
	}
	if err := st.lease.verify(ctx); err != nil {
		return err
	}
	if err := st.noRepeatedKey(ctx, state.Rows); err != nil {
		return err
	}
	rec, err := st.begin(ctx, state)
	if err != nil {
		return err
	}
	err = routes.Checkpoint("commit")
	if err == nil {
		err = st.land(ctx, rec)
	}
	if err != nil {
		rec.status = statusAborted
		if serr := st.e.writeState(context.WithoutCancel(ctx), st.dest.Schema, rec); serr != nil {
			st.done = true // keep the stage: an applying record is decided by it
			st.lease.release(context.WithoutCancel(ctx))
			return errors.Join(err, serr)
		}
		return err
	}
	if err := routes.Checkpoint("commit-landed"); err != nil { // kill tests: landed, still recorded as applying
		st.done = true // as a kill: the next run decides the applying record
		return err
	}
	st.done = true
	rec.status = statusCommitted
	err = st.e.writeState(ctx, st.dest.Schema, rec)
	return errors.Join(err, st.e.dropTable(ctx, st.table), st.lease.release(ctx))
}

// noRepeatedKey refuses a merge whose staged rows repeat a key
// (routes.RepeatedKey): a ReplacingMergeTree would keep one of them, which
// one is not defined. A background merge of the staging table may have
// collapsed the copies already: fewer rows staged than written is a
// repeat too, with no example left to name.
func (st *stage) noRepeatedKey(ctx context.Context, written int64) error {
	if st.opts.Mode != routes.ModeMerge {
		return nil
	}
	sel := make([]string, len(st.opts.Key))
	keys := make([]string, len(st.opts.Key))
	for i, k := range st.opts.Key {
		keys[i] = quoteIdent(k)
		sel[i] = "toString(" + keys[i] + ")"
	}
	q := fmt.Sprintf("SELECT %s FROM %s GROUP BY %s HAVING count() > 1 LIMIT 1", strings.Join(sel, ", "), ident(st.table), strings.Join(keys, ", "))
	row, found, err := queryRow(ctx, st.e.conn, q)
	if err != nil {
		return fmt.Errorf("repeated keys of %s: %w", st.table, err)
	}
	if found {
		return routes.RepeatedKey(st.info.Ref, st.dest, st.opts.Key, strings.Join(row, ", "))
	}
	staged, err := st.e.count(ctx, st.table)
	if err != nil {
		return err
	}
	if staged < written {
		return routes.RepeatedKey(st.info.Ref, st.dest, st.opts.Key, "")
	}
	return nil
}

// begin records the commit as applying, with what decides it later.
func (st *stage) begin(ctx context.Context, s routes.State) (stateRecord, error) {
	if s.RunID == "" {
		s.RunID = st.opts.RunID
	}
	r := stateRecord{dest: st.dest.Name, source: s.SourceID, cursor: s.Cursor, watermark: s.Watermark,
		position: s.Position, runID: s.RunID, rows: s.Rows, status: statusApplying,
		mode: string(st.opts.Mode), stage: st.table.Name}
	if err := st.e.settleInto(ctx, st.dest, &r); err != nil {
		return r, err
	}
	if err := st.e.writeState(ctx, st.dest.Schema, r); err != nil {
		return r, err
	}
	return r, nil
}

// settleInto fills the record's previous state and the facts landed needs.
func (e *Endpoint) settleInto(ctx context.Context, dest routes.TableRef, r *stateRecord) error {
	if prev, ok, err := e.LoadState(ctx, dest, r.source); err != nil {
		return err
	} else if ok {
		r.prevRun, r.prevCursor, r.prevWatermark, r.prevPosition = prev.RunID, prev.Cursor, prev.Watermark, prev.Position
	}
	var err error
	if r.destExisted, err = e.tableExists(ctx, dest); err != nil || !r.destExisted {
		return err
	}
	stageRef := routes.TableRef{Schema: dest.Schema, Name: r.stage}
	if r.rowsBefore, err = e.count(ctx, dest); err != nil {
		return err
	}
	if r.windowRows, err = e.count(ctx, stageRef); err != nil {
		return err
	}
	if atomic, err := e.isAtomic(ctx, dest.Schema); err != nil || !atomic {
		return err
	}
	r.destUUID, err = e.tableUUID(ctx, dest)
	return err
}

func (e *Endpoint) isAtomic(ctx context.Context, db string) (bool, error) {
	engine, err := e.databaseEngine(ctx, db)
	return engine == "Atomic", err
}

// land makes the staged rows visible.
func (st *stage) land(ctx context.Context, r stateRecord) error {
	switch {
	case !r.destExisted:
		return st.exec(ctx, fmt.Sprintf("RENAME TABLE %s TO %s%s", ident(st.table), ident(st.dest), st.e.opts.onCluster()))
	case st.opts.Mode == routes.ModeReplace:
		return st.swap(ctx, r.destUUID != "")
	}
	return st.attach(ctx)
}

// swap exchanges the staging table with the destination: EXCHANGE TABLES
// on Atomic databases; elsewhere one RENAME of both (the old table moves
// to _weir_old_<table>_<run>), then the old rows are dropped.
func (st *stage) swap(ctx context.Context, atomic bool) error {
	if atomic {
		return st.exec(ctx, fmt.Sprintf("EXCHANGE TABLES %s AND %s%s", ident(st.table), ident(st.dest), st.e.opts.onCluster()))
	}
	old := routes.TableRef{Schema: st.dest.Schema, Name: weirName(oldPrefix, st.dest.Name, st.opts.RunID)}
	q := fmt.Sprintf("RENAME TABLE %s TO %s, %s TO %s%s", ident(st.dest), ident(old), ident(st.table), ident(st.dest), st.e.opts.onCluster())
	if err := st.exec(ctx, q); err != nil {
		return err
	}
	st.e.dropTable(ctx, old) // a leftover is dropped by the next run
	return nil
}

// attach moves the staged parts into the destination, one partition at a
// time; each ATTACH is atomic, a table with one partition all at once.
func (st *stage) attach(ctx context.Context) error {
	q := fmt.Sprintf("SELECT DISTINCT partition FROM system.parts WHERE database = %s AND table = %s AND active",
		quoteLiteral(st.table.Schema), quoteLiteral(st.table.Name))
	parts, err := queryStrings(ctx, st.e.conn, q)
	if err != nil {
		return err
	}
	for _, p := range parts {
		q := fmt.Sprintf("ALTER TABLE %s%s ATTACH PARTITION %s FROM %s", ident(st.dest), st.e.opts.onCluster(), p[0], ident(st.table))
		if err := st.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (st *stage) exec(ctx context.Context, q string) error {
	if err := st.e.conn.exec(ctx, q); err != nil {
		return fmt.Errorf("commit %s: %s: %w", st.dest, strings.SplitN(q, " ", 3)[0], err)
	}
	return nil
}
