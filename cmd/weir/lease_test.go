package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// child is weir running as its own process (this test binary with
// WEIR_TEST_MAIN), so it can be SIGKILLed.
type child struct {
	cmd    *exec.Cmd
	stderr strings.Builder
	mu     sync.Mutex
	paused chan struct{} // closed when it says "weir: paused at …"
	done   chan struct{}
}

func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	a, _ := json.Marshal(args)
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), paused: make(chan struct{}), done: make(chan struct{})}
	c.cmd.Env = append(append(os.Environ(), "WEIR_TEST_MAIN="+string(a)), env...)
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Signal(syscall.SIGKILL); <-c.done })
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(pipe)
		paused := false // a resumed child says so again at each later checkpoint
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			if strings.HasPrefix(sc.Text(), "weir: paused at ") && !paused {
				paused = true
				close(c.paused)
			}
		}
		c.cmd.Wait()
	}()
	return c
}

func (c *child) exitCode() int { <-c.done; return c.cmd.ProcessState.ExitCode() }

func (c *child) log() string { c.mu.Lock(); defer c.mu.Unlock(); return c.stderr.String() }

// TestTransferCmd_LockTakeoverAfterKill: a run holding a file:// table's
// lease (paused before its commit) keeps it past the lease's TTL — a live
// holder is never taken over — and once it is SIGKILLed the next run takes
// the table over and commits within 10 s (it was the whole minute of the
// old default lease).
func TestTransferCmd_LockTakeoverAfterKill(t *testing.T) {
	src := postgrestest.New(t)
	dst := objstoretest.NewFile(t)
	ctx := routestest.Context(t, 3*time.Minute)
	src.Create(t, ctx, "src", routestest.Rows(1, 500))
	args := []string{"transfer", src.URL(), dst.URL(), "--table", src.Ref("src"), "--dest-table", "t"}

	holder := startChild(t, []string{routes.CheckpointEnv + "=before-commit"}, args...)
	select {
	case <-holder.paused:
	case <-holder.done:
		t.Fatalf("the holder ended before its commit: exit %d\n%s", holder.exitCode(), holder.log())
	case <-ctx.Done():
		t.Fatalf("the holder never paused:\n%s", holder.log())
	}
	time.Sleep(objstore.DefaultLease + time.Second) // past one TTL: only the holder's renewals keep the lease
	if code, out := runCmd(t, args...); code != ExitTempFail {
		t.Fatalf("a run while the holder lives exited %d, want %d (locked): %s", code, ExitTempFail, out)
	}

	holder.cmd.Process.Signal(syscall.SIGKILL)
	holder.exitCode()
	killed := time.Now()
	for {
		code, out := runCmd(t, args...)
		if code == ExitOK {
			break
		}
		if code != ExitTempFail {
			t.Fatalf("the run after the kill exited %d: %s", code, out)
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("the table is still locked %s after its holder was killed", time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("taken over and committed %s after the kill", took.Round(time.Millisecond))
	if took >= 10*time.Second {
		t.Errorf("took %s after the kill, want < 10s", took)
	}
	if rows, ok := dst.Read(t, ctx, "t"); !ok || len(rows) != 500 {
		t.Errorf("the table has %d rows, want 500", len(rows))
	}
}

// TestTransferCmd_LockRaceDefaultLease: two live runs started together on
// one file:// table with the default (short) lease, round after round with
// new source rows, released together from the probe, never both commit a batch: each
// exits 0 or 75, and the table holds every source row exactly once.
func TestTransferCmd_LockRaceDefaultLease(t *testing.T) {
	const rounds, batch = 20, 25
	src := postgrestest.New(t)
	dst := objstoretest.NewFile(t)
	ctx := routestest.Context(t, 5*time.Minute)
	src.Create(t, ctx, "src", routestest.Rows(1, batch))
	args := []string{"transfer", src.URL(), dst.URL(), "--table", src.Ref("src"), "--dest-table", "t", "--mode", "append", "--cursor", "id"}
	refused := 0
	for round := range rounds {
		if round > 0 {
			src.Insert(t, ctx, "src", routestest.Rows(int64(round*batch+1), int64((round+1)*batch)))
		}
		// Both wait at the probe (before the lock) until the resume file
		// exists, then go for the lock at the same instant.
		resume := filepath.Join(t.TempDir(), "go")
		env := []string{routes.CheckpointEnv + "=probe", routes.ResumeEnv + "=" + resume}
		runs := []*child{startChild(t, env, args...), startChild(t, env, args...)}
		for _, c := range runs {
			select {
			case <-c.paused:
			case <-c.done:
				t.Fatalf("round %d: a run ended before the probe: exit %d\n%s", round, c.exitCode(), c.log())
			}
		}
		if err := os.WriteFile(resume, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range runs {
			switch code := c.exitCode(); code {
			case ExitOK:
			case ExitTempFail:
				refused++
			default:
				t.Fatalf("round %d: a run exited %d:\n%s", round, code, c.log())
			}
		}
		rows, _ := dst.Read(t, ctx, "t")
		seen := map[int64]int{}
		for _, r := range rows {
			seen[r.ID]++
		}
		want := (round + 1) * batch
		if len(rows) != want || len(seen) != want {
			t.Fatalf("round %d: %d rows (%d distinct ids), want each of %d once", round, len(rows), len(seen), want)
		}
	}
	t.Log(fmt.Sprintf("%d rounds: %d runs refused with exit 75", rounds, refused))
}
