package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/claims/claimstest"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/runner"
)

// backfillFixture is a source table of n rows (id 1…n, the integer
// primary key and cursor), an append task copying it into another table of
// the same schema, and the claim stores: a postgres:// one in the
// fixture's schema and a sqlite:// file. Task gold, a model with a
// declared aggregate over ev's destination (per n: sum, count, min, max
// and avg of id), writes table gold in PostgreSQL; task gold_id is the
// same model reading its source by the column id (cursor: id), into
// table gold_id.
type backfillFixture struct {
	pg     *postgrestest.Fixture
	dagf   string
	stores map[string]string
	rows   int64
	sink   string // the connection task ev writes into: pg, or lake (Iceberg)
	lake   string // the lake's URL, resolved
	gold   string // the gold table TestWorker_Gold checks: gold, or gold_id
}

func newBackfillFixture(t *testing.T, rows int64) *backfillFixture {
	t.Helper()
	return newBackfillFixtureInto(t, rows, "pg")
}

// newBackfillFixtureInto is newBackfillFixture with task ev writing into
// sink: pg, or lake, an Iceberg SQL catalog (SQLite) with a file
// warehouse.
func newBackfillFixtureInto(t *testing.T, rows int64, sink string) *backfillFixture {
	t.Helper()
	pg := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg.Exec(t, ctx,
		"CREATE TABLE "+pg.Ref("ev")+" (id bigint PRIMARY KEY, v text, n int)",
		fmt.Sprintf("INSERT INTO %s SELECT g, 'row ' || g, g %% 97 FROM generate_series(1, %d) g", pg.Ref("ev"), rows))
	dir := t.TempDir()
	dagf := filepath.Join(dir, "weir.yaml")
	lake := "iceberg://?catalog=sql&uri=sqlite://" + filepath.Join(dir, "lake", "catalog.db") + "&warehouse=file://" + filepath.Join(dir, "lake")
	yaml := fmt.Sprintf(`version: 1
connections:
  pg: {url: %q}
  lake: {url: %q}
tasks:
  ev:
    transfer: {from: pg, table: %s, to: %s, dest_table: %s, mode: append}
  ev_replace:
    transfer: {from: pg, table: %s, to: pg, dest_table: %s, mode: replace}
  ev_text:
    transfer: {from: pg, table: %s, to: pg, dest_table: %s, mode: append, cursor: v}
  ev_merge_n:
    transfer: {from: pg, table: %s, to: pg, dest_table: %s, mode: merge, cursor: n, primary_key: [id]}
  ev_model:
    model: {source: "pg:%s", sink: "pg:%s", mode: append, sql: "SELECT id FROM input"}
  gold:
    model:
      source: "%s:%s"
      sink: "pg:%s"
      sql: "SELECT n, id FROM input"
      aggregate:
        group_by: [n]
        measures: {s: sum(id), c: count(*), lo: min(id), hi: max(id), a: avg(id)}
  gold_id:
    model:
      source: "%s:%s"
      cursor: id
      sink: "pg:%s"
      sql: "SELECT n, id FROM input"
      aggregate:
        group_by: [n]
        measures: {s: sum(id), c: count(*), lo: min(id), hi: max(id), a: avg(id)}
`, pg.URL(), lake, pg.Ref("ev"), sink, pg.Ref("out"), pg.Ref("ev"), pg.Ref("out_r"), pg.Ref("ev"), pg.Ref("out_t"),
		pg.Ref("ev"), pg.Ref("out_m"), pg.Ref("ev"), pg.Ref("out_model"), sink, pg.Ref("out"), pg.Ref("gold"), sink, pg.Ref("out"), pg.Ref("gold_id"))
	if err := os.WriteFile(dagf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(pg.URL(), "?") {
		sep = "&"
	}
	return &backfillFixture{pg: pg, dagf: dagf, rows: rows, sink: sink, lake: lake, stores: map[string]string{
		"postgres": pg.URL() + sep + "schema=" + pg.Schema,
		"sqlite":   "sqlite://" + filepath.Join(dir, "claims.db"),
	}}
}

// store is the URL of claim store name: postgres and sqlite from
// f.stores, etcd a prefix of its own in the test etcd (opened here, so a
// test of the SQL stores does not need etcd).
func (f *backfillFixture) store(t *testing.T, name string) string {
	t.Helper()
	if name == "etcd" {
		return claimstest.EtcdURL(t)
	}
	return f.stores[name]
}

// check asserts the sink holds every source row exactly once (count, sum
// of keys, no repeated key) and the task's offset is want.
func (f *backfillFixture) check(t *testing.T, want string) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	var n, distinct int64
	var sum, wm, pos string
	if f.sink == "lake" {
		n, distinct, sum, wm, pos = f.lakeCheck(t, ctx)
	} else {
		if err := f.pg.Pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT id), COALESCE(sum(id), 0)::text FROM "+f.pg.Ref("out")).Scan(&n, &distinct, &sum); err != nil {
			t.Fatal(err)
		}
		q := "SELECT watermark, position FROM " + f.pg.Ref(routes.StateTableName) + " WHERE dest_table = 'out' AND source NOT LIKE '%#bucket/%'"
		if err := f.pg.Pool.QueryRow(ctx, q).Scan(&wm, &pos); err != nil {
			t.Fatal(err)
		}
	}
	wantSum := strconv.FormatInt(f.rows*(f.rows+1)/2, 10)
	if n != f.rows || distinct != f.rows || sum != wantSum {
		t.Errorf("sink: %d rows, %d distinct keys, key sum %s; want %d, %d, %s", n, distinct, sum, f.rows, f.rows, wantSum)
	}
	if wm != want || pos != "" {
		t.Errorf("the task's state: watermark %q, position %q; want %q and no plan", wm, pos, want)
	}
}

// TestWorker_Processes: weir backfill cuts the backlog into 8 buckets (the
// same plan asked again is kept, another count refused); 4
// worker processes copy them, one SIGKILLed after its first chunk commit
// (mid-bucket, holding its lease); a fifth worker started after the others
// ended takes its bucket over once the lease expires and finishes (weir
// status --claims shows the 8 free buckets after the plan, none after): the
// sink holds every source row exactly once, the task's offset is the
// planned head, and a later weir once continues from it. For each claim
// store. 400,000 rows by default (this 2-core shared machine);
// WEIR_WORKERS_ROWS=2000000 runs the 2M.
func TestWorker_Processes(t *testing.T) {
	rows := workersRows(t)
	for _, sink := range []string{"pg", "lake"} {
		stores := []string{"postgres", "sqlite"}
		if sink == "pg" { // what etcd does here does not depend on the sink: one is enough
			stores = append(stores, "etcd")
		}
		for _, store := range stores {
			t.Run(sink+"/"+store, func(t *testing.T) { workerProcesses(t, sink, store, rows) })
		}
	}
}

// workersRows is the source's row count of the end-to-end worker tests:
// 400,000, or WEIR_WORKERS_ROWS.
func workersRows(t *testing.T) int64 {
	t.Helper()
	v := os.Getenv("WEIR_WORKERS_ROWS")
	if v == "" {
		return 400_000
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("WEIR_WORKERS_ROWS=%q: %v", v, err)
	}
	return n
}

// worker starts a weir worker process for task ev of the backfill under
// claims, 2 s leases and chunks of rows/8/5 keys (five a bucket).
func (f *backfillFixture) worker(t *testing.T, claims string, env []string, extra ...string) *child {
	t.Helper()
	chunk := strconv.FormatInt(max(f.rows/8/5, 1), 10)
	args := append([]string{"worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s", "--chunk-keys", chunk}, extra...)
	return startChild(t, env, args...)
}

func workerProcesses(t *testing.T, sink, store string, rows int64) {
	{
		{
			f := newBackfillFixtureInto(t, rows, sink)
			claims := f.store(t, store)
			if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf); code != ExitOK {
				t.Fatalf("backfill: exit %d: %s", code, out)
			}
			if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf); code != ExitOK || strings.Contains(out, `"planned":true`) {
				t.Errorf("the same backfill again: exit %d: %s; want 0, the plan kept", code, out)
			}
			if code, msg := runCmdMsg(t, "backfill", "--task", "ev", "--shards", "4", "--claims", claims, "-f", f.dagf); code != ExitBadInput || !strings.Contains(msg, "8 buckets") {
				t.Errorf("a backfill of another count while one is under way: exit %d: %s; want 2 naming the 8 buckets", code, msg)
			}
			if bs := backfillStatus(t, f.dagf, claims); bs == nil || len(bs.Buckets) != 8 || bs.Buckets[7].Until != strconv.FormatInt(rows, 10) || bs.Buckets[0].Owner != "" || bs.Buckets[0].Done {
				t.Errorf("weir status --claims after the plan: %+v, want 8 free buckets up to %d", bs, rows)
			}
			if code, _ := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitTempFail {
				t.Errorf("weir once during the backfill exited %d, want %d (the workers' rows)", code, ExitTempFail)
			}
			worker := func(env []string, extra ...string) *child { return f.worker(t, claims, env, extra...) }
			start := time.Now()
			victim := worker([]string{routes.CheckpointEnv + "=after-commit"})
			var others []*child
			for range 3 {
				others = append(others, worker(nil))
			}
			killAfterCommit(t, victim)
			for i, w := range others {
				if code := w.exitCode(); code != ExitOK && code != ExitTempFail {
					t.Errorf("worker %d exited %d, want 0 or 75:\n%s", i, code, w.log())
				}
			}
			late := worker(nil, "--wait")
			if code := late.exitCode(); code != ExitOK {
				t.Fatalf("the late worker exited %d:\n%s", code, late.log())
			}
			t.Logf("%d rows, 8 buckets, 4 workers (one killed) + 1 late: %s", rows, time.Since(start).Round(time.Millisecond))
			f.check(t, strconv.FormatInt(rows, 10))
			if bs := backfillStatus(t, f.dagf, claims); bs != nil {
				t.Errorf("weir status --claims after the backfill shows %+v, want none under way", bs)
			}
			var staged int
			if f.sink == "lake" {
				// no staging tables: a killed worker's files are orphans (weir maintain)
			} else if err := f.pg.Pool.QueryRow(routestest.Context(t, time.Minute), "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename LIKE '\\_weir\\_stage\\_%'", f.pg.Schema).Scan(&staged); err != nil || staged != 0 {
				t.Errorf("%d staging tables left after the backfill (%v), want 0", staged, err)
			}
			if taken := f.takenOver(t); taken < 1 {
				t.Errorf("buckets committed by a second claim: %d, want the killed worker's taken over", taken)
			}
			// the task goes on from the head like any append
			f.pg.Exec(t, routestest.Context(t, time.Minute), fmt.Sprintf("INSERT INTO %s VALUES (%d, 'late', 0)", f.pg.Ref("ev"), rows+1))
			if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
				t.Fatalf("weir once after the backfill: exit %d: %s", code, out)
			}
			f.rows++
			f.check(t, strconv.FormatInt(rows+1, 10))
			if code, out := runCmd(t, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf); code != ExitOK || !strings.Contains(out, `"caught_up":true`) {
				t.Errorf("a worker after the backfill: exit %d: %s, want 0 and caught up", code, out)
			}
			if lag := taskLag(t, f.dagf); lag != 0 {
				t.Errorf("weir status after the backfill: lag %d, want 0", lag)
			}
		}
	}
}

// taskLag is weir status --json's lag of task ev.
func taskLag(t *testing.T, dagf string) int64 {
	t.Helper()
	code, out := runCmd(t, "status", "--task", "ev", "--json", "-f", dagf)
	var sts []runner.TaskStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil || code != ExitOK || len(sts) != 1 {
		t.Fatalf("weir status: exit %d, %v: %s", code, err, out)
	}
	return sts[0].Lag
}

// TestWorker_AddedMidRun: a worker started while others are working takes
// only unclaimed buckets, never in-flight work. Two workers pause right
// after their first chunk commit, holding their buckets (their leases, 2 s,
// renewed while paused); a third, started then, copies every other bucket
// and exits 75 naming the two held ones. The claim store shows the two
// buckets still under their first owners and tokens; let go, the two
// finish them; the sink holds every row once, every bucket's progress
// committed under its first claim's token (nothing taken over). Both
// sinks, both claim stores.
func TestWorker_AddedMidRun(t *testing.T) {
	for _, sink := range []string{"pg", "lake"} {
		for _, store := range []string{"postgres", "sqlite"} {
			t.Run(sink+"/"+store, func(t *testing.T) { workerAddedMidRun(t, sink, store) })
		}
	}
}

func workerAddedMidRun(t *testing.T, sink, store string) {
	const rows = 80_000
	f := newBackfillFixtureInto(t, rows, sink)
	claims := f.store(t, store)
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	args := []string{"worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s", "--chunk-keys", "2000"}
	var busy []*child
	var resume []string
	for i := range 2 {
		r := filepath.Join(t.TempDir(), fmt.Sprintf("resume%d", i))
		resume = append(resume, r)
		busy = append(busy, startChild(t, []string{routes.CheckpointEnv + "=after-commit", routes.ResumeEnv + "=" + r}, args...))
	}
	for i, w := range busy {
		select {
		case <-w.paused:
		case <-w.done:
			t.Fatalf("busy worker %d ended before a chunk commit: exit %d\n%s", i, w.exitCode(), w.log())
		case <-time.After(2 * time.Minute):
			t.Fatalf("busy worker %d never committed a chunk:\n%s", i, w.log())
		}
	}
	held := map[int]runner.BucketStatus{}
	for _, b := range backfillStatus(t, f.dagf, claims).Buckets {
		if b.Owner != "" && !b.Done {
			held[b.Bucket] = b
		}
	}
	if len(held) != 2 {
		t.Fatalf("buckets held while the two workers pause: %+v, want 2", held)
	}
	code, out := runCmd(t, args...)
	if code != ExitTempFail {
		t.Fatalf("the worker added mid-run: exit %d: %s; want 75 (the two held buckets)", code, out)
	}
	var res runner.BackfillResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("the added worker's output %q: %v", out, err)
	}
	if len(res.Buckets) != 6 {
		t.Errorf("the added worker finished buckets %v, want the 6 unclaimed ones", res.Buckets)
	}
	for _, b := range res.Buckets {
		if _, ok := held[b]; ok {
			t.Errorf("the added worker finished bucket %d, held by %s", b, held[b].Owner)
		}
	}
	for _, b := range backfillStatus(t, f.dagf, claims).Buckets {
		if h, ok := held[b.Bucket]; ok {
			if b.Owner != h.Owner || b.Token != h.Token || b.Done {
				t.Errorf("bucket %d after the added worker: owner %s token %d done %v; want still %s's, token %d", b.Bucket, b.Owner, b.Token, b.Done, h.Owner, h.Token)
			}
		} else if !b.Done {
			t.Errorf("bucket %d after the added worker: not done", b.Bucket)
		}
	}
	for _, r := range resume {
		os.WriteFile(r, nil, 0o644)
	}
	for i, w := range busy { // the first to finish may find the other's bucket still held
		if code := w.exitCode(); code != ExitOK && code != ExitTempFail {
			t.Errorf("busy worker %d exited %d:\n%s", i, code, w.log())
		}
	}
	if code, out := runCmd(t, args...); code != ExitOK || !strings.Contains(out, `"caught_up":true`) {
		t.Errorf("a worker after the two: exit %d: %s, want 0 and caught up", code, out)
	}
	f.check(t, strconv.Itoa(rows))
	if taken := f.takenOver(t); taken != 0 {
		t.Errorf("%d buckets committed under a second claim, want 0: no in-flight bucket is taken", taken)
	}
	if lag := taskLag(t, f.dagf); lag != 0 {
		t.Errorf("weir status after the backfill: lag %d, want 0", lag)
	}
}

// TestWorker_SIGTERM: a worker stopped by SIGTERM in the middle of a
// chunk (paused with its rows staged, before the commit, then let go)
// aborts the chunk — nothing of it is
// committed — and frees its bucket at once: the next worker, started right
// after, claims it without waiting for the lease, and the sink ends exact.
func TestWorker_SIGTERM(t *testing.T) {
	f := newBackfillFixture(t, 50_000)
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	resume := filepath.Join(t.TempDir(), "resume")
	args := []string{"worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "1m", "--chunk-keys", "25000"}
	w := startChild(t, []string{routes.CheckpointEnv + "=before-commit", routes.ResumeEnv + "=" + resume}, args...)
	select {
	case <-w.paused:
	case <-w.done:
		t.Fatalf("the worker ended before its chunk commit: exit %d\n%s", w.exitCode(), w.log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("never paused:\n%s", w.log())
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond) // the signal reaches the process's context first
	os.WriteFile(resume, nil, 0o644)
	if code := w.exitCode(); code == ExitOK {
		t.Fatalf("a worker stopped by SIGTERM exited 0:\n%s", w.log())
	}
	var n int64
	if err := f.pg.Pool.QueryRow(routestest.Context(t, time.Minute), "SELECT count(*) FROM "+f.pg.Ref("out")).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after the SIGTERM the sink has %d rows (%v), want 0: the chunk under way is never committed", n, err)
	}
	// with a 1 min lease, only the release lets the next worker finish now
	if code, out := runCmd(t, append(args, "--lease", "1m")...); code != ExitOK {
		t.Fatalf("the next worker: exit %d: %s", code, out)
	}
	f.check(t, "50000")
}

// TestWorker_BadInput: a task that cannot be cut is refused as bad input
// (exit 2) naming the task and why, before anything is planned.
func TestWorker_BadInput(t *testing.T) {
	f := newBackfillFixture(t, 10)
	for task, why := range map[string]string{
		"ev_replace": "mode replace is not cut into buckets",
		"ev_text":    "buckets cut an integer cursor",
		"ev_merge_n": "its merge key (id) is not its cursor n",
		"ev_model":   "only a transfer task's table is cut into buckets",
		"nope":       `no task "nope"`,
	} {
		for _, cmd := range []string{"backfill", "worker"} {
			code, stderr := runCmdMsg(t, cmd, "--task", task, "--claims", f.stores["sqlite"], "-f", f.dagf)
			if code != ExitBadInput || !strings.Contains(stderr, why) || !strings.Contains(stderr, task) {
				t.Errorf("%s --task %s: exit %d, %q; want 2 naming the task and %q", cmd, task, code, stderr, why)
			}
		}
	}
	if code, stderr := runCmdMsg(t, "backfill", "--task", "ev", "--claims", f.stores["sqlite"], "--shards", "0", "-f", f.dagf); code != ExitBadInput {
		t.Errorf("--shards 0: exit %d: %s", code, stderr)
	}
}

// runCmdMsg runs weir in-process and returns its exit code and the message
// main would print.
func runCmdMsg(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK, ""
	}
	return exitCode(err), redactErr(err)
}

// backfillStatus is weir status --claims --json's backfill of task ev.
func backfillStatus(t *testing.T, dagf, claims string) *runner.BackfillStatus {
	t.Helper()
	code, out := runCmd(t, "status", "--task", "ev", "--claims", claims, "--json", "-f", dagf)
	var sts []runner.TaskStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil || code != ExitOK || len(sts) != 1 {
		t.Fatalf("weir status --claims: exit %d, %v: %s", code, err, out)
	}
	return sts[0].Backfill
}

// lakeTable loads table out of the fixture's lake.
func (f *backfillFixture) lakeTable(t *testing.T, ctx context.Context) *table.Table {
	t.Helper()
	ep, err := routes.Open(ctx, f.lake)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	tbl, err := ep.(*iceberg.Endpoint).LoadTable(ctx, routes.TableRef{Schema: f.pg.Schema, Name: "out"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// lakeCheck reads the lake's table out: rows, distinct ids, the sum of
// ids, and the table's own state (not a bucket's): watermark and position.
func (f *backfillFixture) lakeCheck(t *testing.T, ctx context.Context) (n, distinct int64, sum, wm, pos string) {
	t.Helper()
	tbl := f.lakeTable(t, ctx)
	at, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	ids := map[int64]bool{}
	var total int64
	for _, c := range at.Column(0).Data().Chunks() {
		a := c.(*array.Int64)
		for i := range a.Len() {
			n, total, ids[a.Value(i)] = n+1, total+a.Value(i), true
		}
	}
	found := 0
	for k, v := range tbl.Properties() {
		if !strings.HasPrefix(k, iceberg.StatePrefix) || strings.Contains(k, "#bucket/") {
			continue
		}
		var st struct{ Watermark, Position string }
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			t.Fatal(err)
		}
		wm, pos = st.Watermark, st.Position
		found++
	}
	if found != 1 {
		t.Fatalf("the lake's table has %d states of its own, want 1: %v", found, tbl.Properties())
	}
	return n, int64(len(ids)), strconv.FormatInt(total, 10), wm, pos
}

// takenOver counts the buckets whose progress was last committed under
// another claim than the first (a killed worker's bucket taken over).
func (f *backfillFixture) takenOver(t *testing.T) int {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	var taken int
	if f.sink != "lake" {
		q := "SELECT count(*) FROM " + f.pg.Ref(routes.StateTableName) + " WHERE source LIKE '%#bucket/%' AND position NOT LIKE '%&token=1'"
		if err := f.pg.Pool.QueryRow(ctx, q).Scan(&taken); err != nil {
			t.Fatal(err)
		}
		return taken
	}
	for k, v := range f.lakeTable(t, ctx).Properties() {
		if !strings.HasPrefix(k, iceberg.StatePrefix) || !strings.Contains(k, "#bucket/") {
			continue
		}
		var st struct{ Position string }
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(st.Position, "&token=1") {
			taken++
		}
	}
	return taken
}

// killAfterCommit waits for victim, started with routes.CheckpointEnv
// after-commit, to pause after its first chunk commit and SIGKILLs it.
func killAfterCommit(t *testing.T, victim *child) {
	t.Helper()
	select {
	case <-victim.paused:
	case <-victim.done:
		t.Fatalf("the victim ended before a chunk commit: exit %d\n%s", victim.exitCode(), victim.log())
	case <-time.After(3 * time.Minute):
		t.Fatalf("the victim never committed a chunk:\n%s", victim.log())
	}
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.exitCode()
}
