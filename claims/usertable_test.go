package claims_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/routes"
)

// TestStore_UserTableRefused: a _weir_claims that is not weir's (another
// tool's table of that name, in the PostgreSQL schema or the SQLite file
// the store names) is refused when the store opens, bad input naming it,
// and keeps its row: weir would plan its buckets into it. It used to be
// kept by CREATE TABLE IF NOT EXISTS and fail the first plan on its
// columns, exit 1.
func TestStore_UserTableRefused(t *testing.T) {
	for name, raw := range backends(t) {
		if name == "etcd" { // keys under a prefix, no table
			continue
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, table := userDB(t, name, raw)
			if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (task TEXT, note TEXT)"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" VALUES ('mine', 'keep me')"); err != nil {
				t.Fatal(err)
			}
			s, err := claims.Open(ctx, raw)
			if err == nil {
				_, err = s.Plan(ctx, "t", 2)
				s.Close()
			}
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), claims.TableName) || !strings.Contains(err.Error(), "bucket") {
				t.Fatalf("err = %v, want bad input naming %s and a missing column", err, claims.TableName)
			}
			t.Log(err)
			var n int
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE note = 'keep me'").Scan(&n); err != nil || n != 1 {
				t.Fatalf("the user's table: %d rows (%v)", n, err)
			}
		})
	}
}

// userDB connects to a store's database as the user would, and names
// the claim table there.
func userDB(t *testing.T, kind, raw string) (*sql.DB, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var db *sql.DB
	table := `"` + claims.TableName + `"`
	if kind == "sqlite" {
		db, err = sql.Open("sqlite", "file:"+u.Path)
	} else {
		q := u.Query()
		schema := q.Get("schema")
		q.Del("schema")
		u.RawQuery = q.Encode()
		if db, err = sql.Open("pgx", u.String()); err == nil {
			_, err = db.Exec(`CREATE SCHEMA "` + schema + `"`)
		}
		table = `"` + schema + `".` + table
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, table
}
