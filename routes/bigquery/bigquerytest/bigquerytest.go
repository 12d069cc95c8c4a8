// Package bigquerytest is the BigQuery fixture of the routes matrix: a
// per-test dataset weir_t_<random> in the project named by
// WEIR_TEST_BIGQUERY (the emulator scripts/services.sh starts), deleted
// with its tables when the test ends. The fixture talks to the server with
// the official client, independently of the route's own code.
package bigquerytest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	bq "cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/weirhq/weir/routes/routestest"
)

// Env names the test server's URL:
// bigquery://PROJECT/DATASET?endpoint=http://host:port&swap=dml.
const Env = "WEIR_TEST_BIGQUERY"

// Fixture is one test's dataset on the test server.
type Fixture struct {
	Project string
	Dataset string
	Client  *bq.Client
	url     url.URL // Env's URL with the fixture's dataset as its path
}

// New creates the test's dataset. WEIR_TEST_BIGQUERY unset fails the test
// under CI=true and skips it otherwise; set but unreachable fails it.
func New(t testing.TB) *Fixture {
	t.Helper()
	u := serverURL(t)
	q := u.Query()
	var opts []option.ClientOption
	if ep := q.Get("endpoint"); ep != "" {
		opts = append(opts, option.WithEndpoint(ep))
		if strings.HasPrefix(ep, "http://") {
			opts = append(opts, option.WithoutAuthentication())
		}
	}
	ctx := routestest.Context(t, time.Minute)
	client, err := bq.NewClient(ctx, u.Host, opts...)
	if err != nil {
		t.Fatalf("bigquery client: %v", err)
	}
	f := &Fixture{Project: u.Host, Dataset: routestest.Name("weir_t"), Client: client, url: *u}
	f.url.Path = "/" + f.Dataset
	if strings.HasPrefix(q.Get("endpoint"), "http://") && !q.Has("format") {
		// The emulator's Parquet loader mangles NUMERIC, DATE and
		// times; NDJSON is the format it loads right (docs/bigquery.md).
		q.Set("format", "json")
		f.url.RawQuery = q.Encode()
	}
	if err := client.Dataset(f.Dataset).Create(ctx, &bq.DatasetMetadata{}); err != nil {
		client.Close()
		t.Fatalf("create dataset %s: %v", f.Dataset, err)
	}
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		client.Dataset(f.Dataset).DeleteWithContents(ctx)
		client.Close()
	})
	return f
}

// serverURL is routestest.ServerURL for bigquery:// URLs, whose host is a
// project: the address dialled is the endpoint option's.
func serverURL(t testing.TB) *url.URL {
	t.Helper()
	raw := os.Getenv(Env)
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run the tests with scripts/test.sh, which starts the emulator and sets it", Env)
		}
		t.Skipf("%s is not set (scripts/env.sh sets it)", Env)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "bigquery" || u.Host == "" {
		t.Fatalf("%s=%s: want bigquery://PROJECT/DATASET?endpoint=…", Env, raw)
	}
	if ep := u.Query().Get("endpoint"); ep != "" {
		eu, err := url.Parse(ep)
		if err != nil || eu.Host == "" {
			t.Fatalf("%s: bad endpoint %q", Env, ep)
		}
		host := eu.Host
		if eu.Port() == "" {
			host = net.JoinHostPort(eu.Hostname(), map[string]string{"http": "80", "https": "443"}[eu.Scheme])
		}
		conn, err := net.DialTimeout("tcp", host, 3*time.Second)
		if err != nil {
			t.Fatalf("%s: endpoint %s is unreachable: %v (scripts/services.sh builds and starts the emulator)", Env, ep, err)
		}
		conn.Close()
	}
	return u
}

// URL is the URL weir opens: the server's, with the fixture's dataset.
func (f *Fixture) URL() string { return f.url.String() }

// URLWith returns the URL with extra query options, e.g. "lease=2s".
func (f *Fixture) URLWith(opts string) string {
	u := f.url
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += opts
	return u.String()
}

// Ref qualifies a table with the fixture's dataset.
func (f *Fixture) Ref(name string) string { return f.Dataset + "." + name }

// Ident is name quoted for SQL: `project.dataset.name`.
func (f *Fixture) Ident(name string) string {
	return "`" + f.Project + "." + f.Dataset + "." + name + "`"
}

// Create is not supported: BigQuery is a destination only.
func (f *Fixture) Create(t testing.TB, _ context.Context, name string, _ []routestest.Row) {
	t.Fatalf("bigquery is a destination only: cannot create source table %s", name)
}

// Insert is not supported: BigQuery is a destination only.
func (f *Fixture) Insert(t testing.TB, _ context.Context, name string, _ []routestest.Row) {
	t.Fatalf("bigquery is a destination only: cannot insert into source table %s", name)
}

// Exists reports whether the table exists in the fixture's dataset.
func (f *Fixture) Exists(t testing.TB, ctx context.Context, name string) bool {
	t.Helper()
	_, err := f.Client.Dataset(f.Dataset).Table(name).Metadata(ctx)
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == http.StatusNotFound {
		return false
	}
	if err != nil {
		t.Fatalf("table %s: %v", name, err)
	}
	return true
}

// Query runs q and returns its rows as the client decodes them.
func (f *Fixture) Query(t testing.TB, ctx context.Context, q string) [][]bq.Value {
	t.Helper()
	rows, err := f.query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return rows
}

func (f *Fixture) query(ctx context.Context, q string) ([][]bq.Value, error) {
	it, err := f.Client.Query(q).Read(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]bq.Value
	for {
		var row []bq.Value
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// Exec runs statements (DDL, DML) or fails the test.
func (f *Fixture) Exec(t testing.TB, ctx context.Context, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := f.query(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Read returns the conformance table's rows by id, and false if it does
// not exist. amount is read back as text with two decimals, ts as UTC
// (TIMESTAMP or DATETIME, whichever the source's type mapped to), flag
// from BOOL or INT64.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	if !f.Exists(t, ctx, name) {
		return nil, false
	}
	var out []routestest.Row
	for _, v := range f.Query(t, ctx, fmt.Sprintf("SELECT id, name, amount, ts, flag FROM %s ORDER BY id", f.Ident(name))) {
		r := routestest.Row{ID: Int(t, v[0])}
		if s, ok := v[1].(string); ok {
			r.Name = &s
		}
		if v[2] != nil {
			a := Decimal(t, v[2], 2)
			r.Amount = &a
		}
		if v[3] != nil {
			ts := Time(t, v[3])
			r.TS = &ts
		}
		switch b := v[4].(type) {
		case bool:
			r.Flag = &b
		case int64: // a source without booleans (ClickHouse's UInt8) loads INT64
			flag := b != 0
			r.Flag = &flag
		}
		out = append(out, r)
	}
	return out, true
}

// Int reads an INT64 value.
func Int(t testing.TB, v bq.Value) int64 {
	t.Helper()
	switch n := v.(type) {
	case int64:
		return n
	}
	t.Fatalf("INT64 value %v is a %T", v, v)
	return 0
}

// Decimal renders a NUMERIC/BIGNUMERIC value with scale decimals.
func Decimal(t testing.TB, v bq.Value, scale int) string {
	t.Helper()
	switch d := v.(type) {
	case *big.Rat:
		return d.FloatString(scale)
	case string:
		r, ok := new(big.Rat).SetString(d)
		if ok {
			return r.FloatString(scale)
		}
	}
	t.Fatalf("NUMERIC value %v is a %T", v, v)
	return ""
}

// Time reads a TIMESTAMP (an instant) or a DATETIME (taken as UTC).
func Time(t testing.TB, v bq.Value) time.Time {
	t.Helper()
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case civil.DateTime:
		return x.In(time.UTC)
	}
	t.Fatalf("time value %v is a %T", v, v)
	return time.Time{}
}

// Staging lists the staging and lock tables left for table name.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	var names []string
	for _, n := range f.Tables(t, ctx) {
		if strings.HasPrefix(n, "_weir_stage_"+name+"_") || n == "_weir_lock_"+name {
			names = append(names, n)
		}
	}
	return names
}

// Tables lists the dataset's tables.
func (f *Fixture) Tables(t testing.TB, ctx context.Context) []string {
	t.Helper()
	var names []string
	it := f.Client.Dataset(f.Dataset).Tables(ctx)
	for {
		tb, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return names
		}
		if err != nil {
			t.Fatalf("list tables of %s: %v", f.Dataset, err)
		}
		names = append(names, tb.TableID)
	}
}

var _ routestest.Fixture = (*Fixture)(nil)
