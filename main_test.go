package weir_test

import (
	"os"
	"testing"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
)

// TestMain keeps this package's PostgreSQL tables, and the slots its
// log_based tests make, in a database of their own (UseOwnDatabase).
func TestMain(m *testing.M) {
	postgrestest.UseOwnDatabase("weir_pkg_root")
	os.Exit(m.Run())
}
