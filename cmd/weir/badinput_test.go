package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// runErr runs the CLI in-process and returns the exit code and the error
// line main would print.
func runErr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(new(bytes.Buffer))
	root.SetErr(new(bytes.Buffer))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitCode(err), ""
	}
	return exitCode(err), redactErr(err)
}

// withPassword returns raw with its user's password set to pw.
func withPassword(t *testing.T, raw, pw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// withParam adds a query parameter to a URL.
func withParam(raw, kv string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + kv
	}
	return raw + "?" + kv
}

// TestCLI_BadInputExit2 is the list of bad inputs (docs/failure-modes.md,
// Bad input): each exits 2, before a row moves, with a message that names
// what is wrong.
func TestCLI_BadInputExit2(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	pg := postgrestest.New(t)
	my := mysqltest.New(t)
	pg.Create(t, ctx, "t", routestest.Rows(1, 3))
	pg.Exec(t, ctx, "CREATE TABLE "+pg.Ref("nopk")+" (id bigint, v text)", "INSERT INTO "+pg.Ref("nopk")+" VALUES (1, 'a')")
	alien := pg.Schema + "_alien" // a schema whose _weir_state is another tool's
	pg.Exec(t, ctx, "CREATE SCHEMA "+alien, "CREATE TABLE "+alien+"._weir_state (x int)")
	t.Cleanup(func() { pg.Pool.Exec(context.Background(), "DROP SCHEMA "+alien+" CASCADE") })
	my.Exec(t, ctx, "CREATE TABLE "+my.Ref("_weir_state")+" (x int)")
	pg.Exec(t, ctx, "CREATE TABLE "+pg.Ref("emoji")+" (id bigint PRIMARY KEY, v text)", "INSERT INTO "+pg.Ref("emoji")+" VALUES (1, 'a😀')")
	my3 := mysqltest.New(t) // no _weir_state of another tool's
	my3.Exec(t, ctx, "CREATE TABLE "+my3.Ref("emoji")+" (id bigint PRIMARY KEY, v varchar(20) CHARACTER SET utf8mb3)")
	src, tbl := pg.URL(), pg.Ref("t")
	dest := func(name string) string { return pg.Schema + "." + name }
	badPG := strings.Replace(pg.URL(), "root@", "weir_no_such_user@", 1)
	badMy := withPassword(t, my.URL(), "wrong")
	dag := badCredsDag(t, badPG, badMy, pg.URL(), tbl)
	files := "file://" + t.TempDir()

	cases := []struct {
		name string
		args []string
		want string // in the error message
	}{
		{"unknown table", []string{"transfer", src, src, "--table", pg.Ref("nosuch"), "--dest-table", dest("x")}, "no such table"},
		{"bad URL", []string{"transfer", "postgres://u@h:port/db", src, "--table", tbl}, "cannot parse URL"},
		{"unknown scheme", []string{"transfer", "oracle://h/db", src, "--table", tbl}, `unknown scheme "oracle"`},
		{"unknown URL parameter postgres", []string{"transfer", withParam(src, "bogus=1"), src, "--table", tbl, "--dest-table", dest("x")}, `"bogus"`},
		{"unknown URL parameter mysql", []string{"transfer", src, withParam(my.URL(), "bogus=1"), "--table", tbl, "--dest-table", my.Ref("x")}, "'bogus'"},
		{"unknown URL parameter file", []string{"transfer", src, withParam(files, "bogus=1"), "--table", tbl}, `"bogus"`},
		{"unknown URL parameter iceberg", []string{"transfer", src, "iceberg://?catalog=sql&uri=sqlite://" + t.TempDir() + "/c.db&bogus=1", "--table", tbl}, `"bogus"`},
		{"merge without a key", []string{"transfer", src, src, "--table", pg.Ref("nopk"), "--dest-table", dest("y"), "--mode", "merge", "--cursor", "id"}, "merge needs a key"},
		{"incremental without a cursor", []string{"transfer", src, src, "--table", pg.Ref("nopk"), "--dest-table", dest("y"), "--mode", "append"}, "no cursor"},
		{"mode the destination does not do", []string{"transfer", src, files, "--table", tbl, "--mode", "merge"}, "take replace and append"},
		{"unknown mode", []string{"transfer", src, src, "--table", tbl, "--mode", "upsert"}, "upsert"},
		{"refused credentials postgres", []string{"transfer", badPG, src, "--table", tbl, "--dest-table", dest("x")}, "weir_no_such_user"},
		{"refused credentials mysql", []string{"transfer", src, badMy, "--table", tbl, "--dest-table", my.Ref("x")}, "Access denied"},
		{"refused credentials postgres, weir once", []string{"once", "-f", dag, "--task", "frompg"}, "weir_no_such_user"},
		{"refused credentials mysql, weir once", []string{"once", "-f", dag, "--task", "tomy"}, "Access denied"},
		{"refused credentials, weir status", []string{"status", "-f", dag}, "check the user, password"},
		{"_weir_state of the wrong shape postgres, append", []string{"transfer", src, src, "--table", tbl, "--dest-table", alien + ".t", "--mode", "append"}, "not weir's state table"},
		{"_weir_state of the wrong shape postgres, replace", []string{"transfer", src, src, "--table", tbl, "--dest-table", alien + ".t"}, "not weir's state table"},
		{"_weir_state of the wrong shape mysql", []string{"transfer", src, my.URL(), "--table", tbl, "--dest-table", my.Ref("t")}, "not weir's state table"},
		{"a character the mysql column's set cannot hold", []string{"transfer", src, my3.URL(), "--table", pg.Ref("emoji"), "--dest-table", my3.Ref("emoji"), "--mode", "append", "--cursor", "id"}, "CONVERT TO CHARACTER SET utf8mb4"},
		{"mysql URL sets sql_mode", []string{"transfer", src, withParam(my.URL(), "sql_mode=%27%27"), "--table", tbl, "--dest-table", my.Ref("x")}, "sql_mode"},
		{"destination is the source table", []string{"transfer", src, src, "--table", tbl}, "is the source table itself"},
		{"no table", []string{"transfer", src, src}, "no table to transfer"},
		{"no args", []string{"transfer"}, "usage: weir transfer SRC DST"},
		{"one arg", []string{"transfer", src}, "usage: weir transfer SRC DST"},
		{"unknown command", []string{"transfre", src, src}, `unknown command "transfre"`},
		{"unknown flag", []string{"transfer", src, src, "--tabel", tbl}, "--tabel"},
		{"bad flag value", []string{"transfer", src, src, "--table", tbl, "--parallel", "many"}, "many"},
		{"status with an argument", []string{"status", "extra"}, "usage: weir status"},
	}
	for _, flag := range []string{"--table", "--dest-table", "--tables", "--schema", "--dest-schema"} {
		for _, bad := range malformedNames(flag) {
			args := []string{"transfer", src, src, flag, bad}
			if flag != "--table" && flag != "--tables" {
				args = append(args, "--table", tbl)
			}
			cases = append(cases, struct {
				name string
				args []string
				want string
			}{fmt.Sprintf("malformed %s %q", flag, bad), args, fmt.Sprintf("%q", bad)})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := runErr(t, tc.args...)
			if code != ExitBadInput || !strings.Contains(msg, tc.want) {
				t.Fatalf("weir %s: exit %d, want %d with %q in: %s", strings.Join(tc.args, " "), code, ExitBadInput, tc.want, msg)
			}
			if strings.HasPrefix(tc.name, "malformed ") {
				flag := strings.Fields(tc.name)[1]
				if flag == "--table" || flag == "--tables" {
					flag = "--table/--tables"
				}
				if !strings.Contains(msg, flag+":") {
					t.Fatalf("the message does not name the flag %s: %s", flag, msg)
				}
			}
		})
	}
}

// malformedNames are the malformed forms of a table (or schema) name.
func malformedNames(flag string) []string {
	names := []string{"a.b.c.d", "x.y.z", "sch.", "x..y", ".t", `""`, `s.""`, `"open`, `s."open`, `a"b"c`, "my table"}
	if flag == "--schema" || flag == "--dest-schema" {
		names = append(names, "a.b")
	}
	return names
}

// badCredsDag writes a dagfile whose tasks read from a PostgreSQL URL with
// an unknown user and write to a MySQL URL with a wrong password.
func badCredsDag(t *testing.T, badPG, badMy, okPG, table string) string {
	path := filepath.Join(t.TempDir(), "weir.yaml")
	body := fmt.Sprintf(`version: 1
connections:
  badpg: %s
  badmy: %s
  pg: %s
tasks:
  frompg:
    transfer: {from: badpg, table: %s, to: pg, dest_table: %s_copy}
  tomy:
    transfer: {from: pg, table: %s, to: badmy}
`, badPG, badMy, okPG, table, table, table)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTransferCmd_OntoItselfRefused: a run whose destination is its own
// source table — named outright, by default, or through a malformed
// --dest-table that was once ignored — exits 2 before a row moves, and the
// source table keeps its secondary index, trigger and rows.
func TestTransferCmd_OntoItselfRefused(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	pg := postgrestest.New(t)
	pg.Create(t, ctx, "t", routestest.Rows(1, 50))
	tbl := pg.Ref("t")
	pg.Exec(t, ctx,
		"CREATE INDEX t_name_idx ON "+tbl+" (name)",
		"CREATE FUNCTION "+pg.Schema+".t_touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$",
		"CREATE TRIGGER t_touch BEFORE INSERT ON "+tbl+" FOR EACH ROW EXECUTE FUNCTION "+pg.Schema+".t_touch()")
	want, _ := pg.Hash(t, ctx, tbl, "id")
	unqualified := strings.Replace(pg.URL(), "sslmode=disable", "sslmode=disable&search_path="+pg.Schema, 1)
	runs := [][]string{
		{"transfer", pg.URL(), pg.URL(), "--table", tbl},
		{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--dest-table", tbl},
		{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--dest-schema", pg.Schema},
		{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--mode", "append"},
		{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--mode", "merge"},
		{"transfer", pg.URL(), unqualified, "--table", tbl, "--dest-table", "t"},
	}
	for _, bad := range malformedNames("--dest-table") {
		runs = append(runs, []string{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--dest-table", bad})
	}
	for _, args := range runs {
		code, msg := runErr(t, args...)
		if code != ExitBadInput {
			t.Errorf("weir %s: exit %d, want %d: %s", strings.Join(args[3:], " "), code, ExitBadInput, msg)
		}
	}
	var idx, trg int
	pg.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 't_name_idx'`, pg.Schema).Scan(&idx)
	pg.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = 't_touch' AND tgrelid = $1::regclass`, tbl).Scan(&trg)
	if idx != 1 || trg != 1 {
		t.Fatalf("the source table lost its index (%d) or trigger (%d)", idx, trg)
	}
	if got, _ := pg.Hash(t, ctx, tbl, "id"); got != want {
		t.Fatal("the source table's rows changed")
	}
	// The same name in another schema of the same server is another table.
	other := pg.Schema + "_other"
	t.Cleanup(func() { pg.Pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+other+" CASCADE") })
	for _, args := range [][]string{
		{"transfer", unqualified, unqualified, "--table", "t", "--dest-schema", other},
		{"transfer", pg.URL(), pg.URL(), "--table", tbl, "--dest-table", other + ".t", "--mode", "append"},
	} {
		if code, msg := runErr(t, args...); code != ExitOK {
			t.Fatalf("weir %s: exit %d: %s", strings.Join(args[3:], " "), code, msg)
		}
	}
	if got, _ := pg.Hash(t, ctx, other+".t", "id"); got != want {
		t.Fatal("the copy into another schema differs from the source")
	}
}
