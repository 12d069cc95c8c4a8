package faults_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	weirlib "github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/all"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// Free-running race: freeRaceRuns children start together on one
// destination table, with nothing paused, freeRaceRounds times per
// destination and mode, and new source rows before every round.
const (
	freeRaceRuns   = 4
	freeRaceRounds = 20
	freeRaceBatch  = 40 // source rows added before each round
)

// freeRaceDests are the destinations of the free-running race; "nopk"
// loads a source without a primary key (--cursor id), so the destination
// table has none either and nothing but weir's lock keeps a row single.
var freeRaceDests = []string{"postgres", "postgres_nopk", "mysql", "mysql_nopk", "clickhouse", "file", "iceberg"}

// TestFault_FreeRace starts freeRaceRuns `weir transfer` children at the
// same instant on one destination table, round after round, with new source
// rows between rounds, and no pause anywhere: whatever a run decides from
// the destination's state (watermark, rows, schema) must be decided under
// its lock. Every run exits 0 or is refused with 75; after every round the
// destination holds each source row exactly once (append and merge), or is
// exactly one copy of the source (replace).
func TestFault_FreeRace(t *testing.T) {
	for _, name := range freeRaceDests {
		base, nopk := strings.CutSuffix(name, "_nopk")
		i := slices.IndexFunc(destinations, func(d destination) bool { return d.name == base })
		d := destinations[i]
		for _, mode := range []string{"append", "merge", "replace"} {
			if !slices.Contains(d.modes, mode) {
				continue
			}
			t.Run(name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				runCase(t, "free", func(t *testing.T) { freeRace(t, d, name, mode, nopk, runChild) })
			})
		}
	}
}

// TestFault_FreeRaceInProcess is the same race with the runs as goroutines
// calling weir.Transfer in this process (a locked run's error is
// ErrLocked, the CLI's 75), on the destinations without a unique key.
func TestFault_FreeRaceInProcess(t *testing.T) {
	for _, name := range []string{"postgres_nopk", "clickhouse", "iceberg"} {
		base, nopk := strings.CutSuffix(name, "_nopk")
		d := destinations[slices.IndexFunc(destinations, func(d destination) bool { return d.name == base })]
		t.Run(name+"/append", func(t *testing.T) {
			t.Parallel()
			runCase(t, "free", func(t *testing.T) { freeRace(t, d, name, "append", nopk, runLibrary) })
		})
	}
}

// runner runs one transfer (args as for the CLI) and returns its exit
// code and error text.
type runner func(ctx context.Context, t *testing.T, args []string) (int, string)

func runChild(ctx context.Context, t *testing.T, args []string) (int, string) {
	r := weir(ctx, t, nil, args...)
	return r.code, r.stderr
}

// runLibrary runs `transfer SRC DST --flag value…` through weir.Transfer.
func runLibrary(ctx context.Context, t *testing.T, args []string) (int, string) {
	opts := weirlib.TransferOptions{}
	for i := 3; i+1 < len(args); i += 2 {
		switch v := args[i+1]; args[i] {
		case "--table":
			opts.Tables = []string{v}
		case "--dest-table":
			opts.DestTable = v
		case "--mode":
			opts.Mode = routes.Mode(v)
		case "--cursor":
			opts.Cursor = v
		case "--primary-key":
			opts.PrimaryKey = []string{v}
		default:
			t.Fatalf("runLibrary: flag %s", args[i])
		}
	}
	_, err := weirlib.Transfer(ctx, args[1], args[2], opts)
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, routes.ErrLocked) && !errors.Is(err, routes.ErrBadInput):
		return 75, err.Error()
	}
	return 1, err.Error()
}

func freeRace(t *testing.T, d destination, name, mode string, nopk bool, run runner) {
	ctx := routestest.Context(t, 5*time.Minute)
	src := newPG(t)
	dst, dstURL := d.open(t)
	tbl := routestest.Name("fr")
	createSource(t, ctx, src, tbl, nopk)
	args := []string{"transfer", src.URL(), dstURL, "--table", src.Ref(tbl), "--dest-table", dst.Ref(tbl), "--mode", mode}
	if nopk {
		args = append(args, "--cursor", "id")
		if mode == "merge" {
			args = append(args, "--primary-key", "id")
		}
	}
	var n int64
	won, refused := 0, 0
	for round := range freeRaceRounds {
		src.Insert(t, ctx, tbl, routestest.Rows(n+1, n+freeRaceBatch))
		n += freeRaceBatch
		codes, stderr := startTogether(ctx, t, args, run)
		for i, c := range codes {
			switch c {
			case 0:
				won++
			case 75:
				refused++
			default:
				t.Fatalf("round %d: run %d exited %d (want 0, or 75 when another run held the lock):\n%s", round, i, c, stderr[i])
			}
		}
		if !slices.Contains(codes, 0) {
			t.Fatalf("round %d: no run committed: exit codes %v\n%s", round, codes, strings.Join(stderr, "\n"))
		}
		checkOneCopy(t, ctx, src, dst, tbl, n, round)
	}
	t.Logf("%s %s: %d rounds of %d runs: %d exited 0, %d refused with 75; every round one copy of every row",
		name, mode, freeRaceRounds, freeRaceRuns, won, refused)
}

// createSource makes the conformance table, without its primary key for
// nopk, empty.
func createSource(t *testing.T, ctx context.Context, src *postgrestest.Fixture, tbl string, nopk bool) {
	if !nopk {
		src.Create(t, ctx, tbl, nil)
		return
	}
	src.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint NOT NULL, name text, amount numeric(12,2), ts timestamp, flag boolean)`, src.Ref(tbl)))
}

// startTogether starts freeRaceRuns children at once and waits for all.
func startTogether(ctx context.Context, t *testing.T, args []string, run runner) ([]int, []string) {
	t.Helper()
	codes := make([]int, freeRaceRuns)
	stderr := make([]string, freeRaceRuns)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range freeRaceRuns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i], stderr[i] = run(ctx, t, args)
		}()
	}
	close(start)
	wg.Wait()
	return codes, stderr
}

// checkOneCopy fails unless the destination holds ids 1..n each exactly
// once, and rows equal to the source's.
func checkOneCopy(t *testing.T, ctx context.Context, src *postgrestest.Fixture, dst routestest.Fixture, tbl string, n int64, round int) {
	t.Helper()
	rows, ok := dst.Read(t, ctx, tbl)
	if !ok {
		t.Fatalf("round %d: the destination table does not exist", round)
	}
	seen := map[int64]int{}
	var dup, lost []int64
	for _, r := range rows {
		if seen[r.ID]++; seen[r.ID] == 2 {
			dup = append(dup, r.ID)
		}
	}
	for id := int64(1); id <= n; id++ {
		if seen[id] == 0 {
			lost = append(lost, id)
		}
	}
	if len(dup) > 0 || len(lost) > 0 || int64(len(rows)) != n {
		t.Fatalf("round %d: %d rows for %d source rows: %d ids twice or more (first %v), %d lost (first %v)",
			round, len(rows), n, len(dup), head(dup), len(lost), head(lost))
	}
	want, _ := src.Read(t, ctx, tbl)
	if rowsHash(rows) != rowsHash(want) {
		t.Fatalf("round %d: the destination's rows differ from the source's", round)
	}
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 5)] }
