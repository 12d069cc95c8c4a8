package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
	if err := st.checkLengths(ctx); err != nil {
		return err
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
		if st.opts.Mode == routes.ModeMerge {
			if err := st.checkMerged(ctx, tx); err != nil {
				return err
			}
		}
		return saveState(ctx, tx, st.dest, state)
	})
}

// checkMerged refuses, before COMMIT, a merge that folded a staged row into
// another key's row: ON DUPLICATE KEY UPDATE fires on any unique key of the
// destination, compared in its columns' collation (MariaDB's default
// utf8mb4_general_ci holds 'a' = 'A' = 'a '), while the staging table is
// binary. Every staged key must now be in the destination byte for byte.
// The join compares in the destination's collation, so its index serves.
func (st *stage) checkMerged(ctx context.Context, tx *sql.Tx) error {
	key := st.mergeKey()
	colls := make(map[string]string, len(key))      // column → its value in the destination's collation
	collations := make(map[string]string, len(key)) // column → the collation's name
	rows, err := tx.QueryContext(ctx, `SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLLATION_NAME IS NOT NULL`, st.dest.Schema, st.dest.Name)
	if err != nil {
		return fmt.Errorf("collations of %s: %w", st.dest, err)
	}
	for rows.Next() {
		var col, cs, coll string
		if err := rows.Scan(&col, &cs, &coll); err != nil {
			rows.Close()
			return err
		}
		colls[col] = fmt.Sprintf("CONVERT(s.%s USING %s) COLLATE %s", quoteIdent(col), cs, coll)
		collations[col] = coll
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if folds, err := st.canFold(ctx, tx, key, collations); err != nil || !folds {
		return err
	}
	// A key column without a collation compares by value: matched is
	// enough (DATETIME(6) and DATETIME print one value differently).
	var on, vals []string
	same := []string{fmt.Sprintf("d.%s IS NOT NULL", quoteIdent(key[0]))}
	for _, k := range key {
		sv := "s." + quoteIdent(k)
		if c, ok := colls[k]; ok {
			sv = c
			same = append(same, fmt.Sprintf("BINARY d.%s <=> BINARY %s", quoteIdent(k), sv))
		}
		on = append(on, fmt.Sprintf("d.%s = %s", quoteIdent(k), sv))
		vals = append(vals, "s."+quoteIdent(k))
	}
	q := fmt.Sprintf("SELECT CONCAT_WS('-', %s) FROM %s AS s LEFT JOIN %s AS d ON %s WHERE NOT (%s) LIMIT 1",
		strings.Join(vals, ", "), ident(st.table), ident(st.dest), strings.Join(on, " AND "), strings.Join(same, " AND "))
	var example string
	switch err := tx.QueryRowContext(ctx, q).Scan(&example); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check the merge into %s: %w", st.dest, err)
	}
	k := "(" + strings.Join(key, ", ") + ")"
	return &routes.ProbeError{Table: st.info.Ref.String(),
		Problem: fmt.Sprintf("the merge's row with key %s = (%s) would not land as its own row of %s: a unique key of that table (its collation, which can hold 'a' = 'A' = 'a ', or another unique index than %s) takes it for another row; nothing was written", k, example, st.dest, k),
		Hint:    fmt.Sprintf("give the key columns of %s a binary collation (ALTER TABLE … MODIFY … COLLATE utf8mb4_nopad_bin) and drop other unique indexes, or merge into a table weir creates", st.dest)}
}

// canFold reports whether ON DUPLICATE KEY UPDATE could take a staged row
// for another key's row: a key column's collation is not binary without
// padding (a table weir creates has only such columns, keyedCollation), or
// a unique index is not the key's own (another column, a subset of the key,
// a prefix). When it cannot, checkMerged's join over every staged row is
// skipped: a big merge into weir's own table pays two catalog queries.
func (st *stage) canFold(ctx context.Context, tx *sql.Tx, key []string, collations map[string]string) (bool, error) {
	for _, k := range key {
		if c, ok := collations[k]; ok && !noPadBinary(c) {
			return true, nil
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME, SUB_PART IS NOT NULL FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX`, st.dest.Schema, st.dest.Name)
	if err != nil {
		return false, fmt.Errorf("unique indexes of %s: %w", st.dest, err)
	}
	defer rows.Close()
	indexes := map[string][]string{}
	for rows.Next() {
		var index, col string
		var prefix bool
		if err := rows.Scan(&index, &col, &prefix); err != nil {
			return false, err
		}
		if prefix {
			return true, nil
		}
		indexes[index] = append(indexes[index], col)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, cols := range indexes {
		if len(cols) != len(key) {
			return true, nil
		}
		for _, c := range cols {
			if !slices.ContainsFunc(key, func(k string) bool { return strings.EqualFold(k, c) }) {
				return true, nil
			}
		}
	}
	return false, nil
}

// noPadBinary: a collation that compares byte for byte with no
// trailing-space padding (utf8mb4_bin holds 'a' = 'a ').
func noPadBinary(collation string) bool {
	return strings.HasSuffix(collation, "_nopad_bin") || collation == "utf8mb4_0900_bin"
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
