package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestMain runs the CLI itself when WEIR_TEST_MAIN holds its arguments (a
// JSON array), so a test can start weir under a pty without a build.
func TestMain(m *testing.M) {
	if a := os.Getenv("WEIR_TEST_MAIN"); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Args = append([]string{"weir"}, args...)
		main()
	}
	postgrestest.UseOwnDatabase("weir_pkg_cmd")
	os.Exit(m.Run())
}

func pct(f float64) *float64 { return &f }

// TestProgressEventAt: percent and ETA are estimates that never claim the
// end: capped at 99 past the estimate (no ETA then), absent without one.
func TestProgressEventAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		rows, est  int64
		elapsed    time.Duration
		pct, eta   *float64
		tty, plain string
	}{
		{"halfway", 500, 1000, 10 * time.Second, pct(50), pct(10), "500 rows  50 rows/s  0.0 MB/s  ~50%  eta ~10s  10s", "pct_est=50.0 eta_est=10s elapsed=10s"},
		{"just below", 999_999, 1_000_000, time.Second, pct(99), pct(0), "~99%  eta ~0s", "pct_est=99.0"},
		{"estimate exceeded", 2000, 1000, 4 * time.Second, pct(99), nil, "2,000 rows  500 rows/s  0.0 MB/s  ~99%  4s", "pct_est=99.0 eta_est=unknown"},
		{"no estimate", 7, 0, time.Second, nil, nil, "7 rows  7 rows/s  0.0 MB/s  1s", "pct_est=unknown eta_est=unknown"},
		{"nothing yet", 0, 1000, time.Second, pct(0), nil, "0 rows  0 rows/s  0.0 MB/s  ~0%  1s", "pct_est=0.0 eta_est=unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := progressEventAt(routes.ProgressStats{Table: "s.t", Rows: tc.rows, Estimate: tc.est}, "r1", tc.elapsed, now)
			if !eqPtr(ev.PctEst, tc.pct) || !eqPtr(ev.ETAEstS, tc.eta) {
				t.Errorf("pct %v eta %v, want %v %v", show(ev.PctEst), show(ev.ETAEstS), show(tc.pct), show(tc.eta))
			}
			if l := ev.ttyLine(); !strings.Contains(l, tc.tty) {
				t.Errorf("tty line %q lacks %q", l, tc.tty)
			}
			if l := ev.plainLine(); !strings.HasPrefix(l, "progress run_id=r1 table=s.t rows=") || !strings.Contains(l, tc.plain) {
				t.Errorf("plain line %q lacks %q", l, tc.plain)
			}
		})
	}
}

func eqPtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// progressSource makes a PostgreSQL table of n rows, analyzed so the probe's
// estimate is close.
func progressSource(t *testing.T, n int) *postgrestest.Fixture {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 5*time.Minute)
	f.Exec(t, ctx,
		"CREATE TABLE "+f.Ref("src")+" (id bigint PRIMARY KEY, name text, v double precision)",
		fmt.Sprintf("INSERT INTO %s SELECT g, 'name-' || g, g * 0.5 FROM generate_series(1, %d) g", f.Ref("src"), n),
		"ANALYZE "+f.Ref("src"))
	return f
}

// TestTransferProgress: a PostgreSQL→PostgreSQL passthrough (which decodes
// nothing, so rows are counted in the COPY stream) reports its progress on
// a terminal (rows/s, ~%, ETA), as periodic key=value lines when stderr is
// not one, and as JSON lines whose rows grow and whose percent reaches 100
// only in the last line.
func TestTransferProgress(t *testing.T) {
	const n = 2_000_000
	f := progressSource(t, n)
	transfer := func(dest string, extra ...string) []string {
		return append([]string{"transfer", f.URL(), f.URL(), "--table", f.Ref("src"), "--dest-table", f.Ref(dest), "--parallel", "2"}, extra...)
	}

	t.Run("tty", func(t *testing.T) {
		// Frames every 100 ms: on an idle machine the 2M rows take about a
		// second, so the default redraw (1 s) may draw only the last frame.
		args, _ := json.Marshal(transfer("tty", "--progress-interval", "100ms"))
		ctx := routestest.Context(t, 3*time.Minute)
		cmd := exec.CommandContext(ctx, "script", "-q", "-e", "-c", os.Args[0]+" -test.run=^$", "/dev/null")
		cmd.Env = append(os.Environ(), "WEIR_TEST_MAIN="+string(args))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("weir under a pty: %v\n%s", err, out)
		}
		line := regexp.MustCompile(`[\d,]+ rows  [\d,]+ rows/s  [\d.]+ MB/s  ~\d+%  eta ~\S+  \S+  ` + regexp.QuoteMeta(f.Ref("src")))
		frames := strings.Split(string(out), "\r")
		var drawn int
		for _, fr := range frames {
			if line.MatchString(fr) {
				drawn++
			}
		}
		t.Logf("pty capture (%d frames):\n%s", len(frames), strings.ReplaceAll(string(out), "\r", "\n"))
		if drawn == 0 {
			t.Fatalf("no progress line with rows/s, ~%% and eta in the pty capture:\n%q", out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("%d rows", n)) {
			t.Errorf("no summary of %d rows:\n%q", n, out)
		}
	})

	t.Run("plain", func(t *testing.T) {
		code, _, stderr := runCmdErr(t, transfer("plain", "--progress", "plain", "--progress-interval", "50ms")...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		re := regexp.MustCompile(`^progress run_id=\S+ table=` + regexp.QuoteMeta(f.Ref("src")) + ` rows=(\d+) rows_per_s=\d+ mb_per_s=[\d.]+ pct_est=[\d.]+ eta_est=\S+ elapsed=\S+( done=true ok=true)?$`)
		var lines, moving int
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if !strings.HasPrefix(l, "progress ") {
				continue
			}
			m := re.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("bad progress line %q", l)
			}
			lines++
			if m[2] == "" && m[1] != "0" && m[1] != fmt.Sprint(n) {
				moving++
			}
		}
		t.Logf("stderr:\n%s", stderr)
		if lines < 3 || moving == 0 {
			t.Fatalf("%d progress lines, %d mid-transfer with rows counted; want periodic lines while rows move", lines, moving)
		}
	})

	t.Run("json", func(t *testing.T) {
		code, _, stderr := runCmdErr(t, transfer("json", "--progress", "json", "--progress-interval", "50ms")...)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		var evs []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if !strings.HasPrefix(l, "{") {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			evs = append(evs, ev)
		}
		if len(evs) < 3 {
			t.Fatalf("%d JSON progress lines, want periodic ones:\n%s", len(evs), stderr)
		}
		var last float64
		for i, ev := range evs {
			for _, k := range []string{"type", "time", "run_id", "table", "rows", "bytes", "rows_per_s", "mb_per_s", "pct_est", "elapsed_s", "done"} {
				if _, ok := ev[k]; !ok {
					t.Fatalf("line %d lacks %q: %v", i, k, ev)
				}
			}
			// Lines before the probe name no table yet.
			if ev["type"] != "progress" || (ev["table"] != f.Ref("src") && ev["table"] != "") || ev["run_id"] != evs[0]["run_id"] {
				t.Fatalf("line %d: %v", i, ev)
			}
			rows := ev["rows"].(float64)
			if rows < last {
				t.Fatalf("rows went back from %v to %v", last, rows)
			}
			last = rows
			end := i == len(evs)-1
			if ev["done"] != end {
				t.Fatalf("line %d of %d: done=%v", i, len(evs), ev["done"])
			}
			if p := ev["pct_est"].(float64); (p >= 100) != end {
				t.Fatalf("line %d of %d: pct_est=%v", i, len(evs), p)
			}
		}
		if last != n || evs[len(evs)-1]["ok"] != true {
			t.Fatalf("last line %v, want rows=%d ok=true", evs[len(evs)-1], n)
		}
	})
}

// TestOnceProgressJSON: weir once (what generated DAG tasks run) reports a
// transfer task's progress too, under the report's run id.
func TestOnceProgressJSON(t *testing.T) {
	const n = 300_000
	f := progressSource(t, n)
	path := filepath.Join(t.TempDir(), "weir.yaml")
	dag := fmt.Sprintf("version: 1\nconnections:\n  pg: %q\ntasks:\n  copy:\n    transfer: {from: pg, table: %s, to: pg, dest_table: %s}\n",
		f.URL(), f.Ref("src"), f.Ref("once"))
	if err := os.WriteFile(path, []byte(dag), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	root := newRoot()
	root.SetArgs([]string{"once", "--task", "copy", "-f", path, "--json", "--progress", "json", "--progress-interval", "20ms"})
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.ExecuteContext(routestest.Context(t, 3*time.Minute)); err != nil {
		t.Fatalf("once: %v\n%s", err, errb.String())
	}
	var rep struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.RunID == "" {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	var lines int
	var last map[string]any
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if last["run_id"] != rep.RunID {
			t.Fatalf("progress run_id %v, report's %s", last["run_id"], rep.RunID)
		}
		lines++
	}
	if lines < 2 || last["done"] != true || last["rows"] != float64(n) {
		t.Fatalf("%d progress lines, last %v; want periodic lines ending with done and %d rows:\n%s", lines, last, n, errb.String())
	}
}
