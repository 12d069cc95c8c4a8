//go:build cgo

package duck

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2"
)

// Options tune one database. Zero values are DuckDB's defaults.
type Options struct {
	MemoryLimit string // e.g. "2GB"; DuckDB spills to TempDir beyond it
	Threads     int
	TempDir     string // where DuckDB spills; default: <os temp dir>/weir-duckdb
}

// DB is one in-memory DuckDB database and its single connection. It is not
// safe for concurrent use: one model run owns one DB.
type DB struct {
	connector *duckdb.Connector
	db        *sql.DB
	conn      *sql.Conn
	handle    *cconn // the C connection behind conn, for the Arrow calls (bridge.go)
	mu        sync.Mutex
	views     map[string]func() // registered Arrow views and their release funcs
}

// Open starts an in-memory database with network extension loading off.
func Open(ctx context.Context, opts Options) (*DB, error) {
	connector, err := duckdb.NewConnector(dsn(opts), nil)
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	d := &DB{connector: connector, db: sql.OpenDB(connector), views: map[string]func(){}}
	if err := d.connect(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// dsn renders the options as DuckDB configuration settings.
func dsn(opts Options) string {
	q := url.Values{}
	q.Set("autoinstall_known_extensions", "false")
	q.Set("autoload_known_extensions", "false")
	if opts.MemoryLimit != "" {
		q.Set("memory_limit", opts.MemoryLimit)
	}
	if opts.Threads > 0 {
		q.Set("threads", strconv.Itoa(opts.Threads))
	}
	if opts.TempDir == "" {
		opts.TempDir = filepath.Join(os.TempDir(), "weir-duckdb")
	}
	q.Set("temp_directory", opts.TempDir)
	return "?" + q.Encode()
}

// connect pins one connection and its Arrow interface.
func (d *DB) connect(ctx context.Context) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect duckdb: %w", err)
	}
	d.conn = conn
	// Zoned timestamps come out as timestamp[us, tz=UTC] (not Etc/UTC).
	if _, err := conn.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		return fmt.Errorf("duckdb: set time zone: %w", err)
	}
	return conn.Raw(func(dc any) error {
		h, err := connHandle(dc)
		d.handle = &cconn{h: h}
		return err
	})
}

// Close releases the views, the connection and the database.
func (d *DB) Close() error {
	d.mu.Lock()
	for name, release := range d.views {
		release()
		delete(d.views, name)
	}
	d.mu.Unlock()
	var errs []error
	if d.handle != nil {
		d.handle.close()
	}
	if d.conn != nil {
		errs = append(errs, d.conn.Close())
	}
	errs = append(errs, d.db.Close(), d.connector.Close())
	return errors.Join(errs...)
}

// RegisterView makes r readable as the view name. The view can be scanned
// once and only SELECT * from it is correct (see the package doc): use
// Load. DB takes over r's reference and releases it on Close or DropView.
func (d *DB) RegisterView(name string, r array.RecordReader) error {
	release, err := registerArrowView(d.handle, name, r)
	r.Release() // the exported stream holds its own reference
	if err != nil {
		return fmt.Errorf("register view %s: %w", name, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.views[name]; ok {
		old()
	}
	d.views[name] = release
	return nil
}

// DropView drops a registered view and releases its reader.
func (d *DB) DropView(ctx context.Context, name string) error {
	d.mu.Lock()
	release, ok := d.views[name]
	delete(d.views, name)
	d.mu.Unlock()
	if !ok {
		return nil
	}
	defer release()
	return d.Exec(ctx, "DROP VIEW IF EXISTS "+Ident(name))
}

// Load copies r into the temporary table name (replacing it) and returns
// its row count: the table may be read any number of times, with any
// projection or filter. DB takes over r's reference.
func (d *DB) Load(ctx context.Context, name string, r array.RecordReader) (int64, error) {
	var names []string
	for _, f := range r.Schema().Fields() {
		names = append(names, f.Name)
	}
	if err := CheckNames(names); err != nil {
		r.Release()
		return 0, err
	}
	view := "_weir_load_" + name
	if err := d.RegisterView(view, newPump(r)); err != nil {
		return 0, err
	}
	defer d.DropView(context.WithoutCancel(ctx), view)
	q := fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM %s", Ident(name), Ident(view))
	if err := d.Exec(ctx, q); err != nil {
		return 0, fmt.Errorf("load %s: %w", name, err)
	}
	return d.Count(ctx, name)
}

// Count returns the rows of a table or view.
func (d *DB) Count(ctx context.Context, name string) (int64, error) {
	var n int64
	err := d.QueryRow(ctx, "SELECT count(*) FROM "+Ident(name), &n)
	return n, err
}

// Exec runs statements that return no rows.
func (d *DB) Exec(ctx context.Context, query string) error {
	if _, err := d.conn.ExecContext(ctx, query); err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	return nil
}

// QueryRow runs a query that returns one row and scans it into dest.
func (d *DB) QueryRow(ctx context.Context, query string, dest ...any) error {
	if err := d.conn.QueryRowContext(ctx, query).Scan(dest...); err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	return nil
}

// Query runs a query and returns its result as Arrow record batches, read
// lazily. The caller releases the reader before the next statement.
func (d *DB) Query(ctx context.Context, query string) (array.RecordReader, error) {
	r, err := queryArrow(ctx, d.handle, query)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	return r, nil
}

// Schema returns the Arrow schema of a query's result without reading it.
// Use it on tables only: over a registered view it would spend the view's
// one scan.
func (d *DB) Schema(ctx context.Context, query string) (*arrow.Schema, error) {
	r, err := d.Query(ctx, "SELECT * FROM ("+query+") LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}

// Reset drops every temporary table and view and releases the registered
// views, so the next run starts from an empty database.
func (d *DB) Reset(ctx context.Context) error {
	d.mu.Lock()
	for name, release := range d.views {
		release()
		delete(d.views, name)
	}
	d.mu.Unlock()
	rows, err := d.conn.QueryContext(ctx, `SELECT 'VIEW', view_name FROM duckdb_views() WHERE temporary AND NOT internal
UNION ALL SELECT 'TABLE', table_name FROM duckdb_tables() WHERE temporary`)
	if err != nil {
		return fmt.Errorf("duckdb: reset: %w", err)
	}
	var drops []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			rows.Close()
			return fmt.Errorf("duckdb: reset: %w", err)
		}
		drops = append(drops, "DROP "+kind+" IF EXISTS temp.main."+Ident(name))
	}
	rows.Close()
	for _, q := range drops {
		if err := d.Exec(ctx, q); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	return nil
}

// Describe binds a query without running it and returns its columns with
// DuckDB's type names.
func (d *DB) Describe(ctx context.Context, query string) ([]Column, error) {
	rows, err := d.conn.QueryContext(ctx, "DESCRIBE "+query)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	var out []Column
	for rows.Next() {
		cells := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("duckdb: %w", err)
		}
		out = append(out, Column{Name: fmt.Sprint(cells[0]), Type: fmt.Sprint(cells[1])})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	return out, nil
}
