package iceberg_test

import (
	"testing"

	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' source and destination contract (routestest)
// against a SQLite catalog and an in-test REST catalog.
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("iceberg")
	for name, fix := range map[string]func(testing.TB, ...icebergtest.Option) *icebergtest.Fixture{"sql": icebergtest.New, "rest": icebergtest.NewREST} {
		t.Run(name+"/source", func(t *testing.T) { routestest.RunSourceTests(t, fix(t), caps) })
		t.Run(name+"/destination", func(t *testing.T) { routestest.RunDestinationTests(t, fix(t), caps) })
	}
}
