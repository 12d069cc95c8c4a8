package bigquery_test

import (
	"testing"

	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' destination contract (routestest) against the
// BigQuery emulator (a destination only: no source tests). Merge is not
// in the caps: the emulator's MERGE fails (docs/bigquery.md, Tests).
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("bigquery")
	caps.Merge = false
	routestest.RunDestinationTests(t, bigquerytest.New(t), caps)
}
