package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes"
)

// Scheme is the URL scheme of this route; "postgresql" is an alias.
const Scheme = "postgres"

// NativeFormat names PostgreSQL's binary COPY stream.
const NativeFormat = "postgres/binary-copy"

// modes are the destination modes besides replace (routes.SchemeInfo).
var modes = []routes.Mode{routes.ModeAppend, routes.ModeMerge}

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true, Destination: true, Capture: true, Modes: modes}, open)
	routes.RegisterScheme(routes.SchemeInfo{Name: "postgresql", Source: true, Destination: true, Capture: true, Modes: modes, AliasOf: Scheme}, open)
}

// Endpoint is a PostgreSQL database as a source and a destination.
type Endpoint struct {
	pool *pgxpool.Pool
	url  *routes.URL
	snap snapshots
}

var (
	_ routes.Source      = (*Endpoint)(nil)
	_ routes.Destination = (*Endpoint)(nil)
	_ routes.StateReader = (*Endpoint)(nil)
	_ routes.StateLister = (*Endpoint)(nil)
)

// sessionParams are the settings of every connection weir opens to
// PostgreSQL, over the role's, the database's and the URL's own (ALTER
// ROLE … SET, ALTER DATABASE … SET): the text weir reads back is printed
// under them — pgoutput's values, a cursor's or key's ::text. A role with
// extra_float_digits = 0 printed 0.30000000000000004 as 0.3 (the WAL
// landed it so, exit 0), DateStyle 'SQL, DMY' printed 2 January as
// 02/01/2024, which the destination read as 1 February; the interval
// reader (routes.ParseInterval) reads IntervalStyle postgres.
var sessionParams = map[string]string{"DateStyle": "ISO, MDY", "IntervalStyle": "postgres", "extra_float_digits": "3"}

// Session sets sessionParams in a connection's startup parameters, which
// take precedence over a role's or database's settings.
func Session(runtimeParams map[string]string) {
	for k, v := range sessionParams {
		for p := range runtimeParams { // a URL's own, in any case (DateStyle, datestyle)
			if strings.EqualFold(p, k) {
				delete(runtimeParams, p)
			}
		}
		runtimeParams[k] = v
	}
}

// maxConns leaves room for the widest budget plus the lock and snapshot
// connections.
const maxConns = 40

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	cfg, err := pgxpool.ParseConfig(u.Raw())
	if err != nil {
		return nil, routes.BadInput("postgres URL %s: %s", u, routes.Scrub(err.Error(), u.Password()))
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.Tracer = sqlTracer{u}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "weir"
	}
	Session(cfg.ConnConfig.RuntimeParams)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, connectErr(u, err)
	}
	return &Endpoint{pool: pool, url: u}, nil
}

// Close releases every connection.
func (e *Endpoint) Close() error {
	e.snap.closeAll()
	e.pool.Close()
	return nil
}

// connectErr marks refused credentials, unknown databases and refused URL
// parameters as bad input: retrying will not help, fixing the URL will.
func connectErr(u *routes.URL, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "28") || pgErr.Code == "3D000") {
		return fmt.Errorf("%w: connect: %s (check the user, password and database in the URL)", routes.ErrBadInput, routes.Scrub(pgErr.Message, u.Password()))
	}
	// An unknown URL parameter is sent as a setting the server refuses
	// (42704), or a setting's value is refused (22023).
	if errors.As(err, &pgErr) && (pgErr.Code == "42704" || pgErr.Code == "22023") {
		return fmt.Errorf("%w: connect: %s (check the URL's query parameters)", routes.ErrBadInput, routes.Scrub(pgErr.Message, u.Password()))
	}
	return fmt.Errorf("connect: %w", err) // routes.Open names the URL and scrubs the text
}

// ident quotes a table reference; an empty schema stays unqualified.
func ident(t routes.TableRef) string {
	if t.Schema == "" {
		return pgx.Identifier{t.Name}.Sanitize()
	}
	return pgx.Identifier{t.Schema, t.Name}.Sanitize()
}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

// quoteLiteral renders s as a SQL string literal (standard_conforming_strings).
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}

// CheckCapture reports whether log_based can read this server's WAL:
// wal_level=logical and a role that may replicate (weir conns test).
func (e *Endpoint) CheckCapture(ctx context.Context) (bool, string, error) {
	var level string
	var repl bool
	err := e.pool.QueryRow(ctx, `SELECT current_setting('wal_level'), rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&level, &repl)
	switch {
	case err != nil:
		return false, "", fmt.Errorf("check capture: %w", err)
	case level != "logical":
		return false, "wal_level=" + level + " (log_based needs wal_level=logical: set it and restart the server)", nil
	case !repl:
		return false, "wal_level=logical, but the user may not replicate (ALTER ROLE … REPLICATION)", nil
	}
	return true, "wal_level=logical", nil
}
