package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

// StateTable holds one row per (destination table, source), in the
// destination table's schema, written in the data's transaction.
const StateTable = routes.StateTableName

func stateDDL(schema string) string {
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
  dest_table text NOT NULL,
  source text NOT NULL,
  cursor_column text NOT NULL DEFAULT '',
  watermark text NOT NULL DEFAULT '',
  position text NOT NULL DEFAULT '',
  run_id text NOT NULL,
  rows int8 NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dest_table, source))`, ident(routes.TableRef{Schema: schema, Name: StateTable}))
}

// stateColumns are the columns of weir's state table.
var stateColumns = []string{"dest_table", "source", "cursor_column", "watermark", "position", "run_id", "rows", "updated_at"}

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// checkStateTable refuses a _weir_state that is not weir's (another
// tool's table of that name) before a row moves, rather than failing on
// its columns after the copy. A missing table is fine: weir creates it.
func checkStateTable(ctx context.Context, q querier, schema string) error {
	t := routes.TableRef{Schema: schema, Name: StateTable}
	rows, err := q.Query(ctx, `SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, ident(t))
	if err != nil {
		return fmt.Errorf("check %s: %w", t, err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("check %s: %w", t, err)
	}
	return routes.CheckStateColumns(t, have, stateColumns)
}

func saveState(ctx context.Context, tx pgx.Tx, dest routes.TableRef, s routes.State) error {
	q := fmt.Sprintf(`INSERT INTO %s AS s (dest_table, source, cursor_column, watermark, position, run_id, rows)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (dest_table, source) DO UPDATE SET cursor_column = EXCLUDED.cursor_column,
  watermark = EXCLUDED.watermark, position = EXCLUDED.position, run_id = EXCLUDED.run_id,
  rows = EXCLUDED.rows, updated_at = now()`, ident(routes.TableRef{Schema: dest.Schema, Name: StateTable}))
	_, err := tx.Exec(ctx, q, dest.Name, s.SourceID, s.Cursor, s.Watermark, s.Position, s.RunID, s.Rows)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// casState saves s only if the saved state of s.SourceID is prev (nil:
// none), else routes.ErrFenced (CommitIf).
func casState(ctx context.Context, tx pgx.Tx, dest routes.TableRef, s routes.State, prev *routes.State) error {
	t := ident(routes.TableRef{Schema: dest.Schema, Name: StateTable})
	args := []any{dest.Name, s.SourceID, s.Cursor, s.Watermark, s.Position, s.RunID, s.Rows}
	q := fmt.Sprintf(`INSERT INTO %s (dest_table, source, cursor_column, watermark, position, run_id, rows)
VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (dest_table, source) DO NOTHING`, t)
	if prev != nil {
		q = fmt.Sprintf(`UPDATE %s SET cursor_column = $3, watermark = $4, position = $5, run_id = $6, rows = $7, updated_at = now()
WHERE dest_table = $1 AND source = $2 AND watermark = $8 AND position = $9`, t)
		args = append(args, prev.Watermark, prev.Position)
	}
	tag, err := tx.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("state %s of %s: %w", s.SourceID, dest, routes.ErrFenced)
	}
	return nil
}

// LoadState returns what the last commit into table from sourceID saved.
func (e *Endpoint) LoadState(ctx context.Context, table routes.TableRef, sourceID string) (routes.State, bool, error) {
	table, err := e.destRef(ctx, table)
	if err != nil {
		return routes.State{}, false, err
	}
	var exists bool
	q := `SELECT to_regclass($1) IS NOT NULL`
	if err := e.pool.QueryRow(ctx, q, ident(routes.TableRef{Schema: table.Schema, Name: StateTable})).Scan(&exists); err != nil || !exists {
		return routes.State{}, false, err
	}
	if err := checkStateTable(ctx, e.pool, table.Schema); err != nil {
		return routes.State{}, false, err
	}
	s := routes.State{SourceID: sourceID}
	q = fmt.Sprintf(`SELECT cursor_column, watermark, position, run_id, rows FROM %s WHERE dest_table = $1 AND source = $2`,
		ident(routes.TableRef{Schema: table.Schema, Name: StateTable}))
	err = e.pool.QueryRow(ctx, q, table.Name, sourceID).Scan(&s.Cursor, &s.Watermark, &s.Position, &s.RunID, &s.Rows)
	if errors.Is(err, pgx.ErrNoRows) {
		return routes.State{}, false, nil
	}
	if err != nil {
		return routes.State{}, false, fmt.Errorf("load state of %s: %w", table, err)
	}
	return s, true, nil
}

// States returns every state saved beside table, in one statement (one
// snapshot of the state table): routes.StateLister.
func (e *Endpoint) States(ctx context.Context, table routes.TableRef) ([]routes.State, error) {
	table, err := e.destRef(ctx, table)
	if err != nil {
		return nil, err
	}
	var exists bool
	q := `SELECT to_regclass($1) IS NOT NULL`
	if err := e.pool.QueryRow(ctx, q, ident(routes.TableRef{Schema: table.Schema, Name: StateTable})).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	if err := checkStateTable(ctx, e.pool, table.Schema); err != nil {
		return nil, err
	}
	q = fmt.Sprintf(`SELECT source, cursor_column, watermark, position, run_id, rows FROM %s WHERE dest_table = $1 ORDER BY source`,
		ident(routes.TableRef{Schema: table.Schema, Name: StateTable}))
	rows, err := e.pool.Query(ctx, q, table.Name)
	if err != nil {
		return nil, fmt.Errorf("states of %s: %w", table, err)
	}
	states, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (routes.State, error) {
		var s routes.State
		err := r.Scan(&s.SourceID, &s.Cursor, &s.Watermark, &s.Position, &s.RunID, &s.Rows)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("states of %s: %w", table, err)
	}
	return states, nil
}
