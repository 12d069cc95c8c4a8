package cdc

import (
	"context"

	"github.com/weirhq/weir/routes"
)

// Applier is the destination capability batch CDC needs (proposed as
// routes.ChangeApplier in cdc/PROPOSED-routes.diff): apply a folded window
// and save each destination table's state (the new position) in ONE
// transaction. Within it the
// order is: fill Unchanged columns from the destination's current rows (by
// Upsert.Origin), then TRUNCATE, then deletes, then upserts. Applying the
// same window twice gives the same table.
type Applier interface {
	ApplyWindow(ctx context.Context, w *Window, states map[routes.TableRef]routes.State) error
}
