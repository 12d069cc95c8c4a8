package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/cdc/pgwal"
	"github.com/weirhq/weir/routes/routestest"
)

// TestOnceCmd_LogBased runs a log_based dagfile task twice from MySQL (the
// binlog needs no slot to clean up) into PostgreSQL: a bootstrap, then the
// drained window, each reported in the JSON.
func TestOnceCmd_LogBased(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id INT PRIMARY KEY, v VARCHAR(20))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`version: 1
connections:
  app: %s
  dw: %s
tasks:
  cdc:
    transfer: {from: app, table: %s.t, to: dw, dest_table: %s.t, mode: log_based}
`, src.URL, dst.URL, src.Schema, dst.Schema)), 0o644)
	first := onceCDC(t, path)
	if first["bootstrap"] != true || first["rows"] != 3.0 {
		t.Fatalf("first run cdc = %v, want a bootstrap of 3 rows", first)
	}
	src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET v = 'B' WHERE id = 2")
	src.Exec(t, ctx, "DELETE FROM "+src.Table("t")+" WHERE id = 3")
	second := onceCDC(t, path)
	if second["bootstrap"] != false || second["upserts"] != 1.0 || second["deletes"] != 1.0 || second["from"] != first["to"] {
		t.Fatalf("second run cdc = %v, want 1 upsert and 1 delete from %v", second, first["to"])
	}
	if code, out := runCmd(t, "status", "-f", path, "--json"); code != ExitOK || !strings.Contains(out, second["to"].(string)) {
		t.Errorf("status exited %d, want the position %v in it: %s", code, second["to"], out)
	}
	cols := []string{"id", "v"}
	if s, d := src.Hash(t, ctx, "t", cols, "id"), dst.Hash(t, ctx, "t", cols, "id"); s != d {
		t.Fatalf("destination %s != source %s", d, s)
	}
}

func onceCDC(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out := runCmd(t, "once", "--task", "cdc", "-f", path, "--json")
	if code != ExitOK {
		t.Fatalf("once exited %d: %s", code, out)
	}
	var rep struct {
		CDC map[string]any `json:"cdc"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.CDC == nil {
		t.Fatalf("report %q: %v", out, err)
	}
	return rep.CDC
}

func TestTransferCmd_LogBasedBadInput(t *testing.T) {
	url := routestest.ServerURL(t, "WEIR_TEST_MYSQL")
	tests := []struct{ name, mode, table string }{
		{"unqualified table", "log_based", "t"},
		{"no table", "log_based", ""},
		{"changelog without log_based", "merge", "test.t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"transfer", url, url, "--mode", tt.mode, "--tables", tt.table}
			if tt.mode != "log_based" {
				args = append(args, "--changelog")
			}
			if code, _ := runCmd(t, args...); code != ExitBadInput {
				t.Fatalf("exit %d, want %d", code, ExitBadInput)
			}
		})
	}
}

// TestChangelogCmds: `weir transfer --mode log_based --changelog`
// bootstraps a changelog (MySQL → PostgreSQL), then a dagfile task with
// changelog: true on the same pair appends the changes since.
func TestChangelogCmds(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "mysql"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id INT PRIMARY KEY, v VARCHAR(20))")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	code, _ := runCmd(t, "transfer", src.URL, dst.URL, "--mode", "log_based", "--changelog",
		"--tables", src.Schema+".t", "--dest-schema", dst.Schema)
	if code != ExitOK {
		t.Fatalf("transfer --changelog exited %d", code)
	}
	if got := dst.LogOps(t, ctx, "t", "id", true); len(got) != 3 || got[0][0] != 'B' {
		t.Fatalf("log after the bootstrap = %v, want 3 baseline rows", got)
	}
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`version: 1
connections:
  app: %s
  dw: %s
tasks:
  cdc:
    transfer: {from: app, table: %s.t, to: dw, dest_table: %s.t, mode: log_based, changelog: true}
`, src.URL, dst.URL, src.Schema, dst.Schema)), 0o644)
	src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET v = 'B' WHERE id = 2")
	src.Exec(t, ctx, "DELETE FROM "+src.Table("t")+" WHERE id = 3")
	if got := onceCDC(t, path); got["bootstrap"] != false || got["appended"] != 2.0 {
		t.Fatalf("once cdc = %v, want 2 ops appended", got)
	}
	if got := strings.Join(dst.LogOps(t, ctx, "t", "id", false), ","); got != "U 2,D 3" {
		t.Fatalf("log ops = %s, want U 2,D 3", got)
	}
	cols := []string{"id", "v"}
	if s, d := src.Hash(t, ctx, "t", cols, "id"), dst.Hash(t, ctx, "t__current", cols, "id"); s != d {
		t.Fatalf("t__current %s != source %s", d, s)
	}
}

// TestResetCmd_LogBased: `weir reset --task T` on a log_based task from
// PostgreSQL drops the pair's slot and forgets its position; the next run
// bootstraps again (here a changelog: a second baseline).
func TestResetCmd_LogBased(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := cdctest.Open(t, ctx, "postgres"), cdctest.Open(t, ctx, "postgres")
	src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id int PRIMARY KEY, v text)")
	src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a'), (2, 'b')")
	path := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`version: 1
connections:
  app: %s
  dw: %s
tasks:
  cdc:
    transfer: {from: app, table: %s.t, to: dw, dest_table: %s.t, mode: log_based, changelog: true}
`, src.URL, dst.URL, src.Schema, dst.Schema)), 0o644)
	cfg := pgwal.Config{SourceURL: src.URL, DestURL: dst.URL, Changelog: true,
		Tables: []pgwal.Pair{{Source: src.Ref("t"), Dest: dst.Ref("t")}}}
	slot, err := cfg.Name()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runCmd(t, "reset", "--task", "cdc", "-f", path) })
	slots := func() string {
		return src.Query(t, ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot)
	}
	if got := onceCDC(t, path); got["bootstrap"] != true || slots() != "1" {
		t.Fatalf("first run cdc = %v, slots %s: want a bootstrap and the slot", got, slots())
	}
	if code, _ := runCmd(t, "reset", "--task", "cdc", "--to", "latest", "-f", path); code != ExitBadInput {
		t.Errorf("reset --to latest of a log_based task exited %d, want %d", code, ExitBadInput)
	}
	if code, _ := runCmd(t, "reset", "--task", "cdc", "-f", path); code != ExitOK {
		t.Fatalf("reset exited %d", code)
	}
	if n := slots(); n != "0" {
		t.Fatalf("%s slots named %s after reset, want none", n, slot)
	}
	if got := onceCDC(t, path); got["bootstrap"] != true {
		t.Fatalf("run after reset cdc = %v, want a bootstrap", got)
	}
	if n := len(dst.LogOps(t, ctx, "t", "id", true)); n != 4 {
		t.Errorf("log holds %d rows, want two baselines of 2", n)
	}
}
