package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	path := cdcDag(t, src, dst, false)
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
		Lag     *int64 `json:"lag"`
		LagUnit string `json:"lag_unit"`
	}
	if json.Unmarshal([]byte(out), &rep); rep.Lag == nil || *rep.Lag != 0 || rep.LagUnit != "bytes" {
		t.Errorf("a log_based run's report: lag %v %q, want 0 bytes (it read up to the log's end it polled)", rep.Lag, rep.LagUnit)
	}
	return cdcReport(t, out)
}

// cdcReport is the cdc object of a JSON report (weir once or transfer).
func cdcReport(t *testing.T, out string) map[string]any {
	t.Helper()
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
	path := cdcDag(t, src, dst, true)
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
	path := cdcDag(t, src, dst, true)
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

// TestStatusCmd_LogBased: `weir status` on log_based tasks shows the bytes
// of WAL / binlog behind and, for PostgreSQL, the slot's retained WAL and
// wal_status; a dropped slot or a purged binlog file fails the status
// (exit 1) with the fix: weir reset --task T.
func TestStatusCmd_LogBased(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			src, dst := cdctest.Open(t, ctx, kind), cdctest.Open(t, ctx, "postgres")
			src.Exec(t, ctx, "CREATE TABLE "+src.Table("t")+" (id int PRIMARY KEY, v varchar(20))")
			src.Exec(t, ctx, "INSERT INTO "+src.Table("t")+" VALUES (1, 'a'), (2, 'b')")
			path := cdcDag(t, src, dst, false)
			t.Cleanup(func() { runCmd(t, "reset", "--task", "cdc", "-f", path) })
			onceCDC(t, path)
			src.Exec(t, ctx, "UPDATE "+src.Table("t")+" SET v = 'B' WHERE id = 2")
			code, out := runCmd(t, "status", "-f", path)
			if code != ExitOK || !strings.Contains(out, " bytes") {
				t.Fatalf("status exited %d, want the lag in bytes:\n%s", code, out)
			}
			if kind == "postgres" && !regexp.MustCompile(`slot weir_\w+ \(wal_status (reserved|extended)\) retains \d+ bytes`).MatchString(out) {
				t.Errorf("status shows no slot line:\n%s", out)
			}
			if kind == "postgres" && strings.Contains(out, "warning:") {
				t.Errorf("status warns under the default threshold:\n%s", out)
			}
			if code, out := runCmd(t, "status", "-f", path, "--slot-wal-warn", "1B"); kind == "postgres" && (code != ExitOK || !strings.Contains(out, "cdc: warning: replication slot weir_") || !strings.Contains(out, "weir reset")) {
				t.Errorf("status --slot-wal-warn 1B exited %d, want a warning naming the slot and weir reset:\n%s", code, out)
			}
			code, out = runCmd(t, "status", "-f", path, "--json")
			var sts []struct {
				Log struct {
					Behind int64 `json:"behind_bytes"`
					Known  bool  `json:"known"`
				} `json:"log"`
			}
			if err := json.Unmarshal([]byte(out), &sts); code != ExitOK || err != nil || len(sts) != 1 || !sts[0].Log.Known || sts[0].Log.Behind <= 0 {
				t.Fatalf("status --json exited %d (%v), want bytes behind after an update:\n%s", code, err, out)
			}
			want := "does not exist"
			if kind == "postgres" {
				cfg := pgwal.Config{SourceURL: src.URL, DestURL: dst.URL, Tables: []pgwal.Pair{{Source: src.Ref("t"), Dest: dst.Ref("t")}}}
				slot, _ := cfg.Name()
				dropSlot(t, src, slot)
			} else {
				want = "was purged"
				dst.Exec(t, ctx, "UPDATE "+dst.Table("_weir_state")+" SET position = 'mysql-bin.000000:4'")
			}
			code, out = runCmd(t, "status", "-f", path)
			if code != ExitFailure || !strings.Contains(out, want) || !strings.Contains(out, "re-bootstrap: weir reset --task cdc") {
				t.Fatalf("status with the log lost exited %d, want %d naming %q and the fix:\n%s", code, ExitFailure, want, out)
			}
		})
	}
}

// dropSlot drops a replication slot, waiting for the walsender of the
// run that used it to end (the slot is active for a moment after).
func dropSlot(t *testing.T, src *cdctest.DB, slot string) {
	t.Helper()
	ctx := routestest.Context(t, 30*time.Second)
	for {
		if src.Query(t, ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, slot) == "1" {
			src.Exec(t, ctx, `SELECT pg_drop_replication_slot($1)`, slot)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("slot %s stayed active", slot)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cdcDag writes a dagfile with one log_based task, cdc, moving src's
// table t to dst's (a changelog when changelog is set), and returns its path.
func cdcDag(t *testing.T, src, dst *cdctest.DB, changelog bool) string {
	t.Helper()
	extra := ""
	if changelog {
		extra = ", changelog: true"
	}
	path := filepath.Join(t.TempDir(), "weir.yaml")
	body := fmt.Sprintf(`version: 1
connections:
  app: %s
  dw: %s
tasks:
  cdc:
    transfer: {from: app, table: %s.t, to: dw, dest_table: %s.t, mode: log_based%s}
`, src.URL, dst.URL, src.Schema, dst.Schema, extra)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
