package weir_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// The destination's database comes from its URL (MySQL, ClickHouse) unless
// --dest-schema or --dest-table names one (routes.DestRef). Before, the
// source's schema named it: postgres public.x → mysql://…/shop ran
// CREATE DATABASE public.

// withDB is raw with its path replaced by /db ("" drops the database).
func withDB(t testing.TB, raw, db string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	if db != "" {
		u.Path = "/" + db
	}
	return u.String()
}

// createT makes table name in d with rows ids 1..n.
func createT(t testing.TB, ctx context.Context, d *cdctest.DB, name string, n int) {
	t.Helper()
	switch d.Kind {
	case "postgres":
		d.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, v text)", d.Table(name)))
	case "mysql":
		d.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id BIGINT PRIMARY KEY, v VARCHAR(20))", d.Table(name)))
	case "clickhouse":
		d.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, v String) ENGINE = MergeTree ORDER BY id", d.Table(name)))
	}
	addT(t, ctx, d, name, 1, n)
}

func addT(t testing.TB, ctx context.Context, d *cdctest.DB, name string, from, to int) {
	t.Helper()
	var vals []string
	for i := from; i <= to; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'v%d')", i, i))
	}
	d.Exec(t, ctx, "INSERT INTO "+d.Table(name)+" VALUES "+strings.Join(vals, ", "))
}

// databaseExists asks d's server whether a database (schema) named name exists.
func databaseExists(t testing.TB, ctx context.Context, d *cdctest.DB, name string) bool {
	t.Helper()
	switch d.Kind {
	case "mysql":
		return d.Query(t, ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '"+name+"'") != "0"
	case "clickhouse":
		return d.Query(t, ctx, "SELECT count() FROM system.databases WHERE name = '"+name+"'") != "0"
	}
	return d.Query(t, ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = '"+name+"'") != "0"
}

// dropStray drops a database the old rule made on dst, named like the
// source's (unique, test-made) schema, so a failing run leaks nothing.
func dropStray(t *testing.T, ctx context.Context, dst *cdctest.DB, srcSchema string) {
	t.Cleanup(func() {
		if !databaseExists(t, ctx, dst, srcSchema) || dst.Kind == "postgres" {
			return
		}
		q := "DROP DATABASE IF EXISTS " + srcSchema
		dst.Exec(t, context.WithoutCancel(ctx), q)
	})
}

var destKinds = []string{"mysql", "clickhouse"}

// TestTransfer_DestDatabaseFromURL: every source into every destination
// whose URL names a database, one table (replace, then append) and a whole
// schema (--schema): each lands in the URL's database; none named like the
// source's schema is created.
func TestTransfer_DestDatabaseFromURL(t *testing.T) {
	ctx := routestest.Context(t, 4*time.Minute)
	for _, sk := range []string{"postgres", "mysql", "clickhouse"} {
		for _, dk := range destKinds {
			t.Run(sk+"_to_"+dk, func(t *testing.T) {
				src, dst := cdctest.Open(t, ctx, sk), cdctest.Open(t, ctx, dk)
				dropStray(t, ctx, dst, src.Schema)
				for _, name := range []string{"a", "b"} {
					createT(t, ctx, src, name, 5)
				}
				durl := withDB(t, dst.URL, dst.Schema)
				cols := []string{"id", "v"}

				rep, err := weir.Transfer(ctx, src.URL, durl, weir.TransferOptions{Tables: []string{src.Schema + ".a"}})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := rep.Tables[0].DestTable, dst.Schema+".a"; got != want {
					t.Fatalf("landed as %s, want %s (the URL's database)", got, want)
				}
				addT(t, ctx, src, "a", 6, 8)
				if _, err := weir.Transfer(ctx, src.URL, durl, weir.TransferOptions{Tables: []string{src.Schema + ".a"}, Mode: routes.ModeAppend}); err != nil {
					t.Fatalf("append: %v", err)
				}
				if d, s := dst.Hash(t, ctx, "a", cols, "id"), src.Hash(t, ctx, "a", cols, "id"); d != s || !strings.HasPrefix(d, "8:") {
					t.Fatalf("%s.a = %s, source %s", dst.Schema, d, s)
				}

				rep, err = weir.Transfer(ctx, src.URL, durl, weir.TransferOptions{Schema: src.Schema})
				if err != nil {
					t.Fatalf("--schema: %v", err)
				}
				for _, tr := range rep.Tables {
					if !strings.HasPrefix(tr.DestTable, dst.Schema+".") {
						t.Errorf("--schema: %s landed as %s, want it in %s", tr.Table, tr.DestTable, dst.Schema)
					}
				}
				if d, s := dst.Hash(t, ctx, "b", cols, "id"), src.Hash(t, ctx, "b", cols, "id"); d != s {
					t.Fatalf("--schema: %s.b = %s, source %s", dst.Schema, d, s)
				}
				if sk != dk && databaseExists(t, ctx, dst, src.Schema) {
					t.Fatalf("a database named like the source's schema %s was created on the destination", src.Schema)
				}
			})
		}
	}
}

// TestTransfer_DestDatabaseOverrides: --dest-schema and a qualified
// --dest-table win over the URL's database; an unqualified --dest-table
// lands in the URL's.
func TestTransfer_DestDatabaseOverrides(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src := cdctest.Open(t, ctx, "postgres")
	createT(t, ctx, src, "a", 3)
	for _, dk := range destKinds {
		t.Run(dk, func(t *testing.T) {
			inURL, other := cdctest.Open(t, ctx, dk), cdctest.Open(t, ctx, dk)
			durl := withDB(t, inURL.URL, inURL.Schema)
			for _, tc := range []struct {
				opts weir.TransferOptions
				want string
			}{
				{weir.TransferOptions{DestSchema: other.Schema}, other.Schema + ".a"},
				{weir.TransferOptions{DestTable: other.Schema + ".x"}, other.Schema + ".x"},
				{weir.TransferOptions{DestTable: "y"}, inURL.Schema + ".y"},
			} {
				tc.opts.Tables = []string{src.Schema + ".a"}
				rep, err := weir.Transfer(ctx, src.URL, durl, tc.opts)
				if err != nil {
					t.Fatalf("%+v: %v", tc.opts, err)
				}
				if got := rep.Tables[0].DestTable; got != tc.want {
					t.Errorf("%+v landed as %s, want %s", tc.opts, got, tc.want)
				}
				d := inURL
				if strings.HasPrefix(tc.want, other.Schema) {
					d = other
				}
				if h := d.Hash(t, ctx, strings.SplitN(tc.want, ".", 2)[1], []string{"id"}, "id"); !strings.HasPrefix(h, "3:") {
					t.Errorf("%s holds %s, want 3 rows", tc.want, h)
				}
			}
		})
	}
}

// TestTransfer_DestMySQLURLWithoutDatabase: a mysql:// URL without a
// database and no --dest-schema is bad input naming the fix; nothing is
// created. With --dest-schema it works.
func TestTransfer_DestMySQLURLWithoutDatabase(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	dropStray(t, ctx, dst, src.Schema)
	createT(t, ctx, src, "a", 3)
	bare := withDB(t, dst.URL, "")
	for _, mode := range []routes.Mode{routes.ModeReplace, routes.ModeLogBased} {
		o := weir.TransferOptions{Tables: []string{src.Schema + ".a"}, Mode: mode}
		_, err := weir.Transfer(ctx, src.URL, bare, o)
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "names no database") || !strings.Contains(err.Error(), "--dest-schema") {
			t.Fatalf("%s: err = %v, want bad input: names no database … --dest-schema", mode, err)
		}
	}
	if databaseExists(t, ctx, dst, src.Schema) {
		t.Fatalf("database %s was created", src.Schema)
	}
	rep, err := weir.Transfer(ctx, src.URL, bare, weir.TransferOptions{Tables: []string{src.Schema + ".a"}, DestSchema: dst.Schema})
	if err != nil || rep.Tables[0].DestTable != dst.Schema+".a" {
		t.Fatalf("with --dest-schema: %v, %+v", err, rep)
	}
}

// TestTransfer_DestDatabaseRefused: a user that may not create the
// database it would write in is bad input (exit 2) with a hint, not a
// failure to retry.
func TestTransfer_DestDatabaseRefused(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql")
	createT(t, ctx, src, "a", 3)
	user := routestest.Name("weir_u")
	dst.Exec(t, ctx, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw-"+user+"'")
	t.Cleanup(func() { dst.Exec(t, context.WithoutCancel(ctx), "DROP USER IF EXISTS '"+user+"'@'%'") })
	dst.Exec(t, ctx, "GRANT ALL ON `"+dst.Schema+"`.* TO '"+user+"'@'%'")
	u, _ := url.Parse(withDB(t, dst.URL, dst.Schema))
	u.User = url.UserPassword(user, "pw-"+user)
	missing := routestest.Name("weir_t")
	dropStray(t, ctx, dst, missing)
	_, err := weir.Transfer(ctx, src.URL, u.String(), weir.TransferOptions{Tables: []string{src.Schema + ".a"}, DestSchema: missing})
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "may not create") || !strings.Contains(err.Error(), "--dest-schema") {
		t.Fatalf("err = %v, want bad input: may not create … --dest-schema", err)
	}
	if strings.Contains(err.Error(), "pw-"+user) {
		t.Fatalf("the password is in the message: %v", err)
	}
	// The URL's own database works for the same user.
	if _, err := weir.Transfer(ctx, src.URL, u.String(), weir.TransferOptions{Tables: []string{src.Schema + ".a"}}); err != nil {
		t.Fatalf("into the granted database: %v", err)
	}
}

// TestTransfer_LogBasedDestDatabaseFromURL: log_based replicas and
// changelogs land in the URL's database too, bootstrap and next run.
func TestTransfer_LogBasedDestDatabaseFromURL(t *testing.T) {
	ctx := routestest.Context(t, 5*time.Minute)
	for _, sk := range []string{"postgres", "mysql"} {
		for _, dk := range destKinds {
			for _, changelog := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s_to_%s_changelog=%v", sk, dk, changelog), func(t *testing.T) {
					src, dst := cdctest.Open(t, ctx, sk), cdctest.Open(t, ctx, dk)
					dropStray(t, ctx, dst, src.Schema)
					createT(t, ctx, src, "a", 4)
					durl := withDB(t, dst.URL, dst.Schema)
					o := weir.TransferOptions{Tables: []string{src.Schema + ".a"}, Mode: routes.ModeLogBased, Changelog: changelog}
					t.Cleanup(func() { weir.ResetLogBased(context.WithoutCancel(ctx), src.URL, durl, o) })
					table := "a"
					if changelog {
						table = "a__current"
					}
					for run := 1; run <= 2; run++ {
						rep, err := weir.Transfer(ctx, src.URL, durl, o)
						if err != nil {
							t.Fatalf("run %d: %v", run, err)
						}
						if got := rep.Tables[0].DestTable; got != dst.Schema+".a" {
							t.Fatalf("run %d: landed as %s, want %s.a", run, got, dst.Schema)
						}
						want := src.Hash(t, ctx, "a", []string{"id", "v"}, "id")
						if got := dst.Hash(t, ctx, table, []string{"id", "v"}, "id"); got != want {
							t.Fatalf("run %d: %s.%s = %s, source %s", run, dst.Schema, table, got, want)
						}
						addT(t, ctx, src, "a", 10*run, 10*run+1)
					}
					if sk != dk && databaseExists(t, ctx, dst, src.Schema) {
						t.Fatalf("a database named like the source's schema %s was created", src.Schema)
					}
				})
			}
		}
	}
}
