package iceberg_test

import (
	"testing"

	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	_ "github.com/weirhq/weir/routes/postgres" // postgres://
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

var caps = routestest.Caps{Append: true, Merge: true}

// The matrix's conformance cell on the pairs this route flips.

func TestRunCell_IcebergToIceberg(t *testing.T) {
	routestest.RunCell(t, icebergtest.New(t), icebergtest.New(t), caps, transfer)
}

func TestRunCell_PostgresToIceberg(t *testing.T) {
	routestest.RunCell(t, postgrestest.New(t), icebergtest.New(t), caps, transfer)
}

func TestRunCell_IcebergToPostgres(t *testing.T) {
	routestest.RunCell(t, icebergtest.New(t), postgrestest.New(t), caps, transfer)
}

// TestRunCell_CatalogOnPostgres keeps the SQL catalog (and its leases) in
// PostgreSQL instead of SQLite.
func TestRunCell_CatalogOnPostgres(t *testing.T) {
	pg := routestest.ServerURL(t, postgrestest.Env)
	routestest.RunCell(t, icebergtest.New(t), icebergtest.NewOnPostgres(t, pg), caps, transfer)
}
