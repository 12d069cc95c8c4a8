//go:build attack

package pgwal

import (
	"testing"

	"github.com/weirhq/weir/cdc/cdctest"
)

// TestAttackS16_Float4MaxIntoMariaDB: a PostgreSQL real at its largest
// (3.4028235e38) is copied by the bootstrap into MariaDB, but the same
// value captured from the WAL fails the apply (LOAD DATA: Out of range
// value, 1264): a replica that holds it can not take it again. Loud
// (exit 1, nothing applied), left open: docs/failure-modes.md.
func TestAttackS16_Float4MaxIntoMariaDB(t *testing.T) {
	sessionCasesMax := []cdctest.Case{{Name: "f4", Type: "float4", Values: lits("3.4028235e38", "-3.4028235e38")}}
	roleSessionSettings(t, "mysql", "", sessionCasesMax)
}
