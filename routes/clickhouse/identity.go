package clickhouse

import (
	"context"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// TableID asks the server which table t is (routes.TableIdentifier): its
// host name and the table's metadata file, an absolute path on that host,
// so the native and HTTP interfaces of one server agree. 18.16 has no
// server UUID.
func (e *Endpoint) TableID(ctx context.Context, t routes.TableRef) (string, error) {
	t = e.ref(t)
	q := fmt.Sprintf("SELECT hostName(), metadata_path FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	row, ok, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return "", fmt.Errorf("identify %s: %w", t, err)
	}
	if !ok {
		return "", fmt.Errorf("table %s: %w", t, routes.ErrNotFound)
	}
	return "clickhouse:" + row[0] + ":" + row[1], nil
}
