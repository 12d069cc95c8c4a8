package clickhouse_test

import (
	"testing"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' source and destination contract (routestest)
// against the ClickHouse test server, over the native protocol and HTTP.
// Merge is not in the caps: the suite's tables are made by a replace, a
// MergeTree, and merge is refused into one (docs/routes-clickhouse.md).
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("clickhouse")
	caps.Merge = false
	for name, fix := range map[string]func(testing.TB) *clickhousetest.Fixture{"native": clickhousetest.New, "http": clickhousetest.NewHTTP} {
		t.Run(name+"/source", func(t *testing.T) { routestest.RunSourceTests(t, fix(t), caps) })
		t.Run(name+"/destination", func(t *testing.T) { routestest.RunDestinationTests(t, fix(t), caps) })
	}
}
