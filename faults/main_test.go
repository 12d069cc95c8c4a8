package faults_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// weirBin is the weir binary TestMain builds, with the test's build flags.
var weirBin string

// Case counters for the summary line.
var passed, failed, skipped atomic.Int64

// parallel is how many destinations run at once unless -test.parallel
// says otherwise: a child spends most of its time waiting on servers.
const parallel = "4"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", parallel)
	}
	dir, err := os.MkdirTemp("", "weir-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	weirBin = filepath.Join(dir, "weir")
	build := exec.Command("go", "build", "-o", weirBin, "github.com/weirhq/weir/cmd/weir")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build weir:", err)
		os.Exit(1)
	}
	postgrestest.UseOwnDatabase("weir_pkg_faults")
	code := m.Run()
	os.RemoveAll(dir)
	fmt.Printf("%d passed, %d failed\n", passed.Load(), failed.Load())
	if n := skipped.Load(); n > 0 {
		fmt.Printf("%d skipped\n", n)
	}
	os.Exit(code)
}

// runCase is t.Run for one case of the suite, counted for the summary.
func runCase(t *testing.T, name string, fn func(t *testing.T)) bool {
	return t.Run(name, func(t *testing.T) {
		defer func() {
			switch {
			case t.Failed():
				failed.Add(1)
			case t.Skipped():
				skipped.Add(1)
			default:
				passed.Add(1)
			}
		}()
		fn(t)
	})
}

// result is how a weir child ended.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stderr:\n%s", r.code, r.stderr)
}

// weir runs the binary to its end (bounded by ctx) with extra environment.
func weir(ctx context.Context, t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, weirBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ctx.Err() != nil {
			t.Fatalf("weir %s: %v (stderr: %s)", strings.Join(args, " "), ctx.Err(), errb.String())
		}
	default:
		t.Fatalf("weir %s: %v", strings.Join(args, " "), err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// mustWeir runs weir and fails the test unless it exits 0.
func mustWeir(ctx context.Context, t *testing.T, args ...string) result {
	t.Helper()
	r := weir(ctx, t, nil, args...)
	if r.code != 0 {
		t.Fatalf("weir %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// weirRetry runs weir until it is not refused with exit 75 (a killed run's
// lease that has not expired yet), the way a scheduler retries it.
func weirRetry(ctx context.Context, t *testing.T, args ...string) result {
	t.Helper()
	for {
		r := weir(ctx, t, nil, args...)
		if r.code != 75 {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("still locked when the test's time ran out: %s", r)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// paused is a weir child stopped at a checkpoint.
type paused struct {
	cmd    *exec.Cmd
	resume string // the file whose creation lets it go on
	stderr *lockedBuffer
	done   chan struct{}
}

// startPaused starts weir with WEIR_FAULT_PAUSE=phase and waits until it
// says it paused there. It fails the test if the child ends first.
func startPaused(ctx context.Context, t *testing.T, phase string, args ...string) *paused {
	t.Helper()
	p, ok := tryPaused(ctx, t, phase, args...)
	if !ok {
		p.wait()
		t.Fatalf("weir ended without pausing at %s: exit %d, stderr:\n%s", phase, p.cmd.ProcessState.ExitCode(), p.stderr)
	}
	return p
}

// tryPaused starts weir paused at phase; false when the child ended (or
// the time ran out) before it paused.
func tryPaused(ctx context.Context, t *testing.T, phase string, args ...string) (*paused, bool) {
	t.Helper()
	p := &paused{resume: filepath.Join(t.TempDir(), "resume"), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(weirBin, args...)
	p.cmd.Env = append(os.Environ(), routes.CheckpointEnv+"="+phase, routes.ResumeEnv+"="+p.resume)
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	reached := make(chan bool, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pipe)
		said := false
		for sc.Scan() {
			p.stderr.add(sc.Text())
			if !said && sc.Text() == "weir: paused at "+phase {
				said = true
				reached <- true
			}
		}
		if !said {
			reached <- false
		}
	}()
	select {
	case ok := <-reached:
		return p, ok
	case <-ctx.Done():
		return p, false
	}
}

// kill ends the child with SIGKILL: nothing of weir runs after it.
func (p *paused) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.wait()
	}
}

// wait waits for the child to end and returns its exit code.
func (p *paused) wait() int {
	<-p.done
	p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

// goOn lets the paused child continue and waits for its end.
func (p *paused) goOn(t *testing.T) result {
	t.Helper()
	if err := os.WriteFile(p.resume, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code := p.wait()
	return result{code: code, stderr: p.stderr.String()}
}

// lockedBuffer collects a child's stderr lines.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
