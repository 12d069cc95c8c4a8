package faults_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// phases are where a run is killed: before the probe; mid-copy (a pipe has
// written its first batch and asks for the next); after every pipe loaded
// and before the commit; inside the destination's commit; and after the
// commit, before weir reports success — a scheduler that sees the kill
// retries a run that already landed, and the retry must not double rows.
var phases = []string{"probe", "mid-copy", "before-commit", "commit", "after-commit"}

const (
	firstRows = 3000 // loaded before the first kill
	moreRows  = 1500 // what each killed run brings
)

func newPG(t *testing.T) *postgrestest.Fixture { return postgrestest.New(t) }

// TestFault_Kill SIGKILLs weir at every phase, for every destination and
// mode, and then checks: readers see the previous table exactly (or, once
// the commit happened, the new one); the next run completes with the same
// result as an uninterrupted run; no staging object is left. The phases
// run one after the other on one table, each after new source rows.
func TestFault_Kill(t *testing.T) {
	for _, d := range destinations {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			src := newPG(t)
			dst, dstURL := d.open(t)
			for _, mode := range d.modes {
				t.Run(mode, func(t *testing.T) {
					if mode == "log_based" {
						killLogBased(t, d.name) // its sources are PostgreSQL and MySQL (logbased_test.go)
						return
					}
					killMatrix(t, src, dst, dstURL, d.name, mode)
				})
			}
		})
	}
}

func killMatrix(t *testing.T, src *postgrestest.Fixture, dst routestest.Fixture, dstURL, dstName, mode string) {
	ctx := routestest.Context(t, 5*time.Minute)
	tbl := routestest.Name("k")
	src.Create(t, ctx, tbl, routestest.Rows(1, firstRows))
	transfer := func(dest string, extra ...string) []string {
		return append([]string{"transfer", src.URL(), dstURL, "--table", src.Ref(tbl), "--dest-table", dst.Ref(dest),
			"--mode", mode, "--parallel", "2", "--chunk-bytes", "16384"}, extra...)
	}
	// control sees the same source changes with no kill in between.
	control := tbl + "_control"
	mustWeir(ctx, t, transfer(control)...)
	mustWeir(ctx, t, transfer(tbl)...)
	last := int64(firstRows)
	for i, phase := range phases {
		runCase(t, phase, func(t *testing.T) {
			before, _ := tableHash(t, ctx, dst, tbl)
			src.Insert(t, ctx, tbl, routestest.Rows(last+1, last+moreRows))
			last += moreRows
			if mode == "replace" { // replace also drops rows the source lost
				src.Exec(t, ctx, fmt.Sprintf("DELETE FROM %s WHERE id %% 10 = %d", src.Ref(tbl), i))
			}
			srcRows, _ := src.Read(t, ctx, tbl)
			want := rowsHash(srcRows)
			var extra []string
			if phase == "mid-copy" && dstName == "postgres" {
				// The passthrough relay buffers 256 KiB, more than these
				// tables: kill the Arrow path mid-copy instead.
				extra = []string{"--no-passthrough"}
			}
			p := startPaused(ctx, t, phase, transfer(tbl, extra...)...)
			p.kill()
			got, n := tableHash(t, ctx, dst, tbl)
			switch {
			case phase == "commit" && (got == before || got == want):
				// Inside the commit the swap is atomic: readers see the old
				// table or the new one (MySQL's replace RENAMEs before the
				// state transaction that holds the checkpoint).
				t.Logf("killed inside the commit, readers see the %s table", map[bool]string{true: "previous", false: "new"}[got == before])
			case phase == "after-commit" && got != want:
				t.Fatalf("after a kill past the commit readers see %d rows that differ from the committed table", n)
			case phase != "commit" && phase != "after-commit" && got != before:
				t.Fatalf("after a kill at %s readers see %d rows that differ from the previous table", phase, n)
			case phase == "commit":
				t.Fatalf("after a kill inside the commit readers see %d rows, neither the previous table nor the new one", n)
			}
			if r := weirRetry(ctx, t, transfer(tbl)...); r.code != 0 {
				t.Fatalf("the run after the kill: %s", r)
			}
			if got, n := tableHash(t, ctx, dst, tbl); got != want {
				t.Fatalf("the run after the kill left %d rows that differ from the source's %d", n, len(srcRows))
			}
			if left := visibleStaging(t, ctx, dst, tbl); len(left) > 0 {
				t.Fatalf("staging objects left after the next run: %v", left)
			}
		})
	}
	// The uninterrupted run over the same source changes ends the same.
	mustWeir(ctx, t, transfer(control)...)
	got, _ := tableHash(t, ctx, dst, tbl)
	if want, _ := tableHash(t, ctx, dst, control); got != want {
		t.Fatalf("the killed-and-rerun table differs from the uninterrupted control")
	}
}
