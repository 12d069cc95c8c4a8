//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Plan returns the physical plan DuckDB would run for query, as text.
func (d *DB) Plan(ctx context.Context, query string) (string, error) {
	rows, err := d.conn.QueryContext(ctx, "EXPLAIN "+query)
	if err != nil {
		return "", fmt.Errorf("duckdb: explain: %w", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var kind, plan sql.NullString
		if err := rows.Scan(&kind, &plan); err != nil {
			return "", fmt.Errorf("duckdb: explain: %w", err)
		}
		b.WriteString(plan.String)
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}
