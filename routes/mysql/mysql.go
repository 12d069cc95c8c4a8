package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/routes"
)

// Scheme is the URL scheme of this route; "mariadb" is an alias.
const Scheme = "mysql"

// SchemeMariaDB is the alias scheme for MariaDB servers.
const SchemeMariaDB = "mariadb"

// modes are the destination modes besides replace (routes.SchemeInfo).
var modes = []routes.Mode{routes.ModeAppend, routes.ModeMerge}

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true, Destination: true, Capture: true, Modes: modes}, open)
	routes.RegisterScheme(routes.SchemeInfo{Name: SchemeMariaDB, Source: true, Destination: true, Capture: true, Modes: modes, AliasOf: Scheme}, open)
}

// Endpoint is a MySQL or MariaDB database as a source and a destination.
type Endpoint struct {
	db     *sql.DB
	url    *routes.URL
	dbName string // the URL's database: the default for unqualified tables
	opts   options
	flavor flavor
}

var (
	_ routes.Source       = (*Endpoint)(nil)
	_ routes.Destination  = (*Endpoint)(nil)
	_ routes.StateReader  = (*Endpoint)(nil)
	_ routes.CursorSource = (*Endpoint)(nil)
	_ routes.TableLister  = (*Endpoint)(nil)
)

// maxConns leaves room for the widest budget plus lock connections.
const maxConns = 40

// sessionParams are set on every connection: UTC for TIMESTAMP columns,
// strict writes that keep a 0 in an AUTO_INCREMENT column, and network
// timeouts long enough for a pipe whose other end stalls (a slow
// destination behind a streaming SELECT, a slow source behind LOAD DATA).
var sessionParams = map[string]string{
	"time_zone":         "'+00:00'",
	"sql_mode":          "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO'",
	"net_write_timeout": "3600",
	"net_read_timeout":  "3600",
	"wait_timeout":      "86400",
}

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	cfg, opts, err := config(u)
	if err != nil {
		return nil, err
	}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, routes.BadInput("mysql URL %s: %s", u, routes.Scrub(err.Error(), u.Password()))
	}
	db := sql.OpenDB(loggingConnector{Connector: conn, u: u})
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	e := &Endpoint{db: db, url: u, dbName: cfg.DBName, opts: opts}
	if err := e.detectFlavor(ctx); err != nil {
		db.Close()
		return nil, connectErr(u, err)
	}
	return e, nil
}

// connectErr marks refused credentials (1045, 1044), an unknown database
// (1049) and refused URL parameters as bad input: retrying will not help,
// fixing the URL will.
func connectErr(u *routes.URL, err error) error {
	var myErr *driver.MySQLError
	if errors.As(err, &myErr) && (myErr.Number == 1045 || myErr.Number == 1044 || myErr.Number == 1049) {
		return fmt.Errorf("%w: connect: %s (check the user, password and database in the URL)", routes.ErrBadInput, routes.Scrub(myErr.Message, u.Password()))
	}
	// An unknown URL parameter is sent as a session variable the server
	// does not have (1193), or its value is refused (1231, 1232).
	if errors.As(err, &myErr) && (myErr.Number == 1193 || myErr.Number == 1231 || myErr.Number == 1232) {
		return fmt.Errorf("%w: connect %s: %s (check the URL's query parameters)", routes.ErrBadInput, u, routes.Scrub(myErr.Message, u.Password()))
	}
	return fmt.Errorf("connect: %w", err) // routes.Open scrubs the text
}

// Close releases every connection.
func (e *Endpoint) Close() error { return e.db.Close() }

// Location is the URL the endpoint was opened with: its database is
// where a table lands when no --dest-table or --dest-schema names one
// (routes.DestRef).
func (e *Endpoint) Location() *routes.URL { return e.url }

// flavor is what the server is: it picks the exact collation for staged
// text and the spelling of a few statements.
type flavor struct {
	mariadb bool
	version string
}

func (e *Endpoint) detectFlavor(ctx context.Context) error {
	var v string
	if err := e.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return err
	}
	e.flavor = flavor{mariadb: strings.Contains(strings.ToLower(v), "mariadb"), version: v}
	return nil
}

// binCollation compares text byte by byte without padding, so no two
// distinct source values collide in a key (MariaDB: utf8mb4_nopad_bin,
// MySQL 8: utf8mb4_0900_bin, MySQL 5.7: utf8mb4_bin).
func (f flavor) binCollation() string {
	switch {
	case f.mariadb:
		return "utf8mb4_nopad_bin"
	case strings.HasPrefix(f.version, "5."):
		return "utf8mb4_bin"
	}
	return "utf8mb4_0900_bin"
}

// sourceID is the identity state is keyed by: endpoint without secrets + table.
func (e *Endpoint) sourceID(t routes.TableRef) string {
	return e.url.Identity() + "#" + t.String()
}

// qualify fills in the URL's database for an unqualified table.
func (e *Endpoint) qualify(t routes.TableRef) (routes.TableRef, error) {
	if t.Schema != "" {
		return t, nil
	}
	if e.dbName == "" {
		return t, routes.BadInput("table %s: the URL %s names no database; write database.table", t, e.url)
	}
	t.Schema = e.dbName
	return t, nil
}

// ident quotes a table reference with backticks.
func ident(t routes.TableRef) string {
	if t.Schema == "" {
		return quoteIdent(t.Name)
	}
	return quoteIdent(t.Schema) + "." + quoteIdent(t.Name)
}

func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func joinIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// quoteLiteral renders s as a string literal. Our sessions never set
// NO_BACKSLASH_ESCAPES (see sessionParams), so backslashes escape.
var literalEscaper = strings.NewReplacer(`\`, `\\`, `'`, `''`, "\x00", `\0`, "\x1a", `\Z`)

func quoteLiteral(s string) string {
	return "'" + literalEscaper.Replace(s) + "'"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CheckCapture reports whether log_based can read this server's binlog:
// log_bin on, binlog_format=ROW, binlog_row_image=FULL (weir conns test).
func (e *Endpoint) CheckCapture(ctx context.Context) (bool, string, error) {
	var logBin int
	var format, image string
	err := e.db.QueryRowContext(ctx, `SELECT @@log_bin, @@binlog_format, @@binlog_row_image`).Scan(&logBin, &format, &image)
	switch {
	case err != nil:
		return false, "", fmt.Errorf("check capture: %w", err)
	case logBin == 0:
		return false, "log_bin is off (log_based reads the binlog: turn it on in the server config)", nil
	case !strings.EqualFold(format, "ROW") || !strings.EqualFold(image, "FULL"):
		return false, fmt.Sprintf("binlog_format=%s, binlog_row_image=%s (log_based needs ROW and FULL)", format, image), nil
	}
	return true, "binlog_format=ROW", nil
}
