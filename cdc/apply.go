package cdc

import (
	"context"

	"github.com/weirhq/weir/routes"
)

// Applier is the destination capability batch CDC needs: apply a folded
// window and save each destination table's state (the new position) in ONE
// transaction. Within it the order is: fill Unchanged columns from the
// destination's current rows (by Upsert.Origin), then TRUNCATE, then
// deletes, then upserts, each set-based through a staged table. A
// destination table that does not exist yet is created from Table.Info.
// Applying the same window twice gives the same table.
//
// Values reach the destination as the source's change values: strings
// (each type's text, as PostgreSQL's pgoutput sends it) or the typed Go
// values of Change.
type Applier interface {
	ApplyWindow(ctx context.Context, w *Window, states map[routes.TableRef]routes.State) error
}

// FailHook, when a test sets it, is called by appliers at named stages
// inside the apply transaction ("after-truncate", "before-state",
// "before-commit"); an error it returns aborts the apply there, so the
// test can check that nothing of the window landed.
var FailHook func(stage string) error

// Fail runs FailHook at stage and, for kill tests, routes.Checkpoint with
// "apply-" + stage (WEIR_FAULT_PAUSE=apply-before-commit pauses there).
func Fail(stage string) error {
	routes.Checkpoint("apply-" + stage)
	if FailHook != nil {
		return FailHook(stage)
	}
	return nil
}
