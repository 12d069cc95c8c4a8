package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// URL schemes of this route.
const (
	Scheme      = "clickhouse"       // native protocol, port 9000
	SchemeHTTP  = "clickhouse+http"  // HTTP interface, port 8123
	SchemeHTTPS = "clickhouse+https" // HTTP interface over TLS, port 8443
)

// NativeFormat names the ClickHouse Native format stream a source relays.
const NativeFormat = "clickhouse/native"

// modes are the destination modes besides replace (routes.SchemeInfo).
var modes = []routes.Mode{routes.ModeAppend, routes.ModeMerge}

func init() {
	routes.RegisterScheme(routes.SchemeInfo{Name: Scheme, Source: true, Destination: true, Modes: modes}, open)
	routes.RegisterScheme(routes.SchemeInfo{Name: SchemeHTTP, Source: true, Destination: true, Modes: modes, AliasOf: Scheme}, open)
	routes.RegisterScheme(routes.SchemeInfo{Name: SchemeHTTPS, Source: true, Destination: true, Modes: modes, AliasOf: Scheme}, open)
}

// Endpoint is a ClickHouse database as a source and a destination.
type Endpoint struct {
	url     *routes.URL
	db      string
	opts    Options
	conn    conn      // the URL's transport
	http    *httpConn // the HTTP interface, for the Native relay
	native  bool      // conn is the native protocol
	version string
	feat    features

	relayMu    sync.Mutex
	relayState int // 0 unknown, 1 HTTP answers, 2 it does not
}

var (
	_ routes.Source      = (*Endpoint)(nil)
	_ routes.Destination = (*Endpoint)(nil)
	_ routes.StateReader = (*Endpoint)(nil)
)

func open(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
	pu := u.URL()
	o, err := parseOptions(pu.Query())
	if err != nil {
		return nil, err
	}
	db := strings.Trim(pu.Path, "/")
	if db == "" {
		db = DefaultDatabase
	}
	e := &Endpoint{url: u, db: db, opts: o, native: u.Scheme() == Scheme}
	e.http = newHTTPConn(pu, db, o, e.native)
	e.conn = e.http
	if e.native {
		if e.conn, err = dialNative(ctx, nativeOptions(pu, db, o)); err != nil {
			return nil, refusedLogin(err) // "connect: …"; routes.Open names the URL
		}
	}
	if err := e.probeServer(ctx); err != nil {
		e.Close()
		return nil, refusedLogin(fmt.Errorf("connect: %w", err))
	}
	return e, nil
}

// refusedLogin marks a refused user or password, or an unknown database,
// as bad input: retrying will not help, fixing the URL will.
// UNKNOWN_USER (192), WRONG_PASSWORD (193), REQUIRED_PASSWORD (194),
// IP_ADDRESS_NOT_ALLOWED (195), UNKNOWN_DATABASE (81),
// AUTHENTICATION_FAILED (516).
func refusedLogin(err error) error {
	switch errorCode(err) {
	case 192, 193, 194, 195, codeUnknownDatabase, 516:
		return fmt.Errorf("%w: %w (check the user, password and database in the URL)", routes.ErrBadInput, err)
	}
	return err
}

func (e *Endpoint) probeServer(ctx context.Context) error {
	row, ok, err := queryRow(ctx, e.conn, "SELECT version()")
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("SELECT version() returned no row")
	}
	e.version = row[0]
	e.feat = newFeatures(e.version)
	e.opts.maxDate, e.opts.maxDateTime = dateLimits(e.feat)
	return nil
}

// Location is the URL the endpoint was opened with: its database is
// where a table lands when no --dest-table or --dest-schema names one
// (routes.DestRef).
func (e *Endpoint) Location() *routes.URL { return e.url }

// Version is the server's version() string.
func (e *Endpoint) Version() string { return e.version }

// Protocol is the negotiated native protocol revision (0: ch-go's newest,
// or HTTP).
func (e *Endpoint) Protocol() int {
	if n, ok := e.conn.(*nativeConn); ok {
		return n.protocol
	}
	return 0
}

// Close releases every connection.
func (e *Endpoint) Close() error {
	if e.conn != e.http {
		e.conn.close()
	}
	return e.http.close()
}

// relayReady reports whether the HTTP interface answers, which the Native
// relay needs; it asks once per endpoint.
func (e *Endpoint) relayReady(ctx context.Context) bool {
	e.relayMu.Lock()
	defer e.relayMu.Unlock()
	if e.relayState == 0 {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		e.relayState = 2
		if e.http.ping(pctx) == nil {
			e.relayState = 1
		}
	}
	return e.relayState == 1
}

// ref fills in the endpoint's database for an unqualified table.
func (e *Endpoint) ref(t routes.TableRef) routes.TableRef {
	if t.Schema == "" {
		t.Schema = e.db
	}
	return t
}

func ident(t routes.TableRef) string { return quoteIdent(t.Schema) + "." + quoteIdent(t.Name) }

var (
	identEscaper   = strings.NewReplacer(`\`, `\\`, "`", "\\`")
	literalEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)
)

func quoteIdent(s string) string   { return "`" + identEscaper.Replace(s) + "`" }
func quoteLiteral(s string) string { return "'" + literalEscaper.Replace(s) + "'" }

func joinIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// nextNonEmpty skips empty batches; it passes io.EOF and errors through.
func nextNonEmpty(next batchSource) (arrow.RecordBatch, error) {
	for {
		b, err := next()
		if err != nil {
			return nil, err
		}
		if b.NumRows() > 0 {
			return b, nil
		}
		b.Release()
	}
}

// streamSource adapts a Stream to a batchSource: each batch is retained
// for the caller, and the stream's error ends it.
func streamSource(s routes.Stream) batchSource {
	return func() (arrow.RecordBatch, error) {
		if !s.Next() {
			if err := s.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		b := s.RecordBatch()
		b.Retain()
		return b, nil
	}
}
