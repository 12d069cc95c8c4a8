package postgres_test

import (
	"testing"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestContract runs routes' source and destination contract (routestest)
// against the PostgreSQL test server.
func TestContract(t *testing.T) {
	caps := routestest.CapsOf("postgres")
	t.Run("source", func(t *testing.T) { routestest.RunSourceTests(t, postgrestest.New(t), caps) })
	t.Run("destination", func(t *testing.T) { routestest.RunDestinationTests(t, postgrestest.New(t), caps) })
}
