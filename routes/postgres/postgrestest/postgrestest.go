// Package postgrestest is the PostgreSQL fixture of the routes matrix: a
// per-test schema on the server named by WEIR_TEST_PG.
package postgrestest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes/routestest"
)

// Env names the variable holding the test server's URL.
const Env = "WEIR_TEST_PG"

// Fixture is one test's schema on the test server.
type Fixture struct {
	Pool   *pgxpool.Pool
	Schema string
	url    string
}

// New connects to WEIR_TEST_PG and creates a schema weir_t_<random>, dropped
// when the test ends.
func New(t testing.TB) *Fixture {
	t.Helper()
	url := routestest.ServerURL(t, Env)
	ctx := routestest.Context(t, time.Minute)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", Env, err)
	}
	f := &Fixture{Pool: pool, Schema: routestest.Name("weir_t"), url: url}
	f.Exec(t, ctx, "CREATE SCHEMA "+f.Schema)
	t.Cleanup(func() {
		ctx, cancel := routestest.CleanupContext()
		defer cancel()
		pool.Exec(ctx, "DROP SCHEMA "+f.Schema+" CASCADE")
		pool.Close()
	})
	return f
}

// Exec runs statements or fails the test.
func (f *Fixture) Exec(t testing.TB, ctx context.Context, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := f.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Hash returns an ordered md5 over every row's text form, the way the
// issues ask tables to be compared.
func (f *Fixture) Hash(t testing.TB, ctx context.Context, table, orderBy string) (string, int64) {
	t.Helper()
	var h *string
	var n int64
	q := fmt.Sprintf("SELECT md5(string_agg(x::text, '|' ORDER BY %s)), count(*) FROM %s x", orderBy, table)
	if err := f.Pool.QueryRow(ctx, q).Scan(&h, &n); err != nil {
		t.Fatalf("hash %s: %v", table, err)
	}
	if h == nil {
		return "", 0
	}
	return *h, n
}

// URL is the server URL; tables are schema-qualified.
func (f *Fixture) URL() string { return f.url }

// Ref qualifies a table with the fixture's schema.
func (f *Fixture) Ref(name string) string { return f.Schema + "." + name }

// Create makes the conformance table.
func (f *Fixture) Create(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, name text, amount numeric(12,2), ts timestamp, flag boolean)`, f.Ref(name)))
	f.Insert(t, ctx, name, rows)
}

// CreateKeyless makes a table of one nullable bigint column, id, with no
// primary key (routestest.SourceFixture).
func (f *Fixture) CreateKeyless(t testing.TB, ctx context.Context, name string, ids []*int64) {
	t.Helper()
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint)`, f.Ref(name)))
	src := pgx.CopyFromSlice(len(ids), func(i int) ([]any, error) { return []any{ids[i]}, nil })
	if _, err := f.Pool.CopyFrom(ctx, pgx.Identifier{f.Schema, name}, []string{"id"}, src); err != nil {
		t.Fatalf("insert into %s: %v", name, err)
	}
}

// Insert adds conformance rows.
func (f *Fixture) Insert(t testing.TB, ctx context.Context, name string, rows []routestest.Row) {
	t.Helper()
	src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := rows[i]
		return []any{r.ID, r.Name, r.Amount, r.TS, r.Flag}, nil
	})
	_, err := f.Pool.CopyFrom(ctx, pgx.Identifier{f.Schema, name}, []string{"id", "name", "amount", "ts", "flag"}, src)
	if err != nil {
		t.Fatalf("insert into %s: %v", name, err)
	}
}

// Read returns the table's rows by id.
func (f *Fixture) Read(t testing.TB, ctx context.Context, name string) ([]routestest.Row, bool) {
	t.Helper()
	var exists bool
	f.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, f.Ref(name)).Scan(&exists)
	if !exists {
		return nil, false
	}
	rows, err := f.Pool.Query(ctx, fmt.Sprintf(`SELECT id, name, amount::text, ts, flag::text::boolean FROM %s ORDER BY id`, f.Ref(name)))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (routestest.Row, error) {
		var r routestest.Row
		err := row.Scan(&r.ID, &r.Name, &r.Amount, &r.TS, &r.Flag)
		if r.TS != nil {
			u := r.TS.UTC()
			r.TS = &u
		}
		return r, err
	})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return out, true
}

// Staging lists staging tables left in the schema for name.
func (f *Fixture) Staging(t testing.TB, ctx context.Context, name string) []string {
	t.Helper()
	rows, err := f.Pool.Query(ctx, `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND relname LIKE '\_weir\_stage\_' || $2 || '%'`, f.Schema, name)
	if err != nil {
		t.Fatalf("list staging: %v", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("list staging: %v", err)
	}
	return names
}
