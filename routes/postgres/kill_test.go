package postgres_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestMain doubles as the child process of TestTransfer_KilledInCommit:
// with WEIR_CHILD_SCHEMA set it runs one append copy (to be killed at a
// checkpoint) instead of the tests.
func TestMain(m *testing.M) {
	if schema := os.Getenv("WEIR_CHILD_SCHEMA"); schema != "" {
		os.Exit(childCopy(schema))
	}
	os.Exit(m.Run())
}

func childCopy(schema string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := os.Getenv(postgrestest.Env)
	spec := routes.CopySpec{Table: routes.TableRef{Schema: schema, Name: "src"}, DestTable: routes.TableRef{Schema: schema, Name: "app"},
		Mode: routes.ModeAppend}
	if _, err := incremental.CopyURLs(ctx, url, url, spec, ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestTransfer_KilledInCommit: SIGKILL inside the commit transaction (and
// just before it) leaves the rows and the watermark as they were; the next
// run takes the lock, drops the stale staging table and resumes exactly.
func TestTransfer_KilledInCommit(t *testing.T) {
	for _, phase := range []string{"before-commit", "commit"} {
		t.Run(phase, func(t *testing.T) {
			f := postgrestest.New(t)
			ctx := routestest.Context(t, 2*time.Minute)
			f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src (id int8 PRIMARY KEY, v text); INSERT INTO %s.src SELECT g, 'x' FROM generate_series(1, 100) g`, f.Schema, f.Schema))
			mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend })
			f.Exec(t, ctx, fmt.Sprintf(`INSERT INTO %s.src SELECT g, 'y' FROM generate_series(101, 150) g`, f.Schema))
			killChildAt(t, f, phase)
			if _, n := f.Hash(t, ctx, f.Ref("app"), "x.id"); n != 100 {
				t.Fatalf("destination has %d rows after the kill, want 100", n)
			}
			var wm string
			f.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT watermark FROM %s._weir_state`, f.Schema)).Scan(&wm)
			if wm != "100" {
				t.Fatalf("watermark %q after the kill, want 100", wm)
			}
			mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend })
			expectSame(ctx, t, f, "src", "app")
			expectNoStaging(ctx, t, f)
		})
	}
}

// killChildAt runs a copy in a child process, waits until it pauses at the
// phase, and kills it with SIGKILL.
func killChildAt(t *testing.T, f *postgrestest.Fixture, phase string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), routes.CheckpointEnv+"="+phase, "WEIR_CHILD_SCHEMA="+f.Schema)
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
	case <-time.After(time.Minute):
		t.Fatalf("child did not reach %s", phase)
	}
	cmd.Process.Kill()
	cmd.Wait()
}
