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
				both, refused := 0, 0
				for round := range raceRounds {
					b, r := race(ctx, t, args)
					both += b
					refused += r
					if got, _ := tableHash(t, ctx, dst, tbl); got != want {
						t.Fatalf("round %d: the destination is not whole", round)
					}
					if left := visibleStaging(t, ctx, dst, tbl); len(left) > 0 {
						t.Fatalf("round %d: left behind: %v", round, left)
					}
				}
				t.Logf("%s: %d rounds: both passed the lock check %d times, one refused with exit 75 %d times", d.name, raceRounds, both, refused)
				if both > 0 {
					t.Errorf("two runs held the lock at once in %d of %d rounds", both, raceRounds)
				}
			})
		})
	}
}

// race runs two children at once and returns (1, 0) when both passed the
// lock, (0, 1) when one was refused with exit 75.
func race(ctx context.Context, t *testing.T, args []string) (both, refused int) {
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
		return 1, 0
	case held[0] != held[1] && codes[0]+codes[1] == 75:
		return 0, 1
	}
	t.Fatalf("want one run to hold the lock and finish, the other refused with 75: held %v, exit codes %v\n%s\n%s",
		held, codes, runs[0].stderr, runs[1].stderr)
	return 0, 0
}

func rowsOf(t *testing.T, ctx context.Context, f routestest.Fixture, name string) string {
	h, _ := tableHash(t, ctx, f, name)
	return h
}
