package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// tableIDSQL names a table by its server (host name, port and data
// directory: MariaDB has no server_uuid) and its database and name as the
// server stores them.
const tableIDSQL = `
SELECT CONCAT(@@hostname, ':', @@port, ':', @@datadir, '/', TABLE_SCHEMA, '/', TABLE_NAME)
FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`

// TableID asks the server which table t is (routes.TableIdentifier); an
// unqualified name is in the URL's database.
func (e *Endpoint) TableID(ctx context.Context, t routes.TableRef) (string, error) {
	t, err := e.qualify(t)
	if err != nil {
		return "", err
	}
	var id string
	err = e.db.QueryRowContext(ctx, tableIDSQL, t.Schema, t.Name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("table %s: %w", t, routes.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("identify %s: %w", t, err)
	}
	return "mysql:" + id, nil
}
