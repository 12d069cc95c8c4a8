package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestPrepareShared: the stages of a backfill's workers (docs/workers.md)
// share the table's lock — an exclusive Prepare is refused while one is
// open — write only into an existing table, and commit by a
// compare-and-set on the state they replace: of stages racing with the
// same previous state, exactly one commits; the others get ErrFenced and
// commit nothing.
func TestPrepareShared(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	f.Create(t, ctx, "src", routestest.Rows(1, 10))
	ep, err := routes.Open(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	src, _ := routes.As[routes.Source](ep)
	dst, _ := routes.As[routes.Destination](ep)
	sd, ok := routes.As[routes.SharedDestination](ep)
	if !ok {
		t.Fatal("postgres is not a SharedDestination")
	}
	info, err := src.Probe(ctx, routes.TableRef{Schema: f.Schema, Name: "src"})
	if err != nil {
		t.Fatal(err)
	}
	opts := func(run string) routes.WriteOptions {
		return routes.WriteOptions{Table: routes.TableRef{Schema: f.Schema, Name: "dst"}, Mode: routes.ModeAppend, RunID: run}
	}
	if _, err := sd.PrepareShared(ctx, info, opts("s0")); !errors.Is(err, routes.ErrNotFound) {
		t.Fatalf("shared stage of a missing table = %v, want ErrNotFound", err)
	}
	if _, err := sd.PrepareShared(ctx, info, routes.WriteOptions{Table: opts("r").Table, Mode: routes.ModeReplace, RunID: "r"}); !errors.Is(err, routes.ErrUnsupported) {
		t.Fatalf("shared replace = %v, want ErrUnsupported", err)
	}
	create, err := dst.Prepare(ctx, info, opts("c0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := create.Commit(ctx, routes.State{SourceID: "main", RunID: "c0"}); err != nil {
		t.Fatal(err)
	}
	const n = 6
	stages := make([]routes.FencedStage, n)
	for i := range stages {
		if stages[i], err = sd.PrepareShared(ctx, info, opts(fmt.Sprintf("s%d", i+1))); err != nil {
			t.Fatalf("shared stage %d beside the others: %v", i, err)
		}
	}
	if _, err := dst.Prepare(ctx, info, opts("x")); !errors.Is(err, routes.ErrLocked) {
		t.Fatalf("exclusive Prepare while shared stages are open = %v, want ErrLocked", err)
	}
	for round, prev := range []*routes.State{nil, {Watermark: "w", Position: "p"}} {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, st := range stages {
			wg.Go(func() {
				errs[i] = st.CommitIf(ctx, routes.State{SourceID: "k", Watermark: fmt.Sprint(i), Position: "p", RunID: "s"}, prev)
			})
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: stages %d and %d both committed over the same state", round, won, i)
			case err == nil:
				won = i
			case !errors.Is(err, routes.ErrFenced):
				t.Fatalf("round %d: stage %d: %v, want ErrFenced", round, i, err)
			}
		}
		if won < 0 && round == 0 {
			t.Fatalf("round %d: no stage committed", round)
		}
		sr, _ := routes.As[routes.StateReader](ep)
		got, _, err := sr.LoadState(ctx, opts("").Table, "k")
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 && got.Watermark != fmt.Sprint(won) {
			t.Fatalf("state %+v, want the winner's %d", got, won)
		}
		if round == 1 && (won >= 0 || got.Watermark == "w") {
			t.Fatalf("round 1: prev names no saved state, yet stage %d committed (%+v)", won, got)
		}
		// the refused stages are aborted; a fresh set for the next round
		for i := range stages {
			routes.Abort(ctx, stages[i])
			if stages[i], err = sd.PrepareShared(ctx, info, opts(fmt.Sprintf("t%d%d", round, i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, st := range stages {
		routes.Abort(ctx, st)
	}
	x, err := dst.Prepare(ctx, info, opts("x2"))
	if err != nil {
		t.Fatalf("exclusive Prepare once the shared stages ended = %v", err)
	}
	routes.Abort(ctx, x)
}
