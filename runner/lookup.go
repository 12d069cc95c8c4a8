package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
)

// unmatched counts, per lookup declared with on_missing: hold, the rows of
// the incremental source that have no row of the lookup with the same key
// (an anti-join; a NULL key never matches, as in the SQL's join). Such a
// batch is held: nothing is committed, the offset stays, and the next run
// reads the batch again (with whatever arrived since), so a dimension row
// that arrives late is joined instead of lost. It returns the first
// lookup's finding.
func (run *modelRun) unmatched(ctx context.Context) (string, int64, error) {
	fact := run.factInput()
	if fact == nil {
		return "", 0, nil
	}
	for _, in := range run.inputs {
		spec, ok := run.m.LookupSpec[in.name]
		if !in.lookup || !ok || spec.OnMissing != dagfile.OnMissingHold {
			continue
		}
		on := make([]string, len(spec.Key))
		for i, k := range spec.Key {
			on[i] = "d." + duck.Ident(k) + " = f." + duck.Ident(k)
		}
		q := fmt.Sprintf(`SELECT count(*) FROM %s f WHERE NOT EXISTS (SELECT 1 FROM %s d WHERE %s)`,
			duck.Ident(fact.name), duck.Ident(in.name), strings.Join(on, " AND "))
		var n int64
		if err := run.db.QueryRow(ctx, q, &n); err != nil {
			return "", 0, fmt.Errorf("model %s: lookup %s on %s: %w", run.t.Name, in.name, strings.Join(spec.Key, ", "), err)
		}
		if n > 0 {
			return fmt.Sprintf("%d rows of %s have no match in %s on %s", n, fact.name, in.name, strings.Join(spec.Key, ", ")), n, nil
		}
	}
	return "", 0, nil
}

// factInput is the one source read incrementally beside lookups (dagfile
// refuses a model with two, rule MODEL-001).
func (run *modelRun) factInput() *input {
	if run.mode == routes.ModeReplace {
		return nil
	}
	for _, in := range run.inputs {
		if !in.lookup {
			return in
		}
	}
	return nil
}
