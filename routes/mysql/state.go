package mysql

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// StateTable holds one row per (destination table, source), in the
// destination table's database; append and merge write it in the data's
// transaction.
const StateTable = routes.StateTableName

func stateRef(schema string) routes.TableRef {
	return routes.TableRef{Schema: schema, Name: StateTable}
}

// stateDDL: the key is 767 characters, inside InnoDB's 3072-byte limit at
// four bytes a character.
func stateDDL(schema string, f flavor) string {
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
  dest_table VARCHAR(255) NOT NULL,
  source VARCHAR(512) NOT NULL,
  cursor_column VARCHAR(255) NOT NULL DEFAULT '',
  watermark VARCHAR(1024) NOT NULL DEFAULT '',
  position VARCHAR(1024) NOT NULL DEFAULT '',
  run_id VARCHAR(64) NOT NULL,
  %s BIGINT NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (dest_table, source)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s`, ident(stateRef(schema)), quoteIdent("rows"), f.binCollation())
}

// stateColumns are the columns of weir's state table.
var stateColumns = []string{"dest_table", "source", "cursor_column", "watermark", "position", "run_id", "rows", "updated_at"}

// rowQuerier is a pool or a session.
type rowQuerier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// checkStateTable refuses a _weir_state that is not weir's (another
// tool's table of that name) before a row moves, rather than failing on
// its columns after the copy. A missing table is fine: weir creates it.
func checkStateTable(ctx context.Context, q rowQuerier, schema string) error {
	t := stateRef(schema)
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, schema, StateTable)
	if err != nil {
		return fmt.Errorf("check %s: %w", t, err)
	}
	defer rows.Close()
	var have []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return fmt.Errorf("check %s: %w", t, err)
		}
		have = append(have, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check %s: %w", t, err)
	}
	return routes.CheckStateColumns(t, have, stateColumns)
}

// execer is a session or a transaction.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func saveState(ctx context.Context, x execer, dest routes.TableRef, s routes.State) error {
	q := fmt.Sprintf(`INSERT INTO %s (dest_table, source, cursor_column, watermark, position, run_id, %s, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE cursor_column = VALUES(cursor_column), watermark = VALUES(watermark),
  position = VALUES(position), run_id = VALUES(run_id), %[2]s = VALUES(%[2]s), updated_at = VALUES(updated_at)`,
		ident(stateRef(dest.Schema)), quoteIdent("rows"))
	_, err := x.ExecContext(ctx, q, dest.Name, s.SourceID, s.Cursor, s.Watermark, s.Position, s.RunID, s.Rows)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

// LoadState returns what the last commit into table from sourceID saved.
// A replace whose run died between its swap and its state write left the
// state in the table's comment (see Commit); that pending state is newer
// than the row and is returned instead.
func (e *Endpoint) LoadState(ctx context.Context, table routes.TableRef, sourceID string) (routes.State, bool, error) {
	table, err := e.qualify(table)
	if err != nil {
		return routes.State{}, false, err
	}
	if s, ok := e.pendingState(ctx, table); ok && s.SourceID == sourceID {
		return s, true, nil
	}
	if !e.tableExists(ctx, stateRef(table.Schema)) {
		return routes.State{}, false, nil
	}
	if err := checkStateTable(ctx, e.db, table.Schema); err != nil {
		return routes.State{}, false, err
	}
	s := routes.State{SourceID: sourceID}
	q := fmt.Sprintf(`SELECT cursor_column, watermark, position, run_id, %s FROM %s WHERE dest_table = ? AND source = ?`,
		quoteIdent("rows"), ident(stateRef(table.Schema)))
	err = e.db.QueryRowContext(ctx, q, table.Name, sourceID).Scan(&s.Cursor, &s.Watermark, &s.Position, &s.RunID, &s.Rows)
	if errors.Is(err, sql.ErrNoRows) {
		return routes.State{}, false, nil
	}
	if err != nil {
		return routes.State{}, false, fmt.Errorf("load state of %s: %w", table, err)
	}
	return s, true, nil
}

func (e *Endpoint) tableExists(ctx context.Context, t routes.TableRef) bool {
	var n int
	err := e.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, t.Schema, t.Name).Scan(&n)
	return err == nil && n > 0
}

// encodeState packs a state into a table comment (a replace carries its
// state through the RENAME in the comment; see Commit).
func encodeState(s routes.State) string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeState(text string) (routes.State, bool) {
	var s routes.State
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return routes.State{}, false
	}
	return s, true
}

// destMark reads the staging comment a replace left on the table it swapped
// in (cleared when the replace has finished).
func (e *Endpoint) destMark(ctx context.Context, table routes.TableRef) (stageMark, bool) {
	var comment string
	err := e.db.QueryRowContext(ctx, `SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, table.Schema, table.Name).Scan(&comment)
	if err != nil {
		return stageMark{}, false
	}
	m, ok := parseStageComment(table.Name, comment)
	return m, ok && m.dest == ident(table)
}

// pendingState reads the state a replace left in table's comment.
func (e *Endpoint) pendingState(ctx context.Context, table routes.TableRef) (routes.State, bool) {
	m, ok := e.destMark(ctx, table)
	if !ok || m.state == "" {
		return routes.State{}, false
	}
	return decodeState(m.state)
}

// rollForward finishes a replace that died after its swap: it saves the
// state the table's comment carries (if it fits there), then clears the
// comment (dropStale has dropped the replaced table it names). It runs
// under the lock, before this run touches anything.
func (st *stage) rollForward(ctx context.Context) error {
	m, ok := st.e.destMark(ctx, st.dest)
	if !ok {
		return nil
	}
	if s, ok := decodeState(m.state); ok && m.state != "" {
		if err := st.exec(ctx, stateDDL(st.dest.Schema, st.e.flavor)); err != nil {
			return err
		}
		if err := checkStateTable(ctx, st.lock.conn, st.dest.Schema); err != nil {
			return err
		}
		if err := saveState(ctx, st.lock.conn, st.dest, s); err != nil {
			return fmt.Errorf("finish the replace of run %s: %w", s.RunID, err)
		}
	}
	return st.exec(ctx, "ALTER TABLE "+ident(st.dest)+" COMMENT = ''")
}
