package postgres

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// tableIDSQL names a table by its cluster (system_identifier), database
// and relation OIDs: the same for every URL that reaches it, whatever the
// host spelling, user, parameters or search path (an unqualified name is
// resolved the way the server resolves it).
const tableIDSQL = `
SELECT s.system_identifier::text || '/' || d.oid::text || '/' || to_regclass($1)::oid::text
FROM pg_control_system() s, pg_database d
WHERE d.datname = current_database() AND to_regclass($1) IS NOT NULL`

// TableID asks the server which table t is (routes.TableIdentifier).
func (e *Endpoint) TableID(ctx context.Context, t routes.TableRef) (string, error) {
	var id string
	rows, err := e.pool.Query(ctx, tableIDSQL, ident(t))
	if err != nil {
		return "", fmt.Errorf("identify %s: %w", t, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("identify %s: %w", t, err)
		}
		return "", fmt.Errorf("table %s: %w", t, routes.ErrNotFound)
	}
	if err := rows.Scan(&id); err != nil {
		return "", fmt.Errorf("identify %s: %w", t, err)
	}
	return "postgres:" + id, nil
}
