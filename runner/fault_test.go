package runner

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
)

// Env of the helper process: the dagfile and the task it runs.
const (
	helperDagfile = "WEIR_HELPER_DAGFILE"
	helperTask    = "WEIR_HELPER_TASK"
	helperSIGTERM = "WEIR_HELPER_SIGTERM"
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
	if err == nil {
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
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperDagfile+"="+path, helperTask+"="+task, routes.CheckpointEnv+"="+phase)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
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
