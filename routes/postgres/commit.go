package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/routes"
)

// Commit makes the staged rows visible and saves state in one transaction:
// replace swaps the staging table in (readers see the old table or the new
// one, never a mix); append inserts the staged rows; merge upserts them by
// key. A destination that does not exist yet is the staging table renamed.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	err := st.commit(ctx, state)
	if err != nil && st.opts.Mode == routes.ModeMerge && isRepeatedKeyErr(err) {
		err = st.repeatedKey(ctx, err)
	}
	if err != nil {
		return fmt.Errorf("on %s: %w", st.e.url.Identity(), err)
	}
	return nil
}

// repeatedKey names a key the staged merge rows repeat (the staging
// table's primary key or ON CONFLICT failed on it): the run is refused as
// bad input (routes.RepeatedKey). The check costs nothing when no key
// repeats: it runs only after the server refused one.
func (st *stage) repeatedKey(ctx context.Context, cause error) error {
	sel := make([]string, len(st.opts.Key))
	for i, k := range st.opts.Key {
		sel[i] = quoteIdent(k) + "::text"
	}
	q := fmt.Sprintf("SELECT ARRAY[%s] FROM %s GROUP BY %s HAVING count(*) > 1 LIMIT 1", strings.Join(sel, ", "), ident(st.table), joinIdents(st.opts.Key))
	var vals []string
	err := st.lock.conn.QueryRow(ctx, q).Scan(&vals)
	if errors.Is(err, pgx.ErrNoRows) {
		return cause // another unique index of the destination refused a row
	}
	if err != nil {
		return fmt.Errorf("%w (and naming the repeated key failed: %v)", cause, err)
	}
	return routes.RepeatedKey(st.info.Ref, st.dest, st.opts.Key, strings.Join(vals, ", "))
}

// isRepeatedKeyErr: a unique index refused the staged rows (23505), or
// ON CONFLICT DO UPDATE met one key twice (21000).
func isRepeatedKeyErr(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "21000")
}

func (st *stage) commit(ctx context.Context, state routes.State) error {
	if st.done {
		return errors.New("stage already finished")
	}
	exists, err := st.destExists(ctx)
	if err != nil {
		return err
	}
	becomes := !exists || st.opts.Mode == routes.ModeReplace
	if (st.shared || st.opts.Existing) && becomes {
		return fmt.Errorf("%w: %s is gone: a backfill's commit does not create it", routes.ErrNotFound, st.dest)
	}
	if becomes {
		if err := st.addPrimaryKey(ctx); err != nil {
			return err
		}
	}
	err = st.inTx(ctx, func(tx pgx.Tx) error {
		if err := routes.Checkpoint("commit"); err != nil {
			return err
		}
		if st.fenced { // the compare-and-set first: a fenced commit writes nothing
			if err := casState(ctx, tx, st.dest, state, st.prev); err != nil {
				return err
			}
		}
		if err := st.apply(ctx, tx, exists, becomes); err != nil {
			return err
		}
		if st.fenced {
			return nil
		}
		return saveState(ctx, tx, st.dest, state)
	})
	if isDependencyErr(err) && !st.fenced && st.opts.Mode == routes.ModeReplace {
		// Views depend on the table, so it cannot be dropped: replace its
		// rows instead, still in one transaction.
		err = st.inTx(ctx, func(tx pgx.Tx) error {
			if err := st.copySwap(ctx, tx); err != nil {
				return err
			}
			return saveState(ctx, tx, st.dest, state)
		})
	}
	if err != nil {
		return err
	}
	st.done = true
	st.lock.release(ctx)
	return nil
}

var _ routes.FencedStage = (*stage)(nil)

// CommitIf is Commit with a compare-and-set on the state it replaces
// (routes.FencedStage), in the commit's transaction: the state row of
// state.SourceID must be prev's (Watermark and Position), or absent when
// prev is nil. Concurrent commits with the same prev queue on the row
// (READ COMMITTED re-checks the condition after the first commits), so
// exactly one of them commits.
func (st *stage) CommitIf(ctx context.Context, state routes.State, prev *routes.State) error {
	st.fenced, st.prev = true, prev
	return st.Commit(ctx, state)
}

func (st *stage) apply(ctx context.Context, tx pgx.Tx, exists, becomes bool) error {
	if becomes {
		return st.swap(ctx, tx, exists)
	}
	if err := st.checkLengths(ctx, tx); err != nil {
		return err
	}
	if err := execAll(ctx, tx, st.drift...); err != nil {
		return fmt.Errorf("evolve %s to the source's columns: %w", st.dest, err)
	}
	if st.opts.Mode == routes.ModeMerge {
		if err := execAll(ctx, tx, st.mergeSQL()); err != nil {
			return err
		}
		if err := st.checkMerged(ctx, tx); err != nil {
			return err
		}
		return execAll(ctx, tx, st.dropSQL())
	}
	return execAll(ctx, tx, st.insertSQL(), st.dropSQL())
}

// checkMerged refuses a merge that folded a staged row into another key's
// row: a key column of citext or of a nondeterministic collation, or in
// a unique index built with one (UNIQUE (k COLLATE ci), which ON CONFLICT
// (k) infers whatever its collation; a table of yours), holds 'a' = 'A',
// so ON CONFLICT updated the row of 'a' with
// the source's row of 'A'. Every staged key must now be in the destination
// byte for byte. Tables without such a key column cost one catalog query.
func (st *stage) checkMerged(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
LEFT JOIN pg_collation c ON c.oid = a.attcollation
WHERE a.attrelid = to_regclass($1) AND a.attname = ANY($2) AND (NOT COALESCE(c.collisdeterministic, true) OR a.atttypid = to_regtype('citext')
  OR EXISTS (SELECT 1 FROM pg_index i, unnest(i.indkey::int2[], i.indcollation::oid[]) AS u(attnum, coll) JOIN pg_collation ic ON ic.oid = u.coll
    WHERE i.indrelid = a.attrelid AND i.indisunique AND u.attnum = a.attnum AND NOT ic.collisdeterministic))`, ident(st.dest), st.opts.Key)
	if err != nil {
		return fmt.Errorf("key collations of %s: %w", st.dest, err)
	}
	folds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var c [2]string
		return c, r.Scan(&c[0], &c[1])
	})
	if err != nil || len(folds) == 0 {
		return err
	}
	var on, vals []string
	for _, k := range st.opts.Key {
		on = append(on, fmt.Sprintf("d.%s = s.%[1]s", quoteIdent(k)))
		vals = append(vals, "s."+quoteIdent(k)+"::text")
	}
	for _, f := range folds {
		on = append(on, fmt.Sprintf(`d.%s::text COLLATE "C" = s.%[1]s::text COLLATE "C"`, quoteIdent(f[0])))
		on[slices.Index(st.opts.Key, f[0])] = fmt.Sprintf("d.%s = s.%[1]s::%s", quoteIdent(f[0]), f[1])
	}
	q := fmt.Sprintf("SELECT ARRAY[%s] FROM %s AS s WHERE NOT EXISTS (SELECT 1 FROM %s AS d WHERE %s) LIMIT 1",
		strings.Join(vals, ", "), ident(st.table), ident(st.dest), strings.Join(on, " AND "))
	var example []string
	if err := tx.QueryRow(ctx, q).Scan(&example); errors.Is(err, pgx.ErrNoRows) {
		return nil
	} else if err != nil {
		return fmt.Errorf("check the merge into %s: %w", st.dest, err)
	}
	k := "(" + strings.Join(st.opts.Key, ", ") + ")"
	return &routes.ProbeError{Table: st.info.Ref.String(),
		Problem: fmt.Sprintf("the merge's row with key %s = (%s) would not land as its own row of %s: its key columns compare case-insensitively (citext, or a nondeterministic collation of the column or of a unique index on it) and take it for another row; nothing was written", k, strings.Join(example, ", "), st.dest),
		Hint:    fmt.Sprintf("give the key columns of %s (and their unique indexes) a deterministic collation and a type like text, or merge into a table weir creates", st.dest)}
}

func (st *stage) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := st.lock.conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

func (st *stage) destExists(ctx context.Context) (bool, error) {
	var ok bool
	err := st.lock.conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident(st.dest)).Scan(&ok)
	return ok, err
}

func (st *stage) pkeyName() string { return "_weir_pk_" + st.opts.RunID }

// addPrimaryKey builds the key after the load: one sort beats a COPY that
// maintains an index row by row.
// A table a merge creates takes the merge key, so the next merge's
// ON CONFLICT has its unique index.
func (st *stage) addPrimaryKey(ctx context.Context) error {
	key := st.info.PrimaryKey
	if st.opts.Mode == routes.ModeMerge {
		key = st.opts.Key
	}
	if len(key) == 0 {
		return nil
	}
	q := fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s PRIMARY KEY (%s)", ident(st.table), quoteIdent(st.pkeyName()), joinIdents(key))
	if _, err := st.lock.conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("primary key on staged %s: %w", st.dest, err)
	}
	return nil
}

// swap drops the old table and renames the staging table into its place.
func (st *stage) swap(ctx context.Context, tx pgx.Tx, exists bool) error {
	var qs []string
	if exists {
		qs = append(qs, "DROP TABLE "+ident(st.dest))
	}
	qs = append(qs,
		fmt.Sprintf("ALTER TABLE %s RENAME TO %s", ident(st.table), quoteIdent(st.dest.Name)),
		fmt.Sprintf("COMMENT ON TABLE %s IS NULL", ident(st.dest)))
	if len(st.info.PrimaryKey) > 0 {
		pk := routes.TableRef{Schema: st.dest.Schema, Name: st.pkeyName()}
		qs = append(qs, fmt.Sprintf("ALTER INDEX %s RENAME TO %s", ident(pk), quoteIdent(routes.SideName("", st.dest.Name, "_pkey", maxIdent))))
	}
	return execAll(ctx, tx, qs...)
}

// copySwap replaces the rows of a table other objects depend on.
func (st *stage) copySwap(ctx context.Context, tx pgx.Tx) error {
	return execAll(ctx, tx, "TRUNCATE "+ident(st.dest), st.insertSQL(), st.dropSQL())
}

func (st *stage) insertSQL() string {
	cols := columnNames(st.info.Columns)
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", ident(st.dest), cols, cols, ident(st.table))
}

func (st *stage) mergeSQL() string {
	var sets []string
	for _, c := range st.info.Columns {
		if !contains(st.opts.Key, c.Name) {
			sets = append(sets, fmt.Sprintf("%s = EXCLUDED.%s", quoteIdent(c.Name), quoteIdent(c.Name)))
		}
	}
	action := "DO NOTHING"
	if len(sets) > 0 {
		action = "DO UPDATE SET " + strings.Join(sets, ", ")
	}
	return fmt.Sprintf("%s ON CONFLICT (%s) %s", st.insertSQL(), joinIdents(st.opts.Key), action)
}

func (st *stage) dropSQL() string { return "DROP TABLE " + ident(st.table) }

func execAll(ctx context.Context, tx pgx.Tx, qs ...string) error {
	for _, q := range qs {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, " (", 2)[0], err)
		}
	}
	return nil
}

func joinIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func isDuplicateErr(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42P07"
}

func isDependencyErr(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "2BP01"
}

// CommitWith commits other (a stage of the same database) in this stage's
// transaction: both tables' rows and states become visible together, or
// neither does (a stream's quarantine and its sink, routes.JointStage).
func (st *stage) CommitWith(ctx context.Context, state routes.State, other routes.Stage, otherState routes.State) error {
	o, ok := other.(*stage)
	if !ok || o.e != st.e {
		return fmt.Errorf("%w: a joint commit with a stage of another database", routes.ErrUnsupported)
	}
	if st.done || o.done {
		return errors.New("stage already finished")
	}
	type part struct {
		st              *stage
		state           routes.State
		exists, becomes bool
	}
	parts := []*part{{st: o, state: otherState}, {st: st, state: state}}
	for _, p := range parts {
		exists, err := p.st.destExists(ctx)
		if err != nil {
			return fmt.Errorf("on %s: %w", st.e.url.Identity(), err)
		}
		p.exists, p.becomes = exists, !exists || p.st.opts.Mode == routes.ModeReplace
		if p.becomes {
			if err := p.st.addPrimaryKey(ctx); err != nil {
				return fmt.Errorf("on %s: %w", st.e.url.Identity(), err)
			}
		}
	}
	err := st.inTx(ctx, func(tx pgx.Tx) error {
		if err := routes.Checkpoint("commit"); err != nil {
			return err
		}
		for _, p := range parts {
			if err := p.st.apply(ctx, tx, p.exists, p.becomes); err != nil {
				return err
			}
			if err := saveState(ctx, tx, p.st.dest, p.state); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("on %s: %w", st.e.url.Identity(), err)
	}
	for _, p := range parts {
		p.st.done = true
		p.st.lock.release(ctx)
	}
	return nil
}
