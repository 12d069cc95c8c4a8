package iceberg_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestPrepareShared: the stages of a backfill's workers (docs/workers.md)
// share the table's lease — an exclusive Prepare is refused while one is
// open, and a shared one while an exclusive is — write only into an
// existing table, and commit by a compare-and-set on the state they
// replace, checked by the catalog in the commit: of stages racing with the
// same previous state, exactly one commits; the others get ErrFenced. And
// stages racing with data files over their own keys all commit — each
// conflict on the table's snapshot rebuilt on the fresh one — and the
// table holds every stage's rows once.
func TestPrepareShared(t *testing.T) {
	f := icebergtest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Create(t, ctx, "src", routestest.Rows(1, 10))
	ep := f.Endpoint()
	var dst routes.Destination = ep
	var sd routes.SharedDestination = ep
	info, err := ep.Probe(ctx, f.TableRef("src"))
	if err != nil {
		t.Fatal(err)
	}
	opts := func(run string) routes.WriteOptions {
		return routes.WriteOptions{Table: f.TableRef("dst"), Mode: routes.ModeAppend, RunID: run}
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
	if _, err := sd.PrepareShared(ctx, info, opts("s-excl")); !errors.Is(err, routes.ErrLocked) {
		t.Fatalf("shared stage while an exclusive one is open = %v, want ErrLocked", err)
	}
	if err := create.(routes.FencedStage).CommitIf(ctx, routes.State{SourceID: "main", RunID: "c0"}, nil); err != nil {
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
		got, _, err := ep.LoadState(ctx, opts("").Table, "k")
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 && got.Watermark != fmt.Sprint(won) {
			t.Fatalf("state %+v, want the winner's %d", got, won)
		}
		if round == 1 && (won >= 0 || got.Watermark == "w") {
			t.Fatalf("round 1: prev names no saved state, yet stage %d committed (%+v)", won, got)
		}
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
	// racing commits with data, each over its own key: all land
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: routes.ModeAppend,
				RunID: fmt.Sprintf("d%d", i), Budget: routes.Budget{Parallel: 1},
				Fence: &routes.Fence{SourceID: fmt.Sprintf("b%d", i)}}
			_, errs[i] = routes.Copy(ctx, ep, ep, spec)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("fenced copy %d over its own key: %v", i, err)
		}
		if _, found, err := ep.LoadState(ctx, opts("").Table, fmt.Sprintf("b%d", i)); err != nil || !found {
			t.Fatalf("state of key b%d after the racing commits: found %v, %v", i, found, err)
		}
	}
	rows, _ := f.Read(t, ctx, "dst")
	if len(rows) != n*10 {
		t.Fatalf("after %d racing fenced copies of 10 rows the table holds %d rows, want %d", n, len(rows), n*10)
	}
	x, err := dst.Prepare(ctx, info, opts("x2"))
	if err != nil {
		t.Fatalf("exclusive Prepare once the shared stages ended = %v", err)
	}
	routes.Abort(ctx, x)
}
