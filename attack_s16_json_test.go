//go:build attack

package weir_test

import "testing"

// TestAttackS16_JSONIntoUserJSONB: a JSON value with a duplicate object key
// appended into a user's jsonb column: jsonb keeps the last key only, so
// the value changes on the way in with exit 0 (the route's own tables are
// json for MySQL's JSON for this reason: docs/failure-modes.md, Kept by
// representation). Open: the lossy-cast rule holds json into jsonb.
func TestAttackS16_JSONIntoUserJSONB(t *testing.T) {
	for _, c := range []varlenCase{
		{name: "pg json dup key", src: "postgres", dst: "postgres", srcType: "json", dstType: "jsonb", value: `'{"a":1,"a":2}'`},
		// text into jsonb is refused by the lossy-cast rule (held)
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}
