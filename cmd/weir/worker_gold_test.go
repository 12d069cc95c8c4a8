package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// TestWorker_Gold: the aggregate gold model downstream of a backfill
// (issue 24). weir backfill cuts task ev's backlog into 8 buckets into
// the lake (an Iceberg SQL catalog); 4 worker processes copy them, one
// SIGKILLed after its first chunk commit (mid-bucket), a fifth started
// later takes its bucket over. While they commit — bucket chunks landing
// out of key order, each an Iceberg snapshot — task gold (a model with a
// declared aggregate over the lake's table: per n, sum, count, min, max
// and avg of id) runs again and again with weir once, and once more after
// the last worker: the gold table then equals the same aggregate computed
// in one SQL query over the source table, every group, sums, counts,
// minimums and maximums exactly, avg's hidden sum and count exactly and
// the avg to a double's precision (docs/runner.md: avg is a DOUBLE). At
// least one gold run between the first and the last bucket commit merged
// part of the backlog (its count strictly between 0 and all). Sink pg:
// the same into a PostgreSQL table, which the gold reads by its integer
// key while the chunks land out of key order: a run reads only what the
// plan committed whole (incremental.Settled), at least one run says so in
// its report (waiting), and the run after the last worker waits for
// nothing. For each sink, and each claim store but etcd (what the gold reads does not depend on the claim
// store). 400,000 rows by default; WEIR_WORKERS_ROWS=2000000 runs the
// issue's 2M.
func TestWorker_Gold(t *testing.T) {
	rows := workersRows(t)
	for _, sink := range []string{"lake", "pg"} {
		for _, store := range []string{"postgres", "sqlite"} {
			t.Run(sink+"/"+store, func(t *testing.T) { workerGold(t, sink, "gold", store, rows) })
		}
	}
	// the lake read by its column id instead of its snapshots: bounded
	// like PostgreSQL (what the claim store does is covered above)
	t.Run("lake-id/postgres", func(t *testing.T) { workerGold(t, "lake", "gold_id", "postgres", rows) })
}

func workerGold(t *testing.T, sink, task, store string, rows int64) {
	f := newBackfillFixtureInto(t, rows, sink)
	f.gold = task // the task's table has its name
	claims := f.store(t, store)
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	worker := func(env []string, extra ...string) *child { return f.worker(t, claims, env, extra...) }
	start := time.Now()
	var partial []int64 // the gold's row counts after a run while workers ran
	waiting := 0        // runs whose report says a backfill bounded the read
	gold := func(during bool) {
		t.Helper()
		code, out := runCmd(t, "once", "--task", task, "--json", "-f", f.dagf)
		if code != ExitOK && !(during && code == ExitTempFail) {
			t.Fatalf("weir once --task %s: exit %d: %s", task, code, out)
		}
		if strings.Contains(out, `"waiting"`) {
			if !during {
				t.Errorf("the gold run after the last worker still waits for the backfill: %s", out)
			}
			waiting++
		}
		if during {
			partial = append(partial, f.goldCount(t))
		}
	}
	// goldWhile runs the gold again and again until every worker has ended
	goldWhile := func(ws ...*child) {
		for {
			running := false
			for _, w := range ws {
				select {
				case <-w.done:
				default:
					running = true
				}
			}
			if !running {
				return
			}
			gold(true)
		}
	}
	victim := worker([]string{routes.CheckpointEnv + "=after-commit"})
	var others []*child
	for range 3 {
		others = append(others, worker(nil))
	}
	killAfterCommit(t, victim)
	goldWhile(others...)
	for i, w := range others {
		if code := w.exitCode(); code != ExitOK && code != ExitTempFail {
			t.Errorf("worker %d exited %d, want 0 or 75:\n%s", i, code, w.log())
		}
	}
	late := worker(nil, "--wait")
	goldWhile(late)
	if code := late.exitCode(); code != ExitOK {
		t.Fatalf("the late worker exited %d:\n%s", code, late.log())
	}
	gold(false)
	t.Logf("%d rows, 8 buckets, 4 workers (one killed) + 1 late, %d gold runs between: %s; gold counts %v",
		rows, len(partial), time.Since(start).Round(time.Millisecond), partial)
	f.check(t, strconv.FormatInt(rows, 10))
	if f.takenOver(t) < 1 {
		t.Errorf("no bucket taken over: the killed worker's bucket was not resumed by another")
	}
	mid := false
	for _, n := range partial {
		mid = mid || (n > 0 && n < rows)
	}
	if !mid {
		t.Errorf("no gold run merged part of the backlog while the workers ran (counts %v): the test interleaved nothing", partial)
	}
	if (sink == "pg" || task == "gold_id") && waiting == 0 {
		t.Errorf("no gold run while the workers ran reported waiting for the backfill (counts %v): the read was never bounded", partial)
	}
	f.checkGold(t)
}

// goldCount is the count of rows the gold table has merged (0 before it
// exists).
func (f *backfillFixture) goldCount(t *testing.T) int64 {
	t.Helper()
	var n int64
	q := "SELECT COALESCE((SELECT sum(c) FROM " + f.pg.Ref(f.gold) + "), 0)::bigint"
	if err := f.pg.Pool.QueryRow(routestest.Context(t, time.Minute), q).Scan(&n); err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			return 0
		}
		t.Fatal(err)
	}
	return n
}

// checkGold compares table gold with the aggregate computed in one query
// over the source table ev: every group, both ways.
func (f *backfillFixture) checkGold(t *testing.T) {
	t.Helper()
	ctx := routestest.Context(t, time.Minute)
	q := fmt.Sprintf(`SELECT COALESCE(w.n, g.n), w.s::text, g.s::text, w.c, g.c, w.lo, g.lo, w.hi, g.hi, w.a, g.a, g._weir_sum_a::text, g._weir_count_a
FROM (SELECT n, sum(id) s, count(*) c, min(id) lo, max(id) hi, avg(id)::float8 a FROM %s GROUP BY n) w
FULL JOIN %s g ON g.n = w.n
WHERE w.n IS NULL OR g.n IS NULL OR g.s::numeric <> w.s OR g.c <> w.c OR g.lo <> w.lo OR g.hi <> w.hi
   OR abs(g.a - w.a) > 1e-12 * abs(w.a) OR g._weir_sum_a::numeric <> w.s OR g._weir_count_a <> w.c
ORDER BY 1 LIMIT 10`, f.pg.Ref("ev"), f.pg.Ref(f.gold))
	rs, err := f.pg.Pool.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var n int64
		var ws, gs, gsum *string
		var wc, gc, wlo, glo, whi, ghi, gcount *int64
		var wa, ga *float64
		if err := rs.Scan(&n, &ws, &gs, &wc, &gc, &wlo, &glo, &whi, &ghi, &wa, &ga, &gsum, &gcount); err != nil {
			t.Fatal(err)
		}
		t.Errorf("gold group n=%d: sum %s count %s min %s max %s avg %s (hidden sum %s count %s); single query: sum %s count %s min %s max %s avg %s",
			n, str(gs), num(gc), num(glo), num(ghi), flt(ga), str(gsum), num(gcount), str(ws), num(wc), num(wlo), num(whi), flt(wa))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	var groups int
	if err := f.pg.Pool.QueryRow(ctx, "SELECT count(*) FROM "+f.pg.Ref(f.gold)).Scan(&groups); err != nil || groups != 97 {
		t.Errorf("gold has %d groups (%v), want 97", groups, err)
	}
}

func str(p *string) string {
	if p == nil {
		return "none"
	}
	return *p
}

func num(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

func flt(p *float64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// TestWorker_ModelOtherCursorHeld: a model reading a PostgreSQL table
// under a backfill by another column (n) than the plan cut it by (id) has
// no settled offset: it is held (exit 75, naming both columns) until the
// plan ends, then reads every row once (4,000 copied before the plan,
// 4,000 by it).
func TestWorker_ModelOtherCursorHeld(t *testing.T) {
	f := newBackfillFixtureInto(t, 4000, "pg")
	task := fmt.Sprintf("  by_n:\n    model: {source: \"pg:%s\", sink: \"pg:%s\", mode: append, cursor: n, sql: \"SELECT id, n FROM input\"}\n",
		f.pg.Ref("out"), f.pg.Ref("out_by_n"))
	d, err := os.ReadFile(f.dagf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.dagf, append(d, task...), 0o644); err != nil {
		t.Fatal(err)
	}
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Fatalf("weir once --task ev: exit %d: %s", code, out)
	}
	f.pg.Exec(t, routestest.Context(t, time.Minute), "INSERT INTO "+f.pg.Ref("ev")+" SELECT g, 'row ' || g, g % 97 FROM generate_series(4001, 8000) g")
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "2", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	code, msg := runCmdMsg(t, "once", "--task", "by_n", "-f", f.dagf)
	if code != ExitTempFail || !strings.Contains(msg, "cursor id") || !strings.Contains(msg, "read by n") {
		t.Fatalf("the model during the plan: exit %d: %s; want 75 naming the plan's column id and the model's n", code, msg)
	}
	t.Log(msg)
	if w := f.worker(t, claims, nil, "--wait"); w.exitCode() != ExitOK {
		t.Fatalf("worker: exit %d:\n%s", w.exitCode(), w.log())
	}
	if code, out := runCmd(t, "once", "--task", "by_n", "-f", f.dagf); code != ExitOK {
		t.Fatalf("the model after the plan: exit %d: %s", code, out)
	}
	var n, distinct int64
	q := "SELECT count(*), count(DISTINCT id) FROM " + f.pg.Ref("out_by_n")
	if err := f.pg.Pool.QueryRow(routestest.Context(t, time.Minute), q).Scan(&n, &distinct); err != nil || n != 8000 || distinct != 8000 {
		t.Errorf("out_by_n: %d rows, %d ids (%v); want 8000 and 8000", n, distinct, err)
	}
}
