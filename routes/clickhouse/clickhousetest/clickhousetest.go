// Package clickhousetest is the ClickHouse fixture of the routes matrix: a
// per-test database weir_t_<random> on the server named by
// WEIR_TEST_CLICKHOUSE (native) or WEIR_TEST_CLICKHOUSE_HTTP, dropped when
// the test ends. The fixture itself talks to the server over HTTP with
// TabSeparated text, independently of the route's own codecs.
package clickhousetest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/routestest"
)

// Env variables naming the test server: the native URL and the HTTP one.
const (
	Env     = "WEIR_TEST_CLICKHOUSE"
	EnvHTTP = "WEIR_TEST_CLICKHOUSE_HTTP"
)

// Fixture is one test's database on the test server.
type Fixture struct {
	DB   string
	url  string
	base url.URL // the HTTP interface
	user string
	pass string
}

// New uses the native URL of WEIR_TEST_CLICKHOUSE. Its HTTP interface is
// WEIR_TEST_CLICKHOUSE_HTTP's host (else port 8123 of the same host), and
// the fixture's URL names that port in http_port= so that weir's Native
// relay finds it too (the test server's is not on 8123).
func New(t testing.TB) *Fixture { return newFixture(t, Env) }

// NewHTTP uses the clickhouse+http:// URL of WEIR_TEST_CLICKHOUSE_HTTP.
func NewHTTP(t testing.TB) *Fixture { return newFixture(t, EnvHTTP) }

func newFixture(t testing.TB, env string) *Fixture {
	t.Helper()
	raw := routestest.ServerURL(t, env)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	f := &Fixture{DB: routestest.Name("weir_t"), url: raw, user: u.User.Username()}
	f.pass, _ = u.User.Password()
	f.base = url.URL{Scheme: "http", Host: u.Host, Path: "/"}
	if env == Env {
		f.base.Host = httpHost(t, u)
		if !u.Query().Has("http_port") {
			_, port, _ := net.SplitHostPort(f.base.Host)
			f.url = f.URLWith("http_port=" + port)
		}
	}
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, "CREATE DATABASE "+f.DB)
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		f.exec(ctx, "DROP DATABASE IF EXISTS "+f.DB)
	})
	return f
}

func httpHost(t testing.TB, native *url.URL) string {
	if raw := os.Getenv(EnvHTTP); raw != "" {
		if u, err := url.Parse(raw); err == nil {
			return u.Host
		}
	}
	return net.JoinHostPort(native.Hostname(), "8123")
}

// URL is the server URL weir opens; tables are database-qualified.
func (f *Fixture) URL() string { return f.url }

// URLWith returns the URL with extra query options, e.g. "lease=2s".
func (f *Fixture) URLWith(opts string) string {
	sep := "?"
	if strings.Contains(f.url, "?") {
		sep = "&"
	}
	return f.url + sep + opts
}

// Ref qualifies a table with the fixture's database.
func (f *Fixture) Ref(name string) string { return f.DB + "." + name }

// Exec runs statements or fails the test.
func (f *Fixture) Exec(t testing.TB, ctx context.Context, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if err := f.exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func (f *Fixture) exec(ctx context.Context, q string) error {
	_, err := f.post(ctx, q, nil)
	return err
}

// post runs q with body as data (INSERT) or q as the body (else).
func (f *Fixture) post(ctx context.Context, q string, body io.Reader) (string, error) {
	u := f.base
	params := url.Values{}
	if body != nil {
		params.Set("query", q)
	} else {
		body = strings.NewReader(q)
	}
	u.RawQuery = params.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(f.user, f.pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", strings.TrimSpace(string(b)))
	}
	return string(b), err
}

// Query runs q as TabSeparated and returns the fields of each row (nil for \N).
func (f *Fixture) Query(t testing.TB, ctx context.Context, q string) [][]*string {
	t.Helper()
	out, err := f.post(ctx, q+" FORMAT TabSeparated", nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if out == "" {
		return nil
	}
	var rows [][]*string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var row []*string
		for _, field := range strings.Split(line, "\t") {
			row = append(row, unescape(field))
		}
		rows = append(rows, row)
	}
	return rows
}

// Value runs a one-value query.
func (f *Fixture) Value(t testing.TB, ctx context.Context, q string) string {
	t.Helper()
	rows := f.Query(t, ctx, q)
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] == nil {
		t.Fatalf("%s: want one value, got %d rows", q, len(rows))
	}
	return *rows[0][0]
}

var tsvEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '0': 0, 'b': '\b', 'f': '\f', '\\': '\\', '\'': '\'', '"': '"'}

func unescape(s string) *string {
	if s == `\N` {
		return nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if c, ok := tsvEscapes[s[i+1]]; ok {
				b.WriteByte(c)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	out := b.String()
	return &out
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// Create makes the conformance table.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, name Nullable(String), amount Nullable(Decimal(12, 2)), ts Nullable(DateTime('UTC')), flag Nullable(UInt8)) ENGINE = MergeTree ORDER BY id", f.Ref(name)))
	f.Insert(t, ctx, name, rows)
}

// CreateKeyless makes a table of one Nullable(Int64) column, id, with no
// sorting key (routestest.SourceFixture).
func (f *Fixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	t.Helper()
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Nullable(Int64)) ENGINE = MergeTree ORDER BY tuple()", f.Ref(name)))
	var b strings.Builder
	for _, id := range ids {
		if id == nil {
			b.WriteString("\\N\n")
		} else {
			fmt.Fprintf(&b, "%d\n", *id)
		}
	}
	q := fmt.Sprintf("INSERT INTO %s (id) FORMAT TabSeparated", f.Ref(name))
	if _, err := f.post(ctx, q, strings.NewReader(b.String())); err != nil {
		t.Fatalf("insert into %s: %v", name, err)
	}
}

// Insert adds conformance rows.
func (f *Fixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	if len(rows) == 0 {
		return
	}
	var b strings.Builder
	null := func(p *string) string {
		if p == nil {
			return `\N`
		}
		return escape(*p)
	}
	for _, r := range rows {
		ts, flag := `\N`, `\N`
		if r.TS != nil {
			ts = r.TS.UTC().Format(time.DateTime)
		}
		if r.Flag != nil {
			flag = map[bool]string{false: "0", true: "1"}[*r.Flag]
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\n", r.ID, null(r.Name), null(r.Amount), ts, flag)
	}
	q := fmt.Sprintf("INSERT INTO %s (id, name, amount, ts, flag) FORMAT TabSeparated", f.Ref(name))
	if _, err := f.post(ctx, q, strings.NewReader(b.String())); err != nil {
		t.Fatalf("insert into %s: %v", name, err)
	}
}

// Read returns the table's rows by id, and false if it does not exist.
// Whatever types weir chose, values are rendered in the Row's shape;
// ReplacingMergeTree tables (merge mode) are read with FINAL.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	if !f.Exists(t, ctx, name) {
		return nil, false
	}
	final := "" // merged tables show their rows as readers should read them
	engine := fmt.Sprintf("SELECT engine FROM system.tables WHERE database = '%s' AND name = '%s'", f.DB, name)
	if strings.Contains(f.Value(t, ctx, engine), "Replacing") {
		final = " FINAL"
	}
	q := fmt.Sprintf("SELECT id, name, toString(amount), toUnixTimestamp(ts), toUInt8(flag) FROM %s%s ORDER BY id", f.Ref(name), final)
	var out []routestest.Row
	for _, v := range f.Query(t, ctx, q) {
		out = append(out, toRow(t, v))
	}
	return out, true
}

func toRow(t testing.TB, v []*string) routestest.Row {
	id, err := strconv.ParseInt(*v[0], 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", *v[0], err)
	}
	r := routestest.Row{ID: id, Name: v[1], Amount: v[2]}
	if v[3] != nil {
		sec, _ := strconv.ParseInt(*v[3], 10, 64)
		ts := time.Unix(sec, 0).UTC()
		r.TS = &ts
	}
	if v[4] != nil {
		b := *v[4] == "1"
		r.Flag = &b
	}
	return r
}

// Exists reports whether the table exists in the fixture's database.
func (f *Fixture) Exists(t testing.TB, ctx context.Context, name string) bool {
	q := fmt.Sprintf("SELECT count() FROM system.tables WHERE database = '%s' AND name = '%s'", f.DB, name)
	return f.Value(t, ctx, q) != "0"
}

// Staging lists staging (and lock) tables left for table name.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	q := fmt.Sprintf(`SELECT name FROM system.tables WHERE database = '%s' AND (startsWith(name, '_weir_stage_%s_') OR startsWith(name, '_weir_old_%s_') OR name = '_weir_lock_%s')`, f.DB, name, name, name)
	var names []string
	for _, r := range f.Query(t, ctx, q) {
		names = append(names, *r[0])
	}
	return names
}

var _ routestest.Fixture = (*Fixture)(nil)
