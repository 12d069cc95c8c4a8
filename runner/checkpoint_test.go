package runner

import (
	"errors"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestRunner_CheckpointHookFailsTheRun: the runner's own phases are
// routes.Checkpoint like the adapters' (one fault seam): a test hook's
// error at any of them fails the model run, and nothing is committed, so
// the next run reads every row again.
func TestRunner_CheckpointHookFailsTheRun(t *testing.T) {
	for _, phase := range []string{"poll", "before-quarantine-commit", "before-commit"} {
		t.Run(phase, func(t *testing.T) {
			r, err := Load(copyQuickstart(t), Options{Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			once(t, r, "bronze_orders")
			boom := errors.New("hook at " + phase)
			restore := routes.SetCheckpointHook(func(p string) error {
				if p == phase {
					return boom
				}
				return nil
			})
			_, err = r.Once(testContext(t), "silver_orders")
			restore()
			if !errors.Is(err, boom) {
				t.Fatalf("silver_orders with a hook failing %s: %v, want the hook's error", phase, err)
			}
			if rep := once(t, r, "silver_orders"); rep.RowsIn != 8000 {
				t.Fatalf("the run after the failed one: %+v, want all 8000 rows read again", rep)
			}
		})
	}
}
