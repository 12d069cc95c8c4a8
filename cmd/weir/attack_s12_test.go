package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/routestest"
)

// Attack tests of session 12 against weir backfill / weir worker
// (docs/workers.md), by an outside tester. Each fails where weir is wrong.

// attackSink is the sink's count, distinct keys and key sum (as text).
func attackSink(t *testing.T, f *backfillFixture, table string) (n, distinct int64, sum string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	if err := f.pg.Pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT id), COALESCE(sum(id), 0)::text FROM "+f.pg.Ref(table)).Scan(&n, &distinct, &sum); err != nil {
		t.Fatal(err)
	}
	return n, distinct, sum
}

// TestAttackS12_EdgeWindows: zero rows (nothing planned, a worker caught
// up), more shards than rows, negative keys, the top of bigint: every row
// copied exactly once, the task's offset at the head, exit 0. (What held.)
func TestAttackS12_EdgeWindows(t *testing.T) {
	for name, keys := range map[string][]string{
		"zero":       nil,
		"one":        {"7"},
		"few-shards": {"-5", "-3", "2"},
		"top":        {"9223372036854775806", "9223372036854775807"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newBackfillFixture(t, 0)
			ctx := routestest.Context(t, time.Minute)
			for _, k := range keys {
				f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s VALUES (%s, 'k', 1)", f.pg.Ref("ev"), k))
			}
			claims := f.stores["postgres"]
			code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf)
			if code != ExitOK {
				t.Fatalf("backfill: exit %d: %s", code, out)
			}
			if len(keys) == 0 && !strings.Contains(out, `"nothing":true`) {
				t.Errorf("backfill of an empty table: %s, want nothing", out)
			}
			if code, out := runCmd(t, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf); code != ExitOK || !strings.Contains(out, `"caught_up":true`) {
				t.Fatalf("worker: exit %d: %s", code, out)
			}
			if len(keys) == 0 {
				return
			}
			n, d, _ := attackSink(t, f, "out")
			if n != int64(len(keys)) || d != n {
				t.Errorf("sink: %d rows, %d distinct; want %d", n, d, len(keys))
			}
		})
	}
}

// TestAttackS12_ClaimsUnwritablePath: a sqlite claim store whose parent
// is a regular file (unwritable even for root, where a 0555 directory is
// not) is a loud failure naming the path, before anything is planned in
// the sink: a weir once afterwards still runs (no plan left behind).
func TestAttackS12_ClaimsUnwritablePath(t *testing.T) {
	f := newBackfillFixture(t, 10)
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	claims := "sqlite://" + filepath.Join(file, "claims.db")
	code, msg := runCmdMsg(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf)
	if code == ExitOK || !strings.Contains(msg, "claims.db") {
		t.Errorf("backfill with an unwritable claim store: exit %d: %q; want nonzero naming the path", code, msg)
	}
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Errorf("weir once after the refused backfill: exit %d: %s; want 0 (no plan left in the sink)", code, out)
	}
}

// TestAttackS12_SinkDroppedBeforeFinish: every bucket is committed, then
// the destination table is dropped (an operator's mistake, a migration)
// before the finishing commit. The worker's finish creates the table
// anew, empty, commits the plan's head as the task's watermark and exits
// 0 caught up (seen 2026-12-07; when the drop lands before a chunk's
// commit instead, that worker fails, exit 1, and the next worker started
// — an orchestrator's retry — does the same empty finish, exit 0):
// the sink holds none of the source's rows and every later run continues
// from the head — silent loss of the whole backlog. An ordinary append
// run facing a dropped destination copies everything again (checked
// below as the reference), so the finish must either refuse loudly or
// leave the task to copy from the start. Made deterministic by holding
// the table's advisory lock in shared mode (the workers' mode): the
// chunks commit, the finish (exclusive) waits until the test lets it go.
func TestAttackS12_SinkDroppedBeforeFinish(t *testing.T) {
	f := newBackfillFixture(t, 4000)
	ctx := routestest.Context(t, 3*time.Minute)
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	conn, err := f.pg.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	key := `"` + f.pg.Schema + `"."out"`
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock_shared(hashtextextended('weir:' || $1, 0))", key); err != nil {
		t.Fatal(err)
	}
	w := startChild(t, nil, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s", "--chunk-keys", "1000")
	q := "SELECT count(*) FROM " + f.pg.Ref("_weir_state") + " WHERE (source LIKE '%#bucket/0' AND watermark = '2000') OR (source LIKE '%#bucket/1' AND watermark = '4000')"
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var n int
		if err := f.pg.Pool.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the buckets never reached their ends:\n%s", w.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.pg.Exec(t, ctx, "DROP TABLE "+f.pg.Ref("out"))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock_shared(hashtextextended('weir:' || $1, 0))", key); err != nil {
		t.Fatal(err)
	}
	code := w.exitCode()
	t.Logf("the worker whose finish met the dropped table: exit %d\n%s", code, w.log())
	// the orchestrator retries the failed step: the next worker
	code, out := runCmd(t, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf)
	var n int64
	f.pg.Pool.QueryRow(ctx, "SELECT count(*) FROM "+f.pg.Ref("out")).Scan(&n)
	if code == ExitOK && n != 4000 {
		t.Errorf("the next worker after the sink was dropped: exit 0 (%s), the sink holds %d rows of 4000 (silent loss)", out, n)
	}
	// the reference: once after the finish must leave the sink whole
	runCmd(t, "once", "--task", "ev", "-f", f.dagf)
	if n, d, _ := attackSink(t, f, "out"); n != 4000 || d != 4000 {
		t.Errorf("after the backfill and a weir once: %d rows, %d distinct; want 4000 (an append run onto a dropped table copies all again)", n, d)
	}
}

// TestAttackS12_ClaimsURLBadInput: a claims URL of an unknown scheme or
// without a path is bad input (COMMON: exit 2 naming what to do), not a
// failure (exit 1); its password never printed.
func TestAttackS12_ClaimsURLBadInput(t *testing.T) {
	f := newBackfillFixture(t, 10)
	for _, u := range []string{"mysql://root:s3cretpw@127.0.0.1:1/x", "sqlite://", "redis://127.0.0.1:1"} {
		for _, cmd := range []string{"backfill", "worker"} {
			code, msg := runCmdMsg(t, cmd, "--task", "ev", "--claims", u, "-f", f.dagf)
			if code != ExitBadInput || strings.Contains(msg, "s3cretpw") {
				t.Errorf("%s --claims %s: exit %d: %q; want 2, no password", cmd, u, code, msg)
			}
		}
	}
}

// TestAttackS12_TinyLease: weir worker --lease 1ns panics (time.NewTicker:
// non-positive interval, from the renew goroutine's lease/3) with a Go
// stack trace, after claiming a bucket. A lease under a millisecond is
// also stored as 0 ms (the claim store counts milliseconds): expired the
// moment it is taken. Both are bad input: exit 2 naming --lease, no panic.
func TestAttackS12_TinyLease(t *testing.T) {
	f := newBackfillFixture(t, 100)
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	for _, lease := range []string{"1ns", "500us"} {
		w := startChild(t, nil, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", lease)
		code := w.exitCode()
		if code != ExitBadInput || strings.Contains(w.log(), "panic") || !strings.Contains(w.log(), "--lease") {
			t.Errorf("worker --lease %s: exit %d, want 2 naming --lease without a panic:\n%.600s", lease, code, w.log())
		}
	}
}
