package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// runCmd runs the CLI in-process and returns the exit code and stdout.
func runCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		t.Logf("weir %s: %v", strings.Join(args, " "), err)
	}
	return exitCode(err), out.String()
}

// writeLake writes a one-task dagfile over CSV files and an embedded lake.
func writeLake(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "t.csv"), []byte("id,name\n1,a\n2,b\n"), 0o644)
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: files, table: t.csv, to: lake, dest_table: bronze.t, mode: append, cursor: id}
  silver:
    model: {source: lake:bronze.t, sink: lake:silver.t, mode: upsert, key: id, sql: "SELECT id, upper(name) AS name FROM input"}
`), 0o644)
	return path
}

func TestOnceCmd_Exit0AndReport(t *testing.T) {
	path := writeLake(t)
	if code, _ := runCmd(t, "once", "--task", "bronze", "-f", path); code != ExitOK {
		t.Fatalf("once bronze exited %d", code)
	}
	code, out := runCmd(t, "once", "--task", "silver", "-f", path, "--json")
	if code != ExitOK {
		t.Fatalf("once silver exited %d", code)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	for _, key := range []string{"task", "kind", "rows", "rows_in", "rows_out", "quarantined", "offsets", "lag", "elapsed_ms", "run_id"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("the report has no %q: %s", key, out)
		}
	}
	if rep["rows"] != 2.0 {
		t.Errorf("rows = %v, want 2", rep["rows"])
	}
	if code, out := runCmd(t, "status", "-f", path, "--json"); code != ExitOK || !strings.Contains(out, `"committed": true`) {
		t.Errorf("status exited %d: %s", code, out)
	}
	if code, _ := runCmd(t, "reset", "--task", "silver", "--to", "earliest", "-f", path); code != ExitOK {
		t.Errorf("reset exited %d", code)
	}
	if code, _ := runCmd(t, "run", "--once", "-f", path); code != ExitOK {
		t.Errorf("run --once exited %d", code)
	}
}

func TestOnceCmd_Exit2(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(bad, []byte("version: 1\ntasks:\n  a:\n    model: {sink: nowhere:x.y}\n"), 0o644)
	tests := []struct {
		name string
		args []string
	}{
		{"bad dagfile", []string{"once", "--task", "a", "-f", bad}},
		{"missing dagfile", []string{"once", "--task", "a", "-f", filepath.Join(t.TempDir(), "none.yaml")}},
		{"unknown task", []string{"once", "--task", "nope", "-f", writeLake(t)}},
		{"no task", []string{"once", "-f", writeLake(t)}},
		{"reset a transfer", []string{"reset", "--task", "bronze", "--to", "earliest", "-f", writeLake(t)}},
		{"run: bad selector", []string{"run", "--once", "--task", "nope", "-f", writeLake(t)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _ := runCmd(t, tt.args...); code != ExitBadInput {
				t.Fatalf("exit %d, want %d", code, ExitBadInput)
			}
		})
	}
}

// TestOnceCmd_Exit75: a sink held by another run exits 75.
func TestOnceCmd_Exit75(t *testing.T) {
	fx := postgrestest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fx.Exec(t, ctx, "CREATE TABLE "+fx.Schema+".src (id bigint PRIMARY KEY, v text)", "INSERT INTO "+fx.Schema+".src VALUES (1, 'a')")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(strings.ReplaceAll(`version: 1
connections:
  pg: ${WEIR_TEST_PG}
tasks:
  m:
    model: {source: pg:S.src, sink: pg:S.dst, mode: append, sql: "SELECT * FROM input"}
`, "S.", fx.Schema+".")), 0o644)
	conn, err := fx.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	key := pgx.Identifier{fx.Schema, "dst"}.Sanitize()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended('weir:' || $1, 0))`, key); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock_all()`)
	if code, _ := runCmd(t, "once", "--task", "m", "-f", path); code != ExitTempFail {
		t.Fatalf("once on a locked sink exited %d, want %d", code, ExitTempFail)
	}
}

// TestOnceCmd_OnlyTheTaskVariables: a task needs only the variables of the
// connections it uses (a pod is given only those); another task's unset
// variable is bad input for that task alone, naming the variable.
func TestOnceCmd_OnlyTheTaskVariables(t *testing.T) {
	for _, v := range []string{"WEIR_T17_APP_USER", "WEIR_T17_APP_PASS", "WEIR_T17_TOKEN"} {
		if _, set := os.LookupEnv(v); set {
			t.Fatalf("%s is set in the test's environment", v)
		}
	}
	path := writeLake(t)
	data, _ := os.ReadFile(path)
	data = bytes.Replace(data, []byte("connections:\n"), []byte("connections:\n  app: postgres://${WEIR_T17_APP_USER}:${WEIR_T17_APP_PASS}@127.0.0.1:1/db\n"), 1)
	data = append(data, []byte(`  load_app:
    transfer: {from: app, table: public.t, to: lake, dest_table: bronze.app}
  events:
    stream: {source: "sse://127.0.0.1:1/e?token=${WEIR_T17_TOKEN}", sink: lake:bronze.events, materialization: merge, key: id}
`)...)
	os.WriteFile(path, data, 0o644)
	tests := []struct {
		args []string
		code int
		want []string // in the error
	}{
		{[]string{"once", "--task", "bronze"}, ExitOK, nil},
		{[]string{"once", "--task", "silver"}, ExitOK, nil},
		{[]string{"run", "--once", "--task", "bronze,silver"}, ExitOK, nil},
		{[]string{"status", "--task", "silver"}, ExitOK, nil},
		{[]string{"reset", "--task", "silver", "--to", "earliest"}, ExitOK, nil},
		{[]string{"once", "--task", "load_app"}, ExitBadInput, []string{"WEIR_T17_APP_USER is not set", "WEIR_T17_APP_PASS is not set"}},
		{[]string{"once", "--task", "events"}, ExitBadInput, []string{"WEIR_T17_TOKEN is not set"}},
		{[]string{"run", "--once"}, ExitBadInput, []string{"WEIR_T17_APP_USER", "WEIR_T17_TOKEN"}},
		{[]string{"run", "--once", "--task", "silver,load_app"}, ExitBadInput, []string{"WEIR_T17_APP_USER"}},
	}
	for _, tt := range tests {
		root := newRoot()
		root.SetArgs(append(tt.args, "-f", path))
		root.SetOut(new(bytes.Buffer))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := root.ExecuteContext(ctx)
		cancel()
		if code := exitCode(err); code != tt.code {
			t.Errorf("weir %v: exit %d (%v), want %d", tt.args, code, err, tt.code)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("weir %v: error %q does not say %q", tt.args, err, w)
			}
		}
	}
}
