package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// Env of the helper process: the dagfile and the task it runs.
const (
	helperDagfile = "WEIR_HELPER_DAGFILE"
	helperTask    = "WEIR_HELPER_TASK"
	helperSIGTERM = "WEIR_HELPER_SIGTERM"
	helperReset   = "WEIR_HELPER_FULL_REFRESH" // the child runs reset --to earliest --full-refresh instead
)

// TestMain doubles as the fault tests' child process: with the helper
// env set it runs one task (to be killed at a checkpoint) instead of the
// tests, which is faster than building the CLI.
func TestMain(m *testing.M) {
	if path := os.Getenv(helperDagfile); path != "" {
		os.Exit(helperProcess(path, os.Getenv(helperTask)))
	}
	os.Exit(m.Run())
}

func helperProcess(path, task string) int {
	ctx := context.Background()
	if os.Getenv(helperSIGTERM) != "" { // the continuous stream test stops the child with SIGTERM
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGTERM)
		defer stop()
	}
	r, err := Load(path, Options{})
	switch {
	case err == nil && os.Getenv(helperReset) != "":
		_, err = r.ResetWith(ctx, task, "earliest", ResetOptions{FullRefresh: true})
	case err == nil:
		_, err = r.Once(ctx, task)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "weir:", err)
		return 1
	}
	return 0
}

// runKilled runs task in a child process paused at phase, then kills it
// with SIGKILL: a crash at that point of the run.
func runKilled(t *testing.T, path, task, phase string) {
	t.Helper()
	cmd := startPaused(t, path, task, phase)
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	waitBackendsGone(t, cmd)
}

// childAppName is the PostgreSQL application_name of a child's
// connections (PGAPPNAME, which pgx reads), so that a test can tell them.
func childAppName(cmd *exec.Cmd) string {
	for _, e := range cmd.Env {
		if v, ok := strings.CutPrefix(e, "PGAPPNAME="); ok {
			return v
		}
	}
	return ""
}

// waitBackendsGone waits until PostgreSQL has ended the backends of a
// killed child: the server releases a dead client's session locks (the
// sink's advisory lock) only when its backend reads the closed socket,
// which on a loaded machine comes after the next run asked for the lock
// (it failed as locked, exit 75: what a scheduler retries, not what the
// kill tests are about).
func waitBackendsGone(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	pg, app := os.Getenv("WEIR_TEST_PG"), childAppName(cmd)
	if pg == "" || app == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg)
	if err != nil {
		t.Fatalf("wait for the killed child's backends: %v", err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			t.Fatalf("wait for the killed child's backends: %v", err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the killed child's %d PostgreSQL backends did not end within 30 s", n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startPaused runs task in a child process and returns once it is paused
// at phase (alive, holding what it holds there).
func startPaused(t *testing.T, path, task, phase string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperDagfile+"="+path, helperTask+"="+task, routes.CheckpointEnv+"="+phase,
		"PGAPPNAME="+routestest.Name("weir_child"))
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	paused := make(chan bool, 1)
	var out strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if sc.Text() == "weir: paused at "+phase {
				paused <- true
				return
			}
		}
		paused <- false
	}()
	select {
	case ok := <-paused:
		if !ok {
			cmd.Wait()
			t.Fatalf("%s never reached %s:\n%s", task, phase, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not reach %s in time", task, phase)
	}
	return cmd
}

// TestRunner_LockTakeoverAfterKill: a run holding the sink's lease (an
// Iceberg SQL catalog) excludes a second live run (exit 75); once it is
// killed with SIGKILL, the next run takes the lease over at once — not
// after the lease's TTL (60 s) — and commits the batch exactly once.
func TestRunner_LockTakeoverAfterKill(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	d.orders(t, 1, 100)
	once(t, r, "bronze_orders")
	for round := range 3 {
		child := startPaused(t, d.path, "silver_log", "before-commit")
		if _, err := r.Once(testContext(t), "silver_log"); !errors.Is(err, routes.ErrLocked) {
			t.Fatalf("round %d: a second run while the first holds the lease: got %v, want ErrLocked", round, err)
		}
		child.Process.Kill() // SIGKILL
		child.Wait()
		start := time.Now()
		rep, err := r.Once(testContext(t), "silver_log")
		if err != nil {
			t.Fatalf("round %d: the run after the kill (%s later): %v", round, time.Since(start).Round(time.Millisecond), err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("round %d: the run after the kill took %s", round, took)
		}
		if want := int64(100 * (round + 1)); rep.RowsOut != 100 || lakeCount(t, r, "silver.log") != want {
			t.Fatalf("round %d: silver.log has %d rows, want %d (report %+v)", round, lakeCount(t, r, "silver.log"), want, rep)
		}
		d.orders(t, 1, 100*(round+2))
		once(t, r, "bronze_orders")
	}
}

func lakeCount(t *testing.T, r *Runner, table string) int64 {
	return int64(len(lakeRows(t, r, table)))
}

// TestRunner_KillAnywhere: a run killed at any phase, then run again,
// leaves the sinks (and the quarantine) exactly as an uninterrupted run.
func TestRunner_KillAnywhere(t *testing.T) {
	phases := []string{"poll", "before-quarantine-commit", "before-commit", "commit"}
	for _, phase := range phases {
		t.Run(phase, func(t *testing.T) {
			t.Parallel()
			killed, clean := newPGDAG(t, medallionYAML), newPGDAG(t, medallionYAML)
			rk, rc := killed.runner(t), clean.runner(t)
			for _, first := range []int{1, 101} {
				for _, d := range []*pgDAG{killed, clean} {
					d.insertOrders(t, first, 100)
				}
				once(t, rk, "bronze_orders")
				once(t, rc, "bronze_orders")
				for _, task := range []string{"silver_orders", "silver_log"} {
					if phase != "before-quarantine-commit" || task == "silver_orders" {
						runKilled(t, killed.path, task, phase)
					}
					once(t, rk, task)
					once(t, rc, task)
				}
			}
			assertSameSinks(t, killed, clean)
		})
	}
}

// assertSameSinks compares the silver tables and the quarantine (without
// its run ids) of two DAGs.
func assertSameSinks(t *testing.T, a, b *pgDAG) {
	t.Helper()
	for _, table := range []string{"silver_orders", "silver_log"} {
		if ha, hb := a.hash(t, table, "id"), b.hash(t, table, "id"); ha != hb {
			t.Errorf("%s: killed run %s, clean run %s", table, ha, hb)
		}
	}
	q := func(d *pgDAG) string {
		var s string
		err := d.fx.Pool.QueryRow(testContext(t), fmt.Sprintf(`SELECT count(*) || ':' || coalesce(md5(string_agg(id || '/' || _weir_reason, ',' ORDER BY id)), '')
FROM %s.silver_orders__quarantine`, d.s)).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if qa, qb := q(a), q(b); qa != qb || strings.HasPrefix(qa, "0:") {
		t.Errorf("quarantine: killed run %s, clean run %s", qa, qb)
	}
}
