package pgwal

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/routes"
)

// bootstrap creates the publication and the slot, then loads every table
// from the slot's exported snapshot and saves the slot's consistent point
// as the position, in one destination transaction. Rows committed before
// the consistent point are in the snapshot; later ones come from the slot:
// no gap, no duplicates. A stale slot (left by a bootstrap that did not
// commit) is dropped first, since its snapshot is gone.
func (r *run) bootstrap(ctx context.Context) (Result, error) {
	res := Result{Bootstrap: true}
	debugf("bootstrap: dropping a stale slot %s", r.name)
	if err := dropSlot(ctx, r.src, r.name); err != nil {
		return res, err
	}
	if err := ensurePublication(ctx, r.src, r.name, r.cfg.Tables); err != nil {
		return res, err
	}
	repl, err := pgconn.Connect(ctx, replicationURL(r.cfg.SourceURL))
	if err != nil {
		return res, fmt.Errorf("replication connection: %w", err)
	}
	defer repl.Close(context.WithoutCancel(ctx))
	debugf("bootstrap: creating slot %s", r.name)
	slot, err := createSlot(ctx, repl, r.name)
	if err != nil {
		return res, err
	}
	debugf("bootstrap: slot at %s, snapshot %s", slot.ConsistentPoint, slot.SnapshotName)
	res.To = slot.ConsistentPoint
	res.Rows, err = r.loadSnapshot(ctx, slot.SnapshotName, slot.ConsistentPoint)
	return res, err
}

// loadSnapshot copies every table as of the snapshot into the destination
// and saves pos, in one destination transaction.
func (r *run) loadSnapshot(ctx context.Context, snapshot, pos string) (int64, error) {
	stx, err := r.src.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, fmt.Errorf("begin snapshot read: %w", err)
	}
	defer stx.Rollback(context.WithoutCancel(ctx))
	if _, err := stx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapshot)); err != nil {
		return 0, fmt.Errorf("import snapshot %s: %w", snapshot, err)
	}
	var total int64
	err = r.inDestTx(ctx, func(dtx pgx.Tx) error {
		for _, t := range r.tables {
			n, err := r.copyTable(ctx, dtx, t)
			if err != nil {
				return err
			}
			total += n
			if err := r.saveState(ctx, dtx, t, pos, n); err != nil {
				return err
			}
		}
		return r.fail("bootstrap-commit")
	})
	return total, err
}

// copyTable creates the destination table when missing, empties it and
// streams the source's binary COPY into it (no row decode).
func (r *run) copyTable(ctx context.Context, dtx pgx.Tx, t *table) (int64, error) {
	if err := ensureStateTable(ctx, dtx, t.Dest); err != nil {
		return 0, err
	}
	if _, err := dtx.Exec(ctx, t.createSQL()); err != nil {
		return 0, fmt.Errorf("create %s: %w", t.Dest, err)
	}
	if _, err := dtx.Exec(ctx, "TRUNCATE "+ident(t.Dest)); err != nil {
		return 0, fmt.Errorf("truncate %s: %w", t.Dest, err)
	}
	cols := identList(t.Columns)
	out := fmt.Sprintf("COPY (SELECT %s FROM %s) TO STDOUT (FORMAT binary)", cols, ident(t.Source))
	in := fmt.Sprintf("COPY %s (%s) FROM STDIN (FORMAT binary)", ident(t.Dest), cols)
	pr, pw := io.Pipe()
	go func() {
		_, err := r.src.PgConn().CopyTo(ctx, pw, out)
		pw.CloseWithError(err)
	}()
	tag, err := dtx.Conn().PgConn().CopyFrom(ctx, pr, in)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return 0, fmt.Errorf("copy %s → %s: %w", t.Source, t.Dest, err)
	}
	return tag.RowsAffected(), nil
}

func (r *run) saveState(ctx context.Context, tx pgx.Tx, t *table, pos string, rows int64) error {
	return saveState(ctx, tx, t.Dest, routes.State{
		SourceID: r.cfg.sourceID(Pair{Source: t.Source, Dest: t.Dest}),
		Position: pos, RunID: r.runID, Rows: rows,
	})
}

func (r *run) inDestTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := r.dst.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin destination transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit destination: %w", err)
	}
	return nil
}

// quoteLiteral renders s as a SQL string literal.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
