package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// transfer runs one table the way weir does (mysqltest.Transfer).
var transfer = mysqltest.Transfer

// fixtureURL is the fixture's server URL with extra query parameters.
func fixtureURL(f *mysqltest.Fixture, query string) string {
	if query == "" {
		return f.URL()
	}
	return f.URL() + "?" + query
}

// openEndpoint opens the fixture's server as a weir endpoint.
func openEndpoint(t *testing.T, f *mysqltest.Fixture, query string) *Endpoint {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	ep, err := routes.Open(ctx, fixtureURL(f, query))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return ep.(*Endpoint)
}

func ref(f *mysqltest.Fixture, name string) routes.TableRef {
	return routes.TableRef{Schema: f.Database, Name: name}
}

// queryStrings returns one text column of a query.
func queryStrings(t *testing.T, ctx context.Context, f *mysqltest.Fixture, q string, args ...any) []string {
	t.Helper()
	rows, err := f.DB.QueryContext(ctx, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s *string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			out = append(out, "NULL")
			continue
		}
		out = append(out, *s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, ctx context.Context, f *mysqltest.Fixture, table string) int {
	t.Helper()
	var n int
	if err := f.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}
