package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // FileIO for s3:// warehouses (only AWS: no GCS or Azure SDK)
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for catalogs on PostgreSQL
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", pure Go

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// Scheme is the URL scheme of a SQL catalog (SQLite or PostgreSQL);
// RESTScheme that of a REST catalog.
const (
	Scheme     = "iceberg"
	RESTScheme = "iceberg+rest"
)

// DefaultNamespace holds tables named without a namespace.
const DefaultNamespace = "default"

// catalogName is the catalog_name the SQL catalog stores on its rows.
const catalogName = "weir"

// modes are the destination modes besides replace (routes.SchemeInfo).
var modes = []routes.Mode{routes.ModeAppend, routes.ModeMerge}

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true, Destination: true, Modes: modes, OfflineSchema: offlineSchema, WriterChunks: routes.ParquetWriterChunks}, open)
	routes.RegisterScheme(routes.SchemeInfo{Name: RESTScheme, Source: true, Destination: true, Modes: modes, AliasOf: Scheme, WriterChunks: routes.ParquetWriterChunks}, open)
}

// Endpoint is one Iceberg catalog as a source and a destination.
type Endpoint struct {
	cfg  *config
	url  *routes.URL
	cat  catalog.Catalog
	db   *sql.DB // the SQL catalog's database; nil for REST
	lock locker
}

var (
	_ routes.Source       = (*Endpoint)(nil)
	_ routes.Destination  = (*Endpoint)(nil)
	_ routes.StateReader  = (*Endpoint)(nil)
	_ routes.CursorSource = (*Endpoint)(nil)
	_ routes.TableLister  = (*Endpoint)(nil)
)

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	cfg, err := parseConfig(u)
	if err != nil {
		return nil, err
	}
	// Its data files are zstd Parquet written by iceberg-go through arrow-go's
	// codec table: the lean encoders keep a pipe's memory bounded.
	fileformat.UseLeanZstd()
	e := &Endpoint{cfg: cfg, url: u}
	if cfg.catalog == "rest" {
		err = e.openREST(ctx)
	} else {
		err = e.openSQL(ctx)
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Endpoint) openSQL(ctx context.Context) error {
	driver, dsn, dialect := "pgx", e.cfg.uri, sqlcat.Postgres
	if e.cfg.dialect == "sqlite" {
		if err := os.MkdirAll(filepath.Dir(e.cfg.uri), 0o755); err != nil {
			return fmt.Errorf("catalog directory: %w", err)
		}
		driver, dialect = "sqlite", sqlcat.SQLite
		dsn = "file:" + e.cfg.uri + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return fmt.Errorf("open catalog database: %w", err)
	}
	e.db = db
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect catalog database: %w", err)
	}
	props := iceberg.Properties{"warehouse": e.cfg.warehouse}
	for k, v := range e.cfg.props {
		props[k] = v
	}
	cat, err := sqlcat.NewCatalog(catalogName, db, dialect, props)
	if err != nil {
		return fmt.Errorf("sql catalog: %w", err)
	}
	e.cat = cat
	e.lock, err = newRowLock(ctx, db, e.cfg.dialect, e.cfg.lease)
	return err
}

func (e *Endpoint) openREST(ctx context.Context) error {
	opts := []rest.Option{rest.WithAdditionalProps(e.cfg.props)}
	if e.cfg.warehouse != "" {
		opts = append(opts, rest.WithWarehouseLocation(e.cfg.warehouse))
	}
	cat, err := rest.NewCatalog(ctx, catalogName, e.cfg.uri, opts...)
	if err != nil {
		return fmt.Errorf("rest catalog: %w", err)
	}
	e.cat = cat
	e.lock = &propertyLock{e: e}
	return nil
}

// Close releases the catalog and its database.
func (e *Endpoint) Close() error {
	var errs []error
	if c, ok := e.cat.(catalog.Closer); ok {
		errs = append(errs, c.Close())
	}
	if e.db != nil {
		errs = append(errs, e.db.Close())
	}
	return errors.Join(errs...)
}

// ident is the catalog identifier of a table: namespace.table, the
// namespace defaulting to DefaultNamespace.
func ident(t routes.TableRef) table.Identifier {
	ns := t.Schema
	if ns == "" {
		ns = DefaultNamespace
	}
	return table.Identifier{ns, t.Name}
}

// loadTable loads a table; a missing one is routes.ErrNotFound.
func (e *Endpoint) loadTable(ctx context.Context, t routes.TableRef) (*table.Table, error) {
	tbl, err := e.cat.LoadTable(ctx, ident(t))
	if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
		return nil, fmt.Errorf("iceberg table %s: %w", t, routes.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load iceberg table %s: %w", t, err)
	}
	return tbl, nil
}

func (e *Endpoint) sourceID(t routes.TableRef) string {
	return e.cfg.identity + "#" + ident(t)[0] + "." + t.Name
}
