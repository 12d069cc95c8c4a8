package claims

import (
	"github.com/weirhq/weir/routes"

	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", pure Go
)

// openPostgres: the table lives in the URL's schema= (created if
// missing), else in the connection's search_path. The lease clock is the
// server's; Plan holds a transaction-scoped advisory lock on the task.
func openPostgres(ctx context.Context, u *url.URL) (Store, error) {
	q := u.Query()
	schema := q.Get("schema")
	q.Del("schema") // not a connection parameter: pgx would send it to the server
	u2 := *u
	u2.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u2.String())
	if err != nil {
		return nil, fmt.Errorf("claim store %s: %w", redact(u), err)
	}
	table := quoteIdent(TableName)
	if schema != "" {
		table = quoteIdent(schema) + "." + table
	}
	s := &sqlStore{db: db, table: table, dialect: dialect{
		nowMs:      "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
		skipLocked: "FOR UPDATE SKIP LOCKED",
		planLock:   "SELECT pg_advisory_xact_lock(hashtext('weir_claims:' || $1))",
		createLock: "SELECT pg_advisory_xact_lock(hashtext('weir_claims'))",
		param:      func(q string) string { return q },
	}}
	if err := s.create(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("claim store %s: %w", redact(u), err)
	}
	return s, nil
}

// openSQLite: sqlite:///path/claims.db, in WAL mode with immediate
// transactions and a busy timeout, so workers on one machine queue for
// the write lock. The lease clock is the machine's.
func openSQLite(ctx context.Context, u *url.URL) (Store, error) {
	path := u.Path
	if u.Host != "" { // sqlite://./claims.db
		path = u.Host + u.Path
	}
	if path == "" {
		return nil, fmt.Errorf("%w: claim store %s: no file path (sqlite:///path/claims.db)", routes.ErrBadInput, redact(u))
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("claim store %s: %w", redact(u), err)
	}
	s := &sqlStore{db: db, table: quoteIdent(TableName), dialect: dialect{
		nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
		param: sqliteParams,
	}}
	if err := s.create(ctx, ""); err != nil {
		db.Close()
		return nil, fmt.Errorf("claim store %s: %w", redact(u), err)
	}
	return s, nil
}

var dollarParam = regexp.MustCompile(`\$([0-9]+)`)

// sqliteParams spells $N as ?N, SQLite's numbered parameter ($N is a
// named one there, numbered by first appearance).
func sqliteParams(q string) string { return dollarParam.ReplaceAllString(q, "?$1") }

// quoteIdent quotes an identifier for PostgreSQL and SQLite alike.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
