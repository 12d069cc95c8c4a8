package mysql

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

var errInjected = errors.New("injected failure between load and commit")

// failCommit makes every commit transaction fail right before COMMIT (at
// the commit checkpoint) until the returned func is called.
func failCommit(t *testing.T) (heal func()) {
	heal = routes.SetCheckpointHook(func(phase string) error {
		if phase == "commit" {
			return errInjected
		}
		return nil
	})
	t.Cleanup(heal)
	return heal
}

// stateOf returns the saved watermark and rows of dst.name from src.name.
func stateOf(t *testing.T, ctx context.Context, src, dst *mysqltest.Fixture, name string) (string, int64) {
	t.Helper()
	s, ok, err := openEndpoint(t, dst, "").LoadState(ctx, ref(dst, name), sourceIDOf(src, name))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "none", 0
	}
	return s.Watermark, s.Rows
}

func sourceIDOf(f *mysqltest.Fixture, name string) string {
	u, _ := routes.ParseURL(f.URL())
	return u.Identity() + "#" + f.Ref(name)
}

func run(t *testing.T, ctx context.Context, src, dst *mysqltest.Fixture, name string, mode routes.Mode) error {
	t.Helper()
	spec := routes.CopySpec{Table: ref(src, name), DestTable: ref(dst, name), Mode: mode, Budget: routes.Budget{Parallel: 2, ChunkBytes: 64 << 10}}
	return transfer(ctx, src.URL(), dst.URL(), spec)
}

func expectDest(t *testing.T, ctx context.Context, dst *mysqltest.Fixture, name string, want []routestest.Row) {
	t.Helper()
	got, _ := dst.Read(t, ctx, name)
	if len(got) != len(want) {
		t.Fatalf("destination has %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d:\n got %s\nwant %s", want[i].ID, got[i], want[i])
		}
	}
	if left := dst.Staging(t, ctx, name); len(left) > 0 {
		t.Fatalf("staging left: %v", left)
	}
}

// TestCommit_AppendFailureKeepsDataAndState: a failure after the load,
// inside the commit transaction, leaves the rows and _weir_state as they
// were; the retry appends exactly the new rows.
func TestCommit_AppendFailureKeepsDataAndState(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	for range 3 { // first run; then reruns with nothing new are no-ops
		if err := run(t, ctx, src, dst, "t", routes.ModeAppend); err != nil {
			t.Fatal(err)
		}
	}
	if w, n := stateOf(t, ctx, src, dst, "t"); w != "10" || n != 10 {
		t.Fatalf("after the first append: watermark %s rows %d", w, n)
	}
	src.Insert(t, ctx, "t", routestest.Rows(11, 20))
	heal := failCommit(t)
	if err := run(t, ctx, src, dst, "t", routes.ModeAppend); !errors.Is(err, errInjected) {
		t.Fatalf("got %v, want the injected failure", err)
	}
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 10))
	if w, _ := stateOf(t, ctx, src, dst, "t"); w != "10" {
		t.Fatalf("watermark moved to %s with the rows rolled back", w)
	}
	heal()
	if err := run(t, ctx, src, dst, "t", routes.ModeAppend); err != nil {
		t.Fatal(err)
	}
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 20))
	if w, n := stateOf(t, ctx, src, dst, "t"); w != "20" || n != 10 {
		t.Fatalf("after the retry: watermark %s rows %d, want 20 and 10", w, n)
	}
}

// TestCommit_Merge: merge upserts changed rows and inserts new ones, keeps
// everything on an injected failure, and is idempotent on replay.
func TestCommit_Merge(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	dst.Create(t, ctx, "t", routestest.Rows(1, 10))
	src.Exec(t, ctx, "UPDATE "+src.Ref("t")+" SET name = CONCAT('changed ', id), amount = -amount WHERE id <= 3")
	src.Insert(t, ctx, "t", routestest.Rows(11, 12))
	want, _ := src.Read(t, ctx, "t")
	heal := failCommit(t)
	if err := mergeAll(t, ctx, src, dst); !errors.Is(err, errInjected) {
		t.Fatalf("got %v, want the injected failure", err)
	}
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 10))
	if w, _ := stateOf(t, ctx, src, dst, "t"); w != "none" {
		t.Fatalf("state saved (%s) with the rows rolled back", w)
	}
	heal()
	for range 2 {
		if err := mergeAll(t, ctx, src, dst); err != nil {
			t.Fatal(err)
		}
		expectDest(t, ctx, dst, "t", want)
	}
}

// mergeAll merges the whole source (no watermark), as a replay would.
func mergeAll(t *testing.T, ctx context.Context, src, dst *mysqltest.Fixture) error {
	_, err := copyOnce(ctx, src, dst, routes.CopySpec{Table: ref(src, "t"), DestTable: ref(dst, "t"), Mode: routes.ModeMerge})
	return err
}

// TestCommit_ReplaceRollForward: a replace that dies after its swap and
// before its state write leaves the state in the new table's comment;
// LoadState returns it and the next run's Prepare saves it.
func TestCommit_ReplaceRollForward(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	if err := run(t, ctx, src, dst, "t", routes.ModeReplace); err != nil {
		t.Fatal(err)
	}
	src.Insert(t, ctx, "t", routestest.Rows(11, 15))
	heal := failCommit(t)
	err := run(t, ctx, src, dst, "t", routes.ModeReplace)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "swapped in") {
		t.Fatalf("got %v, want the injected failure after the swap", err)
	}
	heal()
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 15))
	if w, n := stateOf(t, ctx, src, dst, "t"); w != "" || n != 15 {
		t.Fatalf("LoadState of the pending replace: watermark %q rows %d, want none (a replace has no window) and 15", w, n)
	}
	stage, err := prepareStage(t, ctx, src, dst, "t", routes.ModeAppend, "next0001")
	if err != nil {
		t.Fatal(err)
	}
	stage.Abort(ctx)
	row := queryStrings(t, ctx, dst, "SELECT CONCAT(COALESCE(watermark, ''), ' ', `rows`) FROM _weir_state")
	comment := queryStrings(t, ctx, dst, "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 't'", dst.Database)
	if fmt.Sprint(row) != "[ 15]" || fmt.Sprint(comment) != "[]" {
		t.Errorf("after roll-forward: state %v, comment %q", row, comment)
	}
}

// helperEnv carries the killed child's work.
const helperEnv = "WEIR_MYSQL_HELPER"

// TestHelperTransfer is the child process of TestCommit_Killed: it runs one
// transfer described by WEIR_MYSQL_HELPER and is killed at a checkpoint.
func TestHelperTransfer(t *testing.T) {
	job := os.Getenv(helperEnv)
	if job == "" {
		return
	}
	var srcURL, dstURL, srcTable, dstTable, mode string
	fmt.Sscan(job, &srcURL, &dstURL, &srcTable, &dstTable, &mode)
	st, _ := routes.ParseTableRef(srcTable)
	dt, _ := routes.ParseTableRef(dstTable)
	spec := routes.CopySpec{Table: st, DestTable: dt, Mode: routes.Mode(mode)}
	if err := transfer(context.Background(), srcURL, dstURL, spec); err != nil {
		t.Fatal(err)
	}
}

// killedAt runs one transfer in a child process, kills it when it pauses
// at phase, and waits for it to be gone.
func killedAt(t *testing.T, phase string, src, dst *mysqltest.Fixture, name string, mode routes.Mode) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperTransfer$", "-test.count=1")
	cmd.Env = append(os.Environ(), routes.CheckpointEnv+"="+phase,
		fmt.Sprintf("%s=%s %s %s %s %s", helperEnv, src.URL(), dst.URL(), src.Ref(name), dst.Ref(name), mode))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := false
	sc := bufio.NewScanner(stderr)
	for !paused && sc.Scan() {
		paused = strings.Contains(sc.Text(), "weir: paused at "+phase)
		t.Logf("child: %s", sc.Text())
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !paused {
		t.Fatalf("the child never paused at %s", phase)
	}
}

// TestCommit_Killed kills a real run inside its commit transaction: append
// keeps the old rows and watermark; replace has swapped, and its state is
// rolled forward; the lock died with the process, and the next run drops
// what the dead one left and lands the rows.
func TestCommit_Killed(t *testing.T) {
	ctx := routestest.Context(t, 3*time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Create(t, ctx, "t", routestest.Rows(1, 10))
	if err := run(t, ctx, src, dst, "t", routes.ModeAppend); err != nil {
		t.Fatal(err)
	}
	src.Insert(t, ctx, "t", routestest.Rows(11, 20))
	killedAt(t, "commit", src, dst, "t", routes.ModeAppend)
	if got, _ := dst.Read(t, ctx, "t"); len(got) != 10 {
		t.Fatalf("append killed in its commit: %d rows, want the old 10", len(got))
	}
	if w, _ := stateOf(t, ctx, src, dst, "t"); w != "10" {
		t.Fatalf("append killed in its commit: watermark %s, want the old 10", w)
	}
	if err := run(t, ctx, src, dst, "t", routes.ModeAppend); err != nil {
		t.Fatalf("the run after the killed one: %v", err)
	}
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 20))

	src.Insert(t, ctx, "t", routestest.Rows(21, 25))
	killedAt(t, "commit", src, dst, "t", routes.ModeReplace)
	if got, _ := dst.Read(t, ctx, "t"); len(got) != 25 {
		t.Fatalf("replace killed after its swap: %d rows, want the new 25", len(got))
	}
	if _, n := stateOf(t, ctx, src, dst, "t"); n != 25 {
		t.Fatalf("replace killed after its swap: state of %d rows, want 25 (pending in the comment)", n)
	}
	src.Insert(t, ctx, "t", routestest.Rows(26, 30))
	if err := run(t, ctx, src, dst, "t", routes.ModeAppend); err != nil {
		t.Fatalf("the run after the killed one: %v", err)
	}
	expectDest(t, ctx, dst, "t", routestest.Rows(1, 30))
}

// TestCommit_MergeByKey: merge by a key other than the primary key, into a
// table that does not exist yet, then again with changed rows.
func TestCommit_MergeByKey(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	src, dst := mysqltest.New(t), mysqltest.New(t)
	src.Exec(t, ctx, "CREATE TABLE m (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL UNIQUE, v INT)",
		"INSERT INTO m VALUES (1, 'a', 1), (2, 'b', 2)")
	merge := func() {
		t.Helper()
		spec := routes.CopySpec{Table: ref(src, "m"), DestTable: ref(dst, "m"), Mode: routes.ModeMerge, Key: []string{"code"}}
		if _, err := copyOnce(ctx, src, dst, spec); err != nil {
			t.Fatal(err)
		}
	}
	merge()
	src.Exec(t, ctx, "UPDATE m SET v = 20 WHERE code = 'b'", "INSERT INTO m VALUES (3, 'c', 3)")
	merge()
	got := queryStrings(t, ctx, dst, "SELECT CONCAT(id, code, v) FROM m ORDER BY id")
	if fmt.Sprint(got) != "[1a1 2b20 3c3]" {
		t.Errorf("merged rows %v", got)
	}
	keys := queryStrings(t, ctx, dst, "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'm' AND INDEX_NAME = 'PRIMARY'", dst.Database)
	if fmt.Sprint(keys) != "[code]" {
		t.Errorf("primary key of the created table: %v, want [code]", keys)
	}
}

func copyOnce(ctx context.Context, src, dst *mysqltest.Fixture, spec routes.CopySpec) (routes.CopyResult, error) {
	s, d, err := incremental.OpenPair(ctx, src.URL(), dst.URL())
	if err != nil {
		return routes.CopyResult{}, err
	}
	defer s.Close()
	defer d.Close()
	return routes.Copy(ctx, s, d, spec)
}
