package pgwal

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// childEnv carries a Config (JSON) to the child process of
// TestRun_KilledInApply.
const childEnv = "WEIR_CDC_CHILD_CONFIG"

// TestMain doubles as the child process of TestRun_KilledInApply: with
// childEnv set it runs one Run (to be killed at a checkpoint) instead of
// the tests.
func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		os.Exit(childRun(raw))
	}
	postgrestest.UseOwnDatabase("weir_pkg_pgwal")
	os.Exit(m.Run())
}

func childRun(raw string) int {
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestRun_KilledInApply: SIGKILL with the window applied but not committed
// leaves the destination, its position and the slot's confirmed position
// as they were; the next run drains and applies the same window.
func TestRun_KilledInApply(t *testing.T) {
	for _, kind := range destinations {
		t.Run(kind, func(t *testing.T) {
			e := setupTo(t, kind)
			e.run()
			e.workload()
			e.exec(`TRUNCATE ` + ident(e.src))
			e.exec(`INSERT INTO ` + ident(e.src) + ` VALUES (5, 'post', 5, ` + bigText + `)`)
			before := e.hash(e.dst)
			killChildAt(t, e.cfg, "apply-before-commit")
			if got := e.hash(e.dst); got != before {
				t.Fatalf("killed apply changed the destination: %s, was %s", got, before)
			}
			if res := e.runOK(); res.Truncates != 1 { // an Iceberg lease outlives the kill a moment
				t.Errorf("re-run = %+v, want the whole window again (1 truncate)", res)
			}
			e.assertEqual("re-run after the kill")
			if kind == "clickhouse" { // the dead run's input table went with its other leftovers
				q := "SELECT toString(count()) FROM system.tables WHERE database = '" + e.ddb.Schema + "' AND startsWith(name, '_weir_cdcin_')"
				if n := e.ddb.Query(t, e.ctx, q); n != "0" {
					t.Errorf("%s input tables left after the re-run, want 0", n)
				}
			}
		})
	}
}

// killChildAt runs Run in a child process, waits until it pauses at the
// phase (routes.Checkpoint) and kills it with SIGKILL.
func killChildAt(t *testing.T, cfg Config, phase string) {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), routes.CheckpointEnv+"="+phase, childEnv+"="+string(raw))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "weir: paused at "+phase) {
				paused <- true
			}
		}
		close(paused)
	}()
	select {
	case ok := <-paused:
		if !ok {
			t.Fatalf("child ended without pausing at %s", phase)
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("child did not reach %s", phase)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killLease(cfg.DestURL)
}

// killLease waits out a killed run's lock where it is a lease (ClickHouse:
// the tests' URLs set lease=2s; the server counts its age in whole
// seconds), so the next run may take the table over.
func killLease(destURL string) {
	if strings.HasPrefix(destURL, "clickhouse") {
		time.Sleep(3500 * time.Millisecond)
	}
}
