package postgres

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

var _ routes.CursorSource = (*Endpoint)(nil)

// MaxCursor returns the cursor's maximum as text that sorts and compares
// back correctly whatever the session's DateStyle or TimeZone.
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
	}
	var max *string
	q := fmt.Sprintf("SELECT %s FROM %s", cursorText(c, "max("+quoteIdent(c.Name)+")"), ident(info.Ref))
	if err := e.pool.QueryRow(ctx, q).Scan(&max); err != nil {
		return "", false, fmt.Errorf("max of cursor %s.%s: %w", info.Ref, cursor, err)
	}
	if max == nil {
		return "", false, nil
	}
	return *max, true, nil
}

var _ routes.RangeCounter = (*Endpoint)(nil)

// CountRange counts the rows with after < cursor <= until, comparing the
// cursor text as a read's window does.
func (e *Endpoint) CountRange(ctx context.Context, info *routes.TableInfo, cursor, after, until string) (int64, error) {
	where, err := whereClause(routes.Range{Table: info}, routes.ReadOptions{Cursor: cursor, After: after, Until: until})
	if err != nil {
		return 0, err
	}
	var n int64
	q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", ident(info.Ref), where)
	if err := e.pool.QueryRow(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s past %s = %s: %w", info.Ref, cursor, after, err)
	}
	return n, nil
}

// NullCount counts the rows whose column is NULL.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	var n int64
	q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NULL", ident(info.Ref), quoteIdent(column))
	if err := e.pool.QueryRow(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	return n, nil
}

// cursorText renders col, a value of column c, as cursor text.
func cursorText(c routes.Column, col string) string {
	switch c.NativeType {
	case "timestamp with time zone":
		return fmt.Sprintf("to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'", col)
	case "date":
		return fmt.Sprintf("to_char(%s, 'YYYY-MM-DD')", col)
	}
	if len(c.NativeType) > 9 && c.NativeType[:9] == "timestamp" {
		return fmt.Sprintf("to_char(%s, 'YYYY-MM-DD HH24:MI:SS.US')", col)
	}
	return col + "::text"
}

var _ routes.TableLister = (*Endpoint)(nil)

// ListTables lists the ordinary and partitioned tables of a schema, sorted.
func (e *Endpoint) ListTables(ctx context.Context, schema string) ([]routes.TableRef, error) {
	rows, err := e.pool.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND c.relname NOT LIKE '\_weir\_%' ORDER BY 1`, schema)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", schema, err)
	}
	defer rows.Close()
	var out []routes.TableRef
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, routes.TableRef{Schema: schema, Name: name})
	}
	return out, rows.Err()
}
