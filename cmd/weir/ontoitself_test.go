package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// respell returns raw changed by f: the same server written another way.
func respell(t *testing.T, raw string, f func(u *url.URL)) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	f(u)
	return u.String()
}

func withHost(name string) func(*url.URL) {
	return func(u *url.URL) { u.Host = name + ":" + u.Port() }
}

// selfRuns runs each refused case (exit 2 naming the source table itself)
// and each copied case (exit 0).
func selfRuns(t *testing.T, refused, copied [][]string) {
	t.Helper()
	for _, args := range refused {
		code, msg := runErr(t, args...)
		if code != ExitBadInput || !strings.Contains(msg, "source table itself") {
			t.Errorf("weir %s: exit %d, want %d (the source table itself): %s", strings.Join(args, " "), code, ExitBadInput, msg)
		}
	}
	for _, args := range copied {
		if code, msg := runErr(t, args...); code != ExitOK {
			t.Errorf("weir %s: exit %d, want 0: %s", strings.Join(args, " "), code, msg)
		}
	}
}

// TestTransferCmd_OntoItselfAnySpelling: the destination is the source
// table whenever both reach the same table of the same server, however the
// URLs spell it — another host name for the loopback, another scheme of the
// same server (clickhouse and clickhouse+http, mysql and mariadb), another
// database in the URL with the table qualified, extra query parameters, a
// search path. Each such run exits 2 and the source table keeps its rows,
// index and trigger; a really different table is still copied.
func TestTransferCmd_OntoItselfAnySpelling(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		ctx := routestest.Context(t, 3*time.Minute)
		pg := postgrestest.New(t)
		pg.Create(t, ctx, "t", routestest.Rows(1, 40))
		tbl := pg.Ref("t")
		pg.Exec(t, ctx,
			"CREATE INDEX t_name_idx ON "+tbl+" (name)",
			"CREATE FUNCTION "+pg.Schema+".t_touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$",
			"CREATE TRIGGER t_touch BEFORE INSERT ON "+tbl+" FOR EACH ROW EXECUTE FUNCTION "+pg.Schema+".t_touch()")
		want, _ := pg.Hash(t, ctx, tbl, "id")
		src := pg.URL()
		local := respell(t, src, withHost("localhost"))
		scheme := respell(t, src, func(u *url.URL) { u.Scheme = "postgresql" })
		params := respell(t, local, func(u *url.URL) {
			q := u.Query()
			q.Set("application_name", "weir_self")
			q.Set("connect_timeout", "10")
			u.RawQuery = q.Encode()
		})
		path := respell(t, local, func(u *url.URL) { q := u.Query(); q.Set("search_path", pg.Schema); u.RawQuery = q.Encode() })
		other := pg.Schema + "_other"
		t.Cleanup(func() { pg.Pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+other+" CASCADE") })
		selfRuns(t, [][]string{
			{"transfer", src, local, "--table", tbl},
			{"transfer", src, scheme, "--table", tbl, "--mode", "append"},
			{"transfer", src, params, "--table", tbl, "--dest-table", tbl},
			{"transfer", src, path, "--table", tbl, "--dest-table", "t"},
			{"transfer", path, local, "--table", "t", "--dest-schema", pg.Schema},
			{"transfer", local, src, "--table", tbl, "--mode", "merge"},
		}, [][]string{
			{"transfer", src, local, "--table", tbl, "--dest-schema", other},
		})
		var idx, trg int
		pg.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 't_name_idx'`, pg.Schema).Scan(&idx)
		pg.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = 't_touch' AND tgrelid = $1::regclass`, tbl).Scan(&trg)
		if idx != 1 || trg != 1 {
			t.Errorf("the source table lost its index (%d) or trigger (%d)", idx, trg)
		}
		if got, _ := pg.Hash(t, ctx, tbl, "id"); got != want {
			t.Error("the source table's rows changed")
		}
		if got, _ := pg.Hash(t, ctx, other+".t", "id"); got != want {
			t.Error("the copy into another schema differs from the source")
		}
	})
	t.Run("mysql", func(t *testing.T) {
		ctx := routestest.Context(t, 3*time.Minute)
		my := mysqltest.New(t)
		my.Create(t, ctx, "t", routestest.Rows(1, 40))
		db, tbl := my.Database, my.Ref("t")
		other := db + "_o"
		my.Exec(t, ctx,
			"CREATE INDEX t_name_idx ON "+tbl+" (name(10))",
			"CREATE TRIGGER t_touch BEFORE INSERT ON "+tbl+" FOR EACH ROW SET NEW.name = NEW.name",
			"CREATE DATABASE "+other)
		t.Cleanup(func() { my.DB.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+other) })
		want, n := my.Hash(t, ctx, tbl, "id", "id", "name")
		inDB := func(raw, name string) string { return respell(t, raw, func(u *url.URL) { u.Path = "/" + name }) }
		src := inDB(my.URL(), db)
		local := respell(t, src, withHost("localhost"))
		selfRuns(t, [][]string{
			{"transfer", src, inDB(src, other), "--table", "t", "--dest-table", tbl},
			{"transfer", src, local, "--table", "t"},
			{"transfer", src, inDB(local, other), "--table", tbl, "--dest-schema", db},
			{"transfer", inDB(src, ""), local, "--table", tbl, "--mode", "append"},
			{"transfer", src, respell(t, inDB(src, other), func(u *url.URL) { u.Scheme = "mariadb" }), "--table", "t", "--dest-table", tbl, "--mode", "merge"},
		}, [][]string{
			{"transfer", src, inDB(local, other), "--table", "t"},
		})
		var idx, trg int
		my.DB.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 't' AND INDEX_NAME = 't_name_idx'`, db).Scan(&idx)
		my.DB.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? AND TRIGGER_NAME = 't_touch'`, db).Scan(&trg)
		if idx != 1 || trg != 1 {
			t.Errorf("the source table lost its index (%d) or trigger (%d)", idx, trg)
		}
		if got, m := my.Hash(t, ctx, tbl, "id", "id", "name"); got != want || m != n {
			t.Errorf("the source table's rows changed: %d rows, want %d", m, n)
		}
		if got, _ := my.Hash(t, ctx, other+".t", "id", "id", "name"); got != want {
			t.Error("the copy into another database differs from the source")
		}
	})
	t.Run("clickhouse", func(t *testing.T) {
		ctx := routestest.Context(t, 3*time.Minute)
		ch := clickhousetest.New(t)
		ch.Create(t, ctx, "t", routestest.Rows(1, 40))
		db, tbl := ch.DB, ch.Ref("t")
		other := db + "_o"
		ch.Exec(t, ctx, "CREATE DATABASE "+other)
		t.Cleanup(func() { ch.Exec(t, context.Background(), "DROP DATABASE IF EXISTS "+other) })
		ddl := "SELECT create_table_query FROM system.tables WHERE database = '" + db + "' AND name = 't'"
		wantDDL, wantN := ch.Value(t, ctx, ddl), ch.Value(t, ctx, "SELECT count() FROM "+tbl)
		inDB := func(raw, name string) string { return respell(t, raw, func(u *url.URL) { u.Path = "/" + name }) }
		src := inDB(ch.URL(), db)
		httpURL := respell(t, src, func(u *url.URL) {
			u.Scheme = "clickhouse+http"
			u.Host = u.Hostname() + ":" + u.Query().Get("http_port")
			u.RawQuery = ""
		})
		local := respell(t, src, withHost("localhost"))
		selfRuns(t, [][]string{
			{"transfer", src, httpURL, "--table", "t"},
			{"transfer", src, inDB(httpURL, "default"), "--table", "t", "--dest-table", tbl},
			{"transfer", src, inDB(local, other), "--table", tbl, "--dest-schema", db},
			{"transfer", httpURL, local, "--table", tbl, "--mode", "append"},
		}, [][]string{
			{"transfer", src, inDB(httpURL, other), "--table", "t"},
		})
		if got := ch.Value(t, ctx, ddl); got != wantDDL {
			t.Errorf("the source table was replaced:\n%s\nwas\n%s", got, wantDDL)
		}
		if got := ch.Value(t, ctx, "SELECT count() FROM "+tbl); got != wantN {
			t.Errorf("the source table has %s rows, want %s", got, wantN)
		}
		if got := ch.Value(t, ctx, "SELECT count() FROM "+other+".t"); got != wantN {
			t.Errorf("the copy into another database has %s rows, want %s", got, wantN)
		}
	})
	t.Run("file", func(t *testing.T) {
		dir := t.TempDir()
		root := filepath.Join(dir, "d")
		if err := os.MkdirAll(filepath.Join(root, "t"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "t", "a.csv"), []byte("id,name\n1,a\n2,b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(root, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		files := func() []string {
			var out []string
			filepath.WalkDir(filepath.Join(root, "t"), func(p string, d os.DirEntry, err error) error {
				out = append(out, p)
				return nil
			})
			return out
		}
		want := strings.Join(files(), ",")
		src := "file://" + root
		selfRuns(t, [][]string{
			{"transfer", src, src + "/", "--table", "t", "--mode", "append", "--cursor", "id"},
			{"transfer", src, filepath.Join(dir, "link"), "--table", "t", "--mode", "append", "--cursor", "id"},
			{"transfer", filepath.Join(dir, "link") + "/", src + "?lease=90s", "--table", "t"},
			{"transfer", src, "file://" + dir + "/link/../d", "--table", "t", "--mode", "append", "--cursor", "id"},
		}, [][]string{
			{"transfer", src, "file://" + dir + "/other", "--table", "t"},
		})
		if got := strings.Join(files(), ","); got != want {
			t.Errorf("the source folder changed: %s, was %s", got, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "other", "t", "_weir_manifest.json")); err != nil {
			t.Errorf("the copy into another folder: %v", err)
		}
	})
}
