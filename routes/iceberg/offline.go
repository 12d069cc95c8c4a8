package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// offlineSchema reads a table's current schema (as scans produce it in
// Arrow) from a SQLite catalog and a file warehouse, read-only: nothing is
// created, no lock is taken, no server is asked (routes.OfflineSchema). ok
// is false when the schema is not knowable that way (another catalog, an
// object-store warehouse, no catalog file or no such table yet); why then
// says which.
func offlineSchema(ctx context.Context, u *routes.URL, t routes.TableRef) (s *arrow.Schema, ok bool, why string, err error) {
	cfg, err := parseConfig(u)
	if err != nil {
		return nil, false, "", err
	}
	if cfg.catalog != "sql" || cfg.dialect != "sqlite" {
		return nil, false, "its catalog is not a local SQLite file", nil
	}
	if _, err := os.Stat(cfg.uri); err != nil {
		return nil, false, "the catalog " + cfg.uri + " does not exist yet", nil
	}
	db, err := sql.Open("sqlite", "file:"+cfg.uri+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, false, "", fmt.Errorf("open catalog %s: %w", cfg.uri, err)
	}
	defer db.Close()
	id := ident(t)
	var loc string
	err = db.QueryRowContext(ctx, `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`,
		catalogName, id[0], id[1]).Scan(&loc)
	if errors.Is(err, sql.ErrNoRows) || (err != nil && strings.Contains(err.Error(), "no such table")) {
		return nil, false, "the table does not exist yet in " + cfg.uri, nil
	}
	if err != nil {
		return nil, false, "", fmt.Errorf("catalog %s: %w", cfg.uri, err)
	}
	path, isFile := strings.CutPrefix(loc, "file://")
	if !isFile && strings.Contains(loc, "://") {
		return nil, false, "its metadata is not a local file (" + loc + ")", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, "", fmt.Errorf("table %s: metadata: %w", t, err)
	}
	md, err := table.ParseMetadataBytes(data)
	if err != nil {
		return nil, false, "", fmt.Errorf("table %s: metadata %s: %w", t, loc, err)
	}
	as, err := arrowSchema(md.CurrentSchema())
	if err != nil {
		return nil, false, "", fmt.Errorf("table %s: %w", t, err)
	}
	return as, true, "", nil
}
