package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

// maxComment is MySQL's limit on a table comment, in characters.
const maxComment = 2048

// Commit makes the staged rows visible and saves state, then releases the
// lock.
//
// append and merge run INSERT … SELECT from the staging table (merge with
// ON DUPLICATE KEY UPDATE) and the _weir_state upsert in one InnoDB
// transaction; a destination that does not exist yet is first created
// empty (CREATE TABLE … LIKE the staging table), so the data and the state
// always commit together.
//
// replace swaps with one RENAME TABLE dest TO old, stage TO dest, which is
// atomic for readers but DDL, so it commits on its own. The state rides
// through the swap in the staging table's comment and is written to
// _weir_state right after; a run that dies in between leaves it in the
// new table's comment, and the next run (Prepare, LoadState) finishes the
// job. Data and state never disagree.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	if st.done {
		return errors.New("stage already finished")
	}
	if err := st.lock.held(ctx); err != nil {
		return err
	}
	exists := st.e.tableExists(ctx, st.dest)
	if st.opts.Mode == routes.ModeReplace {
		return st.commitReplace(ctx, exists, state)
	}
	if err := st.commitDelta(ctx, exists, state); err != nil {
		return err
	}
	st.finish(ctx, st.table)
	return nil
}

// finish drops what the commit left behind, best effort (the next run drops
// what this misses), and releases the lock.
func (st *stage) finish(ctx context.Context, leftovers ...routes.TableRef) {
	st.done = true
	for _, t := range leftovers {
		st.exec(ctx, "DROP TABLE IF EXISTS "+ident(t))
	}
	st.lock.release(ctx)
}

func (st *stage) commitReplace(ctx context.Context, exists bool, state routes.State) error {
	comment := stageComment(st.dest, st.opts.RunID, st.lock.connID) + " state=" + encodeState(state)
	if len(comment) > maxComment {
		comment = stageComment(st.dest, st.opts.RunID, st.lock.connID)
	}
	old := routes.TableRef{Schema: st.dest.Schema, Name: oldName(st.dest.Name, st.opts.RunID)}
	swap := fmt.Sprintf("RENAME TABLE %s TO %s", ident(st.table), ident(st.dest))
	if exists {
		swap = fmt.Sprintf("RENAME TABLE %s TO %s, %s TO %s", ident(st.dest), ident(old), ident(st.table), ident(st.dest))
	}
	if err := st.exec(ctx, "ALTER TABLE "+ident(st.table)+" COMMENT = "+quoteLiteral(comment), swap); err != nil {
		return err
	}
	// The new table is in place: from here on, the commit has happened.
	// The comment goes last: until it is cleared it names this run, so a
	// run that dies here leaves the next one what to drop (dropStale).
	err := st.inTx(ctx, func(tx *sql.Tx) error { return saveState(ctx, tx, st.dest, state) })
	dropped := st.exec(ctx, "DROP TABLE IF EXISTS "+ident(old))
	if err == nil && dropped == nil {
		err = st.exec(ctx, "ALTER TABLE "+ident(st.dest)+" COMMENT = ''")
	}
	st.finish(ctx)
	if err != nil {
		return fmt.Errorf("rows swapped in; the next run saves the state: %w", err)
	}
	return nil
}

func (st *stage) commitDelta(ctx context.Context, exists bool, state routes.State) error {
	if !exists {
		create := fmt.Sprintf("CREATE TABLE %s LIKE %s", ident(st.dest), ident(st.table))
		if err := st.exec(ctx, create, "ALTER TABLE "+ident(st.dest)+" COMMENT = ''"); err != nil {
			return err
		}
	}
	if err := st.exec(ctx, st.drift...); err != nil {
		return fmt.Errorf("evolve %s to the source's columns: %w", st.dest, err)
	}
	return st.inTx(ctx, func(tx *sql.Tx) error {
		q := st.insertSQL()
		if st.opts.Mode == routes.ModeMerge {
			q = st.mergeSQL()
		}
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s into %s: %w", st.opts.Mode, st.dest, err)
		}
		return saveState(ctx, tx, st.dest, state)
	})
}

// inTx runs fn in a transaction on the lock's session; the checkpoint
// runs after fn, right before COMMIT.
func (st *stage) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := st.lock.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	err = fn(tx)
	if err == nil {
		err = routes.Checkpoint("commit") // a test's error rolls back
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (st *stage) columnNames() []string {
	names := make([]string, len(st.cols))
	for i, c := range st.cols {
		names[i] = c.Name
	}
	return names
}

func (st *stage) insertSQL() string {
	names := st.columnNames()
	sel := make([]string, len(names))
	for i, n := range names {
		sel[i] = "s." + quoteIdent(n)
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s AS s", ident(st.dest), joinIdents(names), strings.Join(sel, ", "), ident(st.table))
}

// mergeSQL upserts by the destination's unique key, set-based: one
// INSERT … SELECT … ON DUPLICATE KEY UPDATE.
func (st *stage) mergeSQL() string {
	key := st.mergeKey()
	var sets []string
	for _, n := range st.columnNames() {
		if !contains(key, n) {
			sets = append(sets, fmt.Sprintf("%s = s.%s", quoteIdent(n), quoteIdent(n)))
		}
	}
	if len(sets) == 0 {
		sets = append(sets, fmt.Sprintf("%s = %[1]s", quoteIdent(key[0])))
	}
	return st.insertSQL() + " ON DUPLICATE KEY UPDATE " + strings.Join(sets, ", ")
}
