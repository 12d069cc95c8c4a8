package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/routestest"
)

// runOut runs weir with args and returns the exit code, stdout and the
// error line main would print.
func runOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	msg := ""
	if err != nil {
		msg = "weir: " + redactErr(err)
	}
	return exitCode(err), out.String(), msg
}

// urlDB is raw with its database (path) replaced.
func urlDB(t *testing.T, raw, db string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// noEnvConns hides the developer's own WEIR_CONN_* variables.
func noEnvConns(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, connEnvPrefix) {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// TestConns_Dagfile: connections of the dagfile in the current directory
// (and with -f elsewhere), written with ${VAR}, stand for URLs in weir
// transfer and weir read; a dagfile transfer task into MySQL and ClickHouse
// lands in the URL's database.
func TestConns_Dagfile(t *testing.T) {
	noEnvConns(t)
	ctx := routestest.Context(t, 3*time.Minute)
	src, my, ch := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "clickhouse")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("orders")+" AS SELECT g::bigint AS id, 'v'||g AS v FROM generate_series(1, 50) g")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("events")+" (id bigint PRIMARY KEY, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("events")+" SELECT g, 'e'||g FROM generate_series(1, 20) g")
	pu, _ := url.Parse(src.URL)
	pass, _ := pu.User.Password()
	t.Setenv("W21_PG_USER", pu.User.Username())
	t.Setenv("W21_PG_PASS", pass)
	pu.User = nil
	t.Setenv("W21_MY", urlDB(t, my.URL, my.Schema))
	dir := t.TempDir()
	yaml := fmt.Sprintf(`version: 1
connections:
  app: "postgres://${W21_PG_USER}:${W21_PG_PASS}@%s%s?%s"
  shop: ${W21_MY}
  wh: %q
  old: "postgres://u:s3cr3t-w21@127.0.0.1:1/db"
tasks:
  to_shop:
    transfer: {from: app, table: %s.orders, to: shop}
  to_wh:
    transfer: {from: app, table: %s.orders, to: wh}
  cdc_shop:
    transfer: {from: app, table: %s.events, to: shop, mode: log_based, changelog: true}
  cdc_wh:
    transfer: {from: app, table: %s.events, to: wh, mode: log_based}
`, pu.Host, pu.Path, pu.RawQuery, urlDB(t, ch.URL, ch.Schema), src.Schema, src.Schema, src.Schema, src.Schema)
	os.WriteFile(filepath.Join(dir, "weir.yaml"), []byte(yaml), 0o644)
	want := src.Hash(t, ctx, "orders", []string{"id", "v"}, "id")

	t.Chdir(dir)
	if code, out, msg := runOut(t, "transfer", "app", "shop", "--table", src.Schema+".orders", "--dest-table", "direct", "--json"); code != 0 {
		t.Fatalf("transfer app shop: exit %d: %s %s", code, out, msg)
	}
	if got := my.Hash(t, ctx, "direct", []string{"id", "v"}, "id"); got != want {
		t.Fatalf("shop.direct = %s, want %s", got, want)
	}
	out := filepath.Join(t.TempDir(), "o.csv")
	if code, _, msg := runOut(t, "read", "app", "--table", src.Schema+".orders", "--to", out); code != 0 {
		t.Fatalf("read app: exit %d: %s", code, msg)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") != 51 {
		t.Fatalf("read app wrote %d lines, want a header and 50 rows", strings.Count(string(b), "\n"))
	}
	for task, d := range map[string]*cdctest.DB{"to_shop": my, "to_wh": ch} {
		if code, out, msg := runOut(t, "once", "--task", task); code != 0 {
			t.Fatalf("once %s: exit %d: %s %s", task, code, out, msg)
		}
		if got := d.Hash(t, ctx, "orders", []string{"id", "v"}, "id"); got != want {
			t.Fatalf("%s: %s.orders = %s, want %s (the URL's database)", task, d.Schema, got, want)
		}
	}
	// log_based tasks: the replica (ClickHouse) and the changelog's
	// __current view (MySQL) land in the URL's database, bootstrap and
	// a run with changes.
	for _, task := range []string{"cdc_shop", "cdc_wh"} {
		t.Cleanup(func() { runOut(t, "reset", "--task", task, "-f", filepath.Join(dir, "weir.yaml")) })
	}
	for run := 1; run <= 2; run++ {
		if run == 2 {
			src.Exec(t, ctx, "INSERT INTO "+src.Table("events")+" VALUES (100, 'new')")
			src.Exec(t, ctx, "UPDATE "+src.Table("events")+" SET v = 'x' WHERE id = 1")
		}
		want := src.Hash(t, ctx, "events", []string{"id", "v"}, "id")
		for task, d := range map[string]*cdctest.DB{"cdc_shop": my, "cdc_wh": ch} {
			if code, out, msg := runOut(t, "once", "--task", task); code != 0 {
				t.Fatalf("run %d: once %s: exit %d: %s %s", run, task, code, out, msg)
			}
			table := "events"
			if task == "cdc_shop" {
				table = "events__current"
			}
			if got := d.Hash(t, ctx, table, []string{"id", "v"}, "id"); got != want {
				t.Fatalf("run %d: %s: %s.%s = %s, want %s (the URL's database)", run, task, d.Schema, table, got, want)
			}
		}
	}

	// -f from elsewhere; list shows where each is defined, never a password.
	t.Chdir(t.TempDir())
	code, list, msg := runOut(t, "conns", "list", "-f", filepath.Join(dir, "weir.yaml"))
	if code != 0 {
		t.Fatalf("conns list: exit %d: %s", code, msg)
	}
	for _, w := range []string{"app", "postgres", "weir.yaml:3", "shop", "mysql", "weir.yaml:4", "wh", "clickhouse", "weir.yaml:5"} {
		if !strings.Contains(list, w) {
			t.Errorf("conns list lacks %q:\n%s", w, list)
		}
	}
	if strings.Contains(list, "s3cr3t-w21") || !strings.Contains(list, "u:xxxxx@") {
		t.Fatalf("conns list printed a password:\n%s", list)
	}
	// Without -f and no weir.yaml here, the names are unknown.
	code, _, msg = runOut(t, "transfer", "app", "shop", "--table", src.Schema+".orders")
	if code != ExitBadInput || !strings.Contains(msg, `"app" is not a URL, a path or a known connection`) {
		t.Fatalf("no dagfile: exit %d: %s", code, msg)
	}
}

// TestConns_Env: WEIR_CONN_<NAME> variables are connections without a
// dagfile; conns test says what each can do; an unknown word gets "did you
// mean"; a down server fails with exit 1 on one line; a refused password
// is exit 2.
func TestConns_Env(t *testing.T) {
	noEnvConns(t)
	t.Chdir(t.TempDir())
	ctx := routestest.Context(t, 3*time.Minute)
	src, my, ch := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "clickhouse")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" AS SELECT g::bigint AS id FROM generate_series(1, 7) g")
	t.Setenv("WEIR_CONN_APP", src.URL)
	t.Setenv("WEIR_CONN_SHOP", urlDB(t, my.URL, my.Schema))
	t.Setenv("WEIR_CONN_WH", urlDB(t, ch.URL, ch.Schema))

	if code, out, msg := runOut(t, "transfer", "app", "shop", "--table", src.Schema+".t"); code != 0 {
		t.Fatalf("transfer app shop: exit %d: %s %s", code, out, msg)
	}
	if code, out, msg := runOut(t, "transfer", "APP", "wh", "--table", src.Schema+".t"); code != 0 {
		t.Fatalf("transfer APP wh: exit %d: %s %s", code, out, msg)
	}
	for _, d := range []*cdctest.DB{my, ch} {
		if h := d.Hash(t, ctx, "t", []string{"id"}, "id"); !strings.HasPrefix(h, "7:") {
			t.Fatalf("%s.t = %s, want 7 rows", d.Schema, h)
		}
	}

	code, out, msg := runOut(t, "conns", "test")
	if code != 0 {
		t.Fatalf("conns test: exit %d: %s\n%s", code, msg, out)
	}
	for _, w := range []string{"app              postgres     ok: source; destination", "capture (wal_level=logical)",
		"shop             mysql        ok: source; destination", "capture (binlog_format=ROW)", "wh               clickhouse   ok: source; destination"} {
		if !strings.Contains(out, w) {
			t.Errorf("conns test lacks %q:\n%s", w, out)
		}
	}

	for _, args := range [][]string{{"transfer", "ap", "shop", "--table", "a.b"}, {"transfer", "app", "shopp", "--table", "a.b"}, {"read", "whh", "--table", "a.b"}, {"conns", "test", "shp"}} {
		code, _, msg := runOut(t, args...)
		if code != ExitBadInput || !strings.Contains(msg, "is not a URL, a path or a known connection (did you mean") || !strings.Contains(msg, "known: app, shop, wh") {
			t.Errorf("%v: exit %d: %s; want 2 with did you mean", args, code, msg)
		}
	}

	// A directory named like a word is still a bare path.
	os.MkdirAll("files", 0o755)
	os.WriteFile(filepath.Join("files", "t.csv"), []byte("id\n1\n2\n"), 0o644)
	if code, _, msg := runOut(t, "read", "files", "--table", "t.csv", "--to", filepath.Join(t.TempDir(), "t.csv")); code != 0 {
		t.Fatalf("read files (a directory): exit %d: %s", code, msg)
	}

	// A down server: exit 1, one line naming it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, down := range []string{
		fmt.Sprintf("postgres://u:pw@127.0.0.1:%d/db?connect_timeout=5", port),
		fmt.Sprintf("mysql://u:pw@127.0.0.1:%d/db", port),
		fmt.Sprintf("clickhouse://u:pw@127.0.0.1:%d/db", port),
	} {
		t.Setenv("WEIR_CONN_DOWN", down)
		code, out, msg := runOut(t, "conns", "test", "down")
		if code != ExitFailure || strings.Count(out, "\n") != 1 || !strings.Contains(out, "FAILED") || strings.Contains(out, "pw@") {
			t.Errorf("%s: exit %d, out %q (%s); want 1 and one FAILED line without the password", down, code, out, msg)
		}
	}

	// A refused password: exit 2, the password not shown.
	for name, raw := range map[string]string{"shop": urlDB(t, my.URL, my.Schema), "wh": urlDB(t, ch.URL, ch.Schema)} {
		u, _ := url.Parse(raw)
		u.User = url.UserPassword(u.User.Username(), "wrong-w21-pw")
		t.Setenv("WEIR_CONN_BAD", u.String())
		code, out, msg := runOut(t, "conns", "test", "bad")
		if code != ExitBadInput || strings.Count(out, "\n") != 1 || strings.Contains(out+msg, "wrong-w21-pw") {
			t.Errorf("%s with a wrong password: exit %d, out %q (%s); want 2, one line, no password", name, code, out, msg)
		}
		t.Setenv("WEIR_CONN_BAD", "")
	}
}

// TestConns_EnvSameNameTwice: WEIR_CONN_APP and WEIR_CONN_app both name
// app; which one a run used depended on the environment's order, so a run
// could read or write another server than meant. Every use of such a name
// is bad input naming both variables, whichever spelling is used.
func TestConns_EnvSameNameTwice(t *testing.T) {
	noEnvConns(t)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, pair := range [][2]string{{"WEIR_CONN_APP", "WEIR_CONN_app"}, {"WEIR_CONN_Lake", "WEIR_CONN_LAKE"}} {
		t.Setenv(pair[0], "file://"+filepath.Join(dir, "one"))
		t.Setenv(pair[1], "file://"+filepath.Join(dir, "two"))
	}
	for _, args := range [][]string{
		{"transfer", "app", "./out", "--table", "t"},
		{"transfer", "APP", "./out", "--table", "t"},
		{"transfer", "./in", "lake", "--table", "t"},
		{"conns", "test", "app"},
		{"conns", "test"},
	} {
		code, out, msg := runOut(t, args...)
		if code != ExitBadInput || !strings.Contains(out+msg, "both define") {
			t.Errorf("weir %s: exit %d, want %d naming both variables: %s", strings.Join(args, " "), code, ExitBadInput, msg)
		}
	}
}

// TestConns_NamesAndReach: conns test finds a variable's connection in any
// case, as transfer does (PGX was unknown to it); a variable whose suffix
// cannot be a name is bad input, not silently ignored; a file root that
// does not exist is a destination with nothing to read, not a plain "ok".
func TestConns_NamesAndReach(t *testing.T) {
	noEnvConns(t)
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll(filepath.Join(dir, "full"), 0o755)
	os.WriteFile(filepath.Join(dir, "full", "t.csv"), []byte("id\n1\n"), 0o644)
	t.Setenv("WEIR_CONN_PGX", "file://"+filepath.Join(dir, "full"))
	t.Setenv("WEIR_CONN_NOPE", "file://"+filepath.Join(dir, "not", "there"))
	t.Setenv("WEIR_CONN_9", "file://"+filepath.Join(dir, "full"))

	for _, name := range []string{"pgx", "PGX", "Pgx"} {
		code, out, msg := runOut(t, "conns", "test", name)
		if code != 0 || !strings.Contains(out, "ok: source; destination") {
			t.Errorf("conns test %s: exit %d, out %q (%s); want ok: source; destination", name, code, out, msg)
		}
	}
	code, out, msg := runOut(t, "conns", "test", "nope")
	if code != 0 || strings.Contains(out, "source") || !strings.Contains(out, "nothing to read yet") || !strings.Contains(out, "destination") {
		t.Errorf("conns test nope (a missing root): exit %d, out %q (%s); want a destination with nothing to read", code, out, msg)
	}
	code, out, msg = runOut(t, "conns", "list")
	if code != 0 || !strings.Contains(out, "cannot name a connection") {
		t.Errorf("conns list: exit %d, out %q (%s); want $WEIR_CONN_9 flagged", code, out, msg)
	}
	code, out, msg = runOut(t, "conns", "test", "9")
	if code != ExitBadInput || !strings.Contains(out+msg, "WEIR_CONN_9") {
		t.Errorf("conns test 9: exit %d (%s); want 2 naming $WEIR_CONN_9", code, msg)
	}
}
