package pgwal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

// stateTable is routes/postgres's StateTable; the DDL below is the same, so
// a destination written by either reads the same.
const stateTable = "_weir_state"

func stateRef(dest routes.TableRef) routes.TableRef {
	return routes.TableRef{Schema: dest.Schema, Name: stateTable}
}

func ensureStateTable(ctx context.Context, tx pgx.Tx, dest routes.TableRef) error {
	q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
  dest_table text NOT NULL,
  source text NOT NULL,
  cursor_column text NOT NULL DEFAULT '',
  watermark text NOT NULL DEFAULT '',
  position text NOT NULL DEFAULT '',
  run_id text NOT NULL,
  rows int8 NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dest_table, source))`, ident(stateRef(dest)))
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", stateRef(dest), err)
	}
	return nil
}

func saveState(ctx context.Context, tx pgx.Tx, dest routes.TableRef, s routes.State) error {
	q := fmt.Sprintf(`INSERT INTO %s AS s (dest_table, source, cursor_column, watermark, position, run_id, rows)
VALUES ($1, $2, '', '', $3, $4, $5)
ON CONFLICT (dest_table, source) DO UPDATE SET position = EXCLUDED.position,
  run_id = EXCLUDED.run_id, rows = EXCLUDED.rows, updated_at = now()`, ident(stateRef(dest)))
	if _, err := tx.Exec(ctx, q, dest.Name, s.SourceID, s.Position, s.RunID, s.Rows); err != nil {
		return fmt.Errorf("save state of %s: %w", dest, err)
	}
	return nil
}

// loadPosition returns the saved position of one pair; ok is false when
// there is none (first run, or after weir reset).
func loadPosition(ctx context.Context, dst *pgx.Conn, dest routes.TableRef, sourceID string) (string, bool, error) {
	var exists bool
	if err := dst.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident(stateRef(dest))).Scan(&exists); err != nil || !exists {
		return "", false, err
	}
	var pos string
	q := fmt.Sprintf(`SELECT position FROM %s WHERE dest_table = $1 AND source = $2`, ident(stateRef(dest)))
	err := dst.QueryRow(ctx, q, dest.Name, sourceID).Scan(&pos)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && pos == "") {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("load state of %s: %w", dest, err)
	}
	return pos, true, nil
}

func deleteState(ctx context.Context, dst *pgx.Conn, dest routes.TableRef, sourceID string) error {
	var exists bool
	if err := dst.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident(stateRef(dest))).Scan(&exists); err != nil || !exists {
		return err
	}
	q := fmt.Sprintf(`DELETE FROM %s WHERE dest_table = $1 AND source = $2`, ident(stateRef(dest)))
	if _, err := dst.Exec(ctx, q, dest.Name, sourceID); err != nil {
		return fmt.Errorf("delete state of %s: %w", dest, err)
	}
	return nil
}
