package routes

import (
	"fmt"
	"strings"
)

// RepeatedKey is the refusal of a merge whose source brings more than one
// row with one key in a run. The rule, for every merge destination: the
// last row of a key wins only where the rows have a defined order (a
// model's upsert batch is deduplicated in its SQL's order, docs/runner.md);
// a transfer reads its ranges in parallel, so its rows have none, and the
// run is refused before the commit instead of keeping an arbitrary row (or
// both). example renders the repeated key's values, "" when the
// destination could not name one.
func RepeatedKey(src, dest TableRef, key []string, example string) error {
	k := "(" + strings.Join(key, ", ") + ")"
	problem := fmt.Sprintf("the merge brings more than one row with one key %s", k)
	if example != "" {
		problem = fmt.Sprintf("the merge brings more than one row with key %s = (%s)", k, example)
	}
	return &ProbeError{Table: src.String(),
		Problem: problem + fmt.Sprintf(" into %s; which of them would win is not defined, so nothing was written", dest),
		Hint:    fmt.Sprintf("make %s unique in the source, merge by a key that is unique with --primary-key, or pick one row per key in a view", k)}
}
