package faults_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/routestest"
)

// raceRounds is how many times two runs start at the same instant on one
// destination table.
const raceRounds = 10

// TestFault_LockRace starts two runs on one destination table at the same
// instant, each pausing before its commit once it holds the lock. Both
// paused means both passed the lock check (must never happen); otherwise
// one is paused and the other was refused with exit 75. Then the winner
// goes on, and the table ends whole.
func TestFault_LockRace(t *testing.T) {
	for _, d := range destinations {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			runCase(t, "race", func(t *testing.T) {
				src := newPG(t)
				dst, dstURL := d.open(t)
				ctx := routestest.Context(t, 5*time.Minute)
				tbl := routestest.Name("r")
				src.Create(t, ctx, tbl, routestest.Rows(1, 2000))
				want := rowsOf(t, ctx, src, tbl)
				args := []string{"transfer", src.URL(), dstURL, "--table", src.Ref(tbl), "--dest-table", dst.Ref(tbl)}
				both, refused, noLock := 0, 0, 0
				for round := range raceRounds {
					switch race(ctx, t, args) {
					case bothHeld:
						both++
					case oneRefused:
						refused++
					case otherFailed:
						noLock++
					}
					if got, _ := tableHash(t, ctx, dst, tbl); got != want {
						t.Fatalf("round %d: the destination is not whole", round)
					}
					if left := visibleStaging(t, ctx, dst, tbl); len(left) > 0 {
						t.Fatalf("round %d: left behind: %v", round, left)
					}
				}
				t.Logf("%s: %d rounds: both passed the lock check %d times, one refused with exit 75 %d times, the other failed before the lock %d times",
					d.name, raceRounds, both, refused, noLock)
				if both > 0 {
					t.Errorf("two runs held the lock at once in %d of %d rounds", both, raceRounds)
				}
				if noLock > raceRounds/2 {
					t.Errorf("%d of %d rounds never raced: the second run failed before the lock", noLock, raceRounds)
				}
			})
		})
	}
}

// outcome is how one round of two racing runs ended.
type outcome int

const (
	bothHeld    outcome = iota // both passed the lock check: the bug the race looks for
	oneRefused                 // one held the lock, the other exited 75
	otherFailed                // one held the lock, the other failed before reaching it (exit 1: a connection timeout on a loaded server)
)

// race runs two children at once. The run that holds the lock must finish
// with exit 0; the other must be refused with 75 (or, logged apart, fail
// before the lock with exit 1).
func race(ctx context.Context, t *testing.T, args []string) outcome {
	t.Helper()
	runs := make([]*paused, 2)
	held := make([]bool, 2)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], held[i] = tryPaused(ctx, t, "before-commit", args...)
		}()
	}
	wg.Wait()
	codes := make([]int, 2)
	for i, p := range runs {
		if held[i] {
			codes[i] = p.goOn(t).code
		} else {
			codes[i] = p.wait()
		}
	}
	switch {
	case held[0] && held[1]:
		return bothHeld
	case held[0] != held[1] && codes[0]+codes[1] == 75:
		return oneRefused
	case held[0] != held[1] && codes[0]+codes[1] == 1:
		t.Logf("the run that did not hold the lock failed before it:\n%s\n%s", runs[0].stderr, runs[1].stderr)
		return otherFailed
	}
	t.Fatalf("want one run to hold the lock and finish, the other refused with 75: held %v, exit codes %v\n%s\n%s",
		held, codes, runs[0].stderr, runs[1].stderr)
	return 0
}

func rowsOf(t *testing.T, ctx context.Context, f routestest.Fixture, name string) string {
	h, _ := tableHash(t, ctx, f, name)
	return h
}
