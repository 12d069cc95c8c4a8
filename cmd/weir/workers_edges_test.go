package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/runner"
)

// Tests of the attack-s12 defects of weir backfill / weir worker
// (docs/workers.md): each failed on main.

// insertKeys puts keys into the fixture's source table ev.
func insertKeys(t *testing.T, f *backfillFixture, keys []string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	for _, k := range keys {
		f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%s, 'k', 1)", f.pg.Ref("ev"), k))
	}
}

// workerResult runs weir worker and decodes its JSON.
func workerResult(t *testing.T, args ...string) (int, runner.BackfillResult) {
	t.Helper()
	code, out := runCmd(t, append([]string{"worker"}, args...)...)
	var res runner.BackfillResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("worker output %q: %v", out, err)
	}
	return code, res
}

// TestWorkerEdges_Keys: the edges of bigint and huge gaps between keys.
// Every key is copied exactly once; a worker's commits are bounded by the
// rows, not by the width of the cursor's range (keys 1 and 10^12 used to
// cost 10^7 empty chunks; the minimum of bigint planned a lower bound
// bigint cannot hold and the worker failed every time).
func TestWorkerEdges_Keys(t *testing.T) {
	tests := []struct {
		name   string
		keys   []string
		shards string
	}{
		{"min", []string{"-9223372036854775808", "-9223372036854775807", "0"}, "4"},
		{"min-alone", []string{"-9223372036854775808"}, "8"},
		{"min-dense", []string{"-9223372036854775808", "-9223372036854775807", "-9223372036854775806"}, "8"},
		{"max", []string{"9223372036854775806", "9223372036854775807"}, "4"},
		{"both-edges", []string{"-9223372036854775808", "9223372036854775807"}, "8"},
		{"both-edges-one-shard", []string{"-9223372036854775808", "9223372036854775807"}, "1"},
		{"gap-1e12", []string{"1", "1000000000000"}, "1"},
		{"gaps-1e15", []string{"1", "1000000000000000", "2000000000000000", "3000000000000000", "3000000000000001"}, "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newBackfillFixture(t, 0)
			insertKeys(t, f, tt.keys)
			claims := f.stores["sqlite"]
			if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", tt.shards, "--claims", claims, "-f", f.dagf); code != ExitOK {
				t.Fatalf("backfill: exit %d: %s", code, out)
			}
			code, res := workerResult(t, "--task", "ev", "--claims", claims, "-f", f.dagf, "--chunk-keys", "1000")
			if code != ExitOK || !res.CaughtUp {
				t.Fatalf("worker: exit %d: %+v", code, res)
			}
			// a chunk per bucket at most here (fewer than 1000 rows a bucket),
			// plus the take-over of each bucket: never one per empty key range
			if max := int64(2 * len(tt.keys) * 8); res.Commits > max {
				t.Errorf("worker: %d commits for %d rows; want at most %d", res.Commits, len(tt.keys), max)
			}
			n, d, _ := attackSink(t, f, "out")
			if n != int64(len(tt.keys)) || d != n {
				t.Errorf("sink: %d rows, %d distinct; want %d", n, d, len(tt.keys))
			}
			if res.Offset != tt.keys[len(tt.keys)-1] {
				t.Errorf("offset %q, want %s", res.Offset, tt.keys[len(tt.keys)-1])
			}
		})
	}
}

// TestWorkerEdges_ChunkRows: a bucket of 2,500 rows with --chunk-keys
// 1000 commits a few chunks (and one take-over), whatever the gaps: rows
// 1..2000 and then 500 keys 10^12 apart (on main: 5·10^11 chunks).
func TestWorkerEdges_ChunkRows(t *testing.T) {
	f := newBackfillFixture(t, 2000)
	ctx := routestest.Context(t, time.Minute)
	f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g * 1000000000000, 'gap', 1 FROM generate_series(1, 500) g", f.pg.Ref("ev")))
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "1", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	code, res := workerResult(t, "--task", "ev", "--claims", claims, "-f", f.dagf, "--chunk-keys", "1000")
	if code != ExitOK || res.Rows != 2500 || res.Commits > 5 {
		t.Errorf("worker: exit %d, %d rows, %d commits; want 0, 2500, at most 5 (a take-over and 3 or 4 chunks)", code, res.Rows, res.Commits)
	}
}

// TestWorkerEdges_ShardsBadInput: a --shards count over the maximum is
// bad input before anything is written: a weir once afterwards runs.
func TestWorkerEdges_ShardsBadInput(t *testing.T) {
	f := newBackfillFixture(t, 10)
	for _, n := range []string{"3000000000", "100001", "-1"} {
		code, msg := runCmdMsg(t, "backfill", "--task", "ev", "--shards", n, "--claims", f.stores["sqlite"], "-f", f.dagf)
		if code != ExitBadInput || !strings.Contains(msg, "--shards") {
			t.Errorf("--shards %s: exit %d: %q; want 2 naming --shards", n, code, msg)
		}
	}
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Errorf("weir once after the refused backfills: exit %d: %s; want 0 (no plan in the sink)", code, out)
	}
}

// addTask appends a task to the fixture's dagfile.
func addTask(t *testing.T, f *backfillFixture, name, transfer string) {
	t.Helper()
	fh, err := os.OpenFile(f.dagf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fmt.Fprintf(fh, "  %s:\n    transfer: %s\n", name, transfer); err != nil {
		t.Fatal(err)
	}
}

// TestWorkerEdges_ReservedDest: a dest_table named like weir's state table
// is refused by backfill and worker as weir once refuses it (exit 2).
func TestWorkerEdges_ReservedDest(t *testing.T) {
	f := newBackfillFixture(t, 10)
	addTask(t, f, "ev_state", fmt.Sprintf("{from: pg, table: %s, to: pg, dest_table: %s, mode: append}", f.pg.Ref("ev"), f.pg.Ref("_weir_state")))
	for _, cmd := range []string{"once", "backfill", "worker"} {
		code, msg := runCmdMsg(t, cmd, "--task", "ev_state", "--claims", f.stores["sqlite"], "-f", f.dagf)
		if cmd == "once" {
			code, msg = runCmdMsg(t, cmd, "--task", "ev_state", "-f", f.dagf)
		}
		if code != ExitBadInput || !strings.Contains(msg, "_weir_state") {
			t.Errorf("%s into _weir_state: exit %d: %q; want 2 naming _weir_state", cmd, code, msg)
		}
	}
}

// TestWorkerEdges_NoPlan: a worker on a task never planned, with rows to
// copy, is bad input naming weir backfill; one on an empty source, or
// after a finished plan, is caught up (the generated fan-out's workers and
// check run after the plan, which may have found nothing or been finished
// by another worker).
func TestWorkerEdges_NoPlan(t *testing.T) {
	f := newBackfillFixture(t, 10)
	claims := f.stores["sqlite"]
	code, msg := runCmdMsg(t, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf)
	if code != ExitBadInput || !strings.Contains(msg, "weir backfill --task ev") {
		t.Errorf("worker with no plan: exit %d: %q; want 2 naming weir backfill", code, msg)
	}
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	for range 2 { // the one that finishes, then the check
		if code, res := workerResult(t, "--task", "ev", "--claims", claims, "-f", f.dagf); code != ExitOK || !res.CaughtUp {
			t.Errorf("worker: exit %d: %+v", code, res)
		}
	}
	insertKeys(t, f, []string{"11"}) // rows for weir once, after the plan: still caught up
	if code, res := workerResult(t, "--task", "ev", "--claims", claims, "-f", f.dagf); code != ExitOK || !res.CaughtUp || !res.NoPlan {
		t.Errorf("worker after the finish: exit %d: %+v; want caught up, no plan", code, res)
	}
}

// TestWorkerEdges_Abandon: weir backfill --abandon removes a plan nothing
// was committed under (the task runs again from its offset, the rows copied
// once), refuses one whose buckets committed rows (the next run would copy
// them again), and says when there is no plan.
func TestWorkerEdges_Abandon(t *testing.T) {
	f := newBackfillFixture(t, 100)
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Fatalf("once: exit %d: %s", code, out)
	}
	ctx := routestest.Context(t, time.Minute)
	f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 'r', 1 FROM generate_series(101, 200) g", f.pg.Ref("ev")))
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "4", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	if code, _ := runCmdMsg(t, "once", "--task", "ev", "-f", f.dagf); code != ExitTempFail {
		t.Fatalf("once under the plan: exit %d, want 75", code)
	}
	if code, out := runCmd(t, "backfill", "--task", "ev", "--abandon", "--claims", claims, "-f", f.dagf); code != ExitOK || !strings.Contains(out, `"abandoned":true`) {
		t.Fatalf("abandon: exit %d: %s", code, out)
	}
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Fatalf("once after the abandon: exit %d: %s", code, out)
	}
	f.rows = 200
	f.check(t, "200")
	if code, out := runCmd(t, "backfill", "--task", "ev", "--abandon", "--claims", claims, "-f", f.dagf); code != ExitOK || strings.Contains(out, `"abandoned":true`) {
		t.Errorf("abandon with no plan: exit %d: %s; want 0, nothing abandoned", code, out)
	}

	// a plan one bucket of which committed rows: refused, the plan kept
	f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 'r', 1 FROM generate_series(201, 4200) g", f.pg.Ref("ev")))
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	victim := startChild(t, []string{routes.CheckpointEnv + "=after-commit"}, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s", "--chunk-keys", "1000")
	killAfterCommit(t, victim)
	if code, msg := runCmdMsg(t, "backfill", "--task", "ev", "--abandon", "--claims", claims, "-f", f.dagf); code != ExitBadInput || !strings.Contains(msg, "bucket 0") {
		t.Errorf("abandon after a bucket committed: exit %d: %q; want 2 naming bucket 0", code, msg)
	}
	if code, res := workerResult(t, "--task", "ev", "--claims", claims, "-f", f.dagf, "--wait", "--lease", "2s"); code != ExitOK || !res.CaughtUp {
		t.Errorf("the workers finish the refused abandon's plan: exit %d: %+v", code, res)
	}
	f.rows = 4200
	f.check(t, "4200")
}

// TestWorkerEdges_ResetTransfer: weir reset of an append transfer is bad
// input that calls it a transfer (not a "model task", as on main) and
// names the way to abandon a backfill plan.
func TestWorkerEdges_ResetTransfer(t *testing.T) {
	f := newBackfillFixture(t, 1)
	for _, args := range [][]string{{}, {"--to", "earliest"}} {
		code, msg := runCmdMsg(t, append([]string{"reset", "--task", "ev", "-f", f.dagf}, args...)...)
		if code != ExitBadInput || strings.Contains(msg, "model task") || !strings.Contains(msg, "weir backfill --task ev --abandon") {
			t.Errorf("reset %v of a transfer: exit %d: %q; want 2 naming --abandon, not a model task", args, code, msg)
		}
	}
}
