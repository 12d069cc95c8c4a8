package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// appendYAML appends text to the fixture's dagfile (its tasks: map is last).
func appendYAML(t *testing.T, f *backfillFixture, text string) {
	t.Helper()
	fh, err := os.OpenFile(f.dagf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// copyCheck reads table tbl (a copy of ev's ids): rows, distinct ids, the
// largest id.
func copyCheck(t *testing.T, f *backfillFixture, tbl string) (n, distinct, top int64) {
	t.Helper()
	q := "SELECT count(*), count(DISTINCT id), COALESCE(max(id), 0) FROM " + f.pg.Ref(tbl)
	if err := f.pg.Pool.QueryRow(routestest.Context(t, time.Minute), q).Scan(&n, &distinct, &top); err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			return 0, 0, 0
		}
		t.Fatal(err)
	}
	return n, distinct, top
}

// TestAttackS15_ModelMaxBatchDuringPlan: a model with max_batch_rows
// reading a backfill's destination while 3 workers commit (the first
// paused after its first chunk commit for one model run, then SIGKILLed
// at a random moment, not at a checkpoint; a fourth with --wait takes its
// bucket over), run again and again with weir once, weir status --claims
// between the runs. After every run the model's copy holds each id at most
// once, and for the PostgreSQL table (read by its key, bounded by the
// plan's settled offset) exactly the ids 1…max: a run that read past what
// the plan committed whole would leave a gap. After the last worker the
// copy is the source, every id once, and the gold aggregate (the same
// max_batch_rows) equals one SQL query over the source.
func TestAttackS15_ModelMaxBatchDuringPlan(t *testing.T) {
	const rows = 40_000
	for _, sink := range []string{"pg", "lake"} {
		t.Run(sink, func(t *testing.T) {
			f := newBackfillFixtureInto(t, rows, sink)
			appendYAML(t, f, fmt.Sprintf(`  copy_mb:
    model: {source: "%s:%s", sink: "pg:%s", mode: append, max_batch_rows: 700, sql: "SELECT id, n FROM input"}
  gold_mb:
    model:
      source: "%s:%s"
      sink: "pg:%s"
      max_batch_rows: 1100
      sql: "SELECT n, id FROM input"
      aggregate:
        group_by: [n]
        measures: {s: sum(id), c: count(*), lo: min(id), hi: max(id), a: avg(id)}
`, sink, f.pg.Ref("out"), f.pg.Ref("copy_mb"), sink, f.pg.Ref("out"), f.pg.Ref("gold_mb")))
			claims := f.stores["postgres"]
			if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "8", "--claims", claims, "-f", f.dagf); code != ExitOK {
				t.Fatalf("backfill: exit %d: %s", code, out)
			}
			runs, mid := 0, 0
			model := func(during bool) {
				t.Helper()
				for _, task := range []string{"copy_mb", "gold_mb"} {
					code, out := runCmd(t, "once", "--task", task, "--json", "-f", f.dagf)
					if code != ExitOK && !(during && code == ExitTempFail) {
						t.Fatalf("weir once --task %s: exit %d: %s", task, code, out)
					}
				}
				runs++
				n, d, top := copyCheck(t, f, "copy_mb")
				if n != d || (sink == "pg" && n != top) {
					t.Fatalf("after run %d: copy_mb has %d rows, %d distinct ids, max id %d; want each id once (pg: ids 1…max)", runs, n, d, top)
				}
				if during && n > 0 && n < rows {
					mid++
				}
				if code, out := runCmd(t, "status", "--task", "ev", "--claims", claims, "--json", "-f", f.dagf); code != ExitOK {
					t.Fatalf("weir status --claims during the plan: exit %d: %s", code, out)
				}
			}
			// One interleaving is certain: the first worker pauses after its
			// first chunk commit and a model run reads that part. The rest
			// runs free (a run may or may not land mid-plan: on a loaded
			// machine the workers can finish between two runs).
			resume := t.TempDir() + "/resume"
			ws := []*child{f.worker(t, claims, []string{routes.CheckpointEnv + "=after-commit", routes.ResumeEnv + "=" + resume})}
			select {
			case <-ws[0].paused:
			case <-ws[0].done:
				t.Fatalf("the first worker ended before a chunk commit: exit %d\n%s", ws[0].exitCode(), ws[0].log())
			case <-time.After(2 * time.Minute):
				t.Fatalf("the first worker never committed a chunk:\n%s", ws[0].log())
			}
			model(true)
			if mid == 0 {
				t.Fatalf("a model run after the first chunk commit merged nothing, or everything")
			}
			staged := mid
			for range 2 {
				ws = append(ws, f.worker(t, claims, nil))
			}
			if err := os.WriteFile(resume, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			killAt := time.Duration(rand.IntN(1500)) * time.Millisecond
			time.AfterFunc(killAt, func() { ws[0].cmd.Process.Signal(syscall.SIGKILL) })
			for running := true; running; {
				model(true)
				running = false
				for _, w := range ws {
					select {
					case <-w.done:
					default:
						running = true
					}
				}
			}
			late := f.worker(t, claims, nil, "--wait")
			for running := true; running; {
				model(true)
				select {
				case <-late.done:
					running = false
				default:
				}
			}
			if code := late.exitCode(); code != ExitOK {
				t.Fatalf("the late worker exited %d:\n%s", code, late.log())
			}
			model(false)
			model(false) // max_batch_rows may leave the rest of the head to a second run
			t.Logf("%s: worker 0 SIGKILLed %s after its resume; %d model runs, %d of them merged part of the backlog (%d while the workers ran free)", sink, killAt, runs, mid, mid-staged)
			f.check(t, strconv.Itoa(rows))
			if n, d, top := copyCheck(t, f, "copy_mb"); n != rows || d != rows || top != rows {
				t.Errorf("copy_mb after the plan: %d rows, %d distinct, max %d; want %d each", n, d, top, rows)
			}
			f.gold = "gold_mb"
			f.checkGold(t)
		})
	}
}

// TestAttackS15_MaxBatchReadsWhatIsSettled: a model with max_batch_rows
// 1000 over a PostgreSQL table under a plan of 3 buckets of 4,000 ids:
// bucket 0 whole, bucket 1 committed through 5000, bucket 2 through 9000
// (three workers, each paused after its first chunk commit). One weir once
// reads the 5,000 settled rows batch after batch, none past them, and says
// it read up to id 5000, bucket 1's progress.
func TestAttackS15_MaxBatchReadsWhatIsSettled(t *testing.T) {
	f := newBackfillFixtureInto(t, 12000, "pg")
	appendYAML(t, f, fmt.Sprintf("  copy_mb:\n    model: {source: \"pg:%s\", sink: \"pg:%s\", mode: append, max_batch_rows: 1000, sql: \"SELECT id, n FROM input\"}\n",
		f.pg.Ref("out"), f.pg.Ref("copy_mb")))
	claims := f.stores["sqlite"]
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "3", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill: exit %d: %s", code, out)
	}
	resume := t.TempDir() + "/resume"
	var ws []*child
	for _, chunk := range []string{"4000", "1000", "1000"} { // bucket 0 whole, then a chunk of bucket 1, of bucket 2
		w := startChild(t, []string{routes.CheckpointEnv + "=after-commit", routes.ResumeEnv + "=" + resume},
			"worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "10s", "--chunk-keys", chunk)
		select {
		case <-w.paused:
		case <-w.done:
			t.Fatalf("the worker ended before a chunk commit: exit %d\n%s", w.exitCode(), w.log())
		case <-time.After(2 * time.Minute):
			t.Fatalf("the worker never committed a chunk:\n%s", w.log())
		}
		ws = append(ws, w)
	}
	if n, _, top := copyCheck(t, f, "out"); n != 6000 || top != 9000 {
		t.Fatalf("the sink holds %d rows up to id %d; want 6000 up to 9000 (the three chunks)", n, top)
	}
	code, out := runCmd(t, "once", "--task", "copy_mb", "--json", "-f", f.dagf)
	if code != ExitOK {
		t.Fatalf("weir once --task copy_mb: exit %d: %s", code, out)
	}
	if n, d, top := copyCheck(t, f, "copy_mb"); n != 5000 || d != 5000 || top != 5000 {
		t.Errorf("one run while ids 1…5000 are settled: copy_mb holds %d rows, %d distinct, max %d; want the 5000 settled", n, d, top)
	}
	if !strings.Contains(out, "read up to id 5000, bucket 1's progress") {
		t.Errorf("the run's report: %s; want it to say it read up to id 5000, bucket 1's progress", out)
	}
	if err := os.WriteFile(resume, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if code := w.exitCode(); code != ExitOK && code != ExitTempFail {
			t.Fatalf("a worker exited %d:\n%s", code, w.log())
		}
	}
	if w := f.worker(t, claims, nil, "--wait"); w.exitCode() != ExitOK {
		t.Fatalf("the last worker exited %d:\n%s", w.exitCode(), w.log())
	}
	if code, out := runCmd(t, "once", "--task", "copy_mb", "-f", f.dagf); code != ExitOK {
		t.Fatalf("weir once after the plan: exit %d: %s", code, out)
	}
	if n, d, top := copyCheck(t, f, "copy_mb"); n != 12000 || d != 12000 || top != 12000 {
		t.Errorf("after the plan: copy_mb holds %d rows, %d distinct, max %d; want 12000 each", n, d, top)
	}
}

// TestAttackS15_ReplanAfterAbandon: two plans on one table end to end. Plan
// A (4 buckets) is abandoned after a worker, SIGKILLed before its first
// chunk commit, committed its take-over (bucket 0's state row, plan A's);
// a weir once copies the window; plan B (3 buckets) starts after it with
// plan A's bucket row still in the state table. weir status shows B's
// buckets from B's own start, not from A's row; workers finish B while a
// model reads the table again and again, each run's copy holding ids
// 1…max once; at the end the sink and the copy hold every id once.
func TestAttackS15_ReplanAfterAbandon(t *testing.T) {
	f := newBackfillFixtureInto(t, 100, "pg")
	appendYAML(t, f, fmt.Sprintf("  copy:\n    model: {source: \"pg:%s\", sink: \"pg:%s\", mode: append, sql: \"SELECT id, n FROM input\"}\n",
		f.pg.Ref("out"), f.pg.Ref("copy")))
	claims := f.stores["postgres"]
	ctx := routestest.Context(t, 3*time.Minute)
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Fatalf("once: exit %d: %s", code, out)
	}
	f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 'r', g %% 97 FROM generate_series(101, 4000) g", f.pg.Ref("ev")))
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "4", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill A: exit %d: %s", code, out)
	}
	w := startChild(t, []string{routes.CheckpointEnv + "=before-commit"}, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s")
	select {
	case <-w.paused:
	case <-w.done:
		t.Fatalf("the worker ended before a chunk commit: exit %d\n%s", w.exitCode(), w.log())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the worker never reached a chunk commit:\n%s", w.log())
	}
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.exitCode()
	if code, out := runCmd(t, "backfill", "--task", "ev", "--abandon", "--claims", claims, "-f", f.dagf); code != ExitOK || !strings.Contains(out, `"abandoned":true`) {
		t.Fatalf("abandon A: exit %d: %s", code, out)
	}
	if code, out := runCmd(t, "once", "--task", "ev", "-f", f.dagf); code != ExitOK {
		t.Fatalf("once after the abandon: exit %d: %s", code, out)
	}
	var left int
	if err := f.pg.Pool.QueryRow(ctx, "SELECT count(*) FROM "+f.pg.Ref("_weir_state")+" WHERE source LIKE '%#bucket/%'").Scan(&left); err != nil || left == 0 {
		t.Fatalf("plan A left %d bucket rows (%v); the case needs its take-over's row", left, err)
	}
	f.pg.Exec(t, ctx, fmt.Sprintf("INSERT INTO %s SELECT g, 'r', g %% 97 FROM generate_series(4001, 8000) g", f.pg.Ref("ev")))
	if code, out := runCmd(t, "backfill", "--task", "ev", "--shards", "3", "--claims", claims, "-f", f.dagf); code != ExitOK {
		t.Fatalf("backfill B: exit %d: %s", code, out)
	}
	if bs := backfillStatus(t, f.dagf, claims); bs == nil || len(bs.Buckets) != 3 || bs.Buckets[0].After != "4000" || bs.Buckets[0].Progress != "4000" || bs.Buckets[2].Until != "8000" {
		t.Fatalf("weir status --claims for plan B: %+v; want 3 buckets from 4000 to 8000, bucket 0 at 4000", bs)
	}
	model := func() {
		t.Helper()
		if code, out := runCmd(t, "once", "--task", "copy", "-f", f.dagf); code != ExitOK && code != ExitTempFail {
			t.Fatalf("weir once --task copy: exit %d: %s", code, out)
		}
		if n, d, top := copyCheck(t, f, "copy"); n != d || n != top {
			t.Fatalf("copy holds %d rows, %d distinct, max %d; want ids 1…max once", n, d, top)
		}
	}
	var ws []*child
	for range 2 {
		ws = append(ws, startChild(t, nil, "worker", "--task", "ev", "--claims", claims, "-f", f.dagf, "--lease", "2s", "--chunk-keys", "300", "--wait"))
	}
	for _, w := range ws {
		for running := true; running; {
			model()
			select {
			case <-w.done:
				running = false
			default:
			}
		}
		if code := w.exitCode(); code != ExitOK {
			t.Fatalf("a worker of plan B exited %d:\n%s", code, w.log())
		}
	}
	model()
	f.rows = 8000
	f.check(t, "8000")
	if n, d, top := copyCheck(t, f, "copy"); n != 8000 || d != 8000 || top != 8000 {
		t.Errorf("copy after plan B: %d rows, %d distinct, max %d; want 8000 each", n, d, top)
	}
}
