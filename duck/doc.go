// Package duck is weir's embedded SQL engine: DuckDB (duckdb-go v2) driven
// through its Arrow interface, so batches move between the routes and the
// engine as Arrow record batches, never row by row.
//
// It is the only package of weir that links DuckDB (cgo; no build tag: the
// Arrow calls are DuckDB's C functions declared in bridge.go, see
// docs/architecture.md; without cgo, stub.go). One [DB] is one in-memory
// database with one connection: the views and temporary tables a model
// run registers are visible to every statement of that run and vanish with
// [DB.Close].
//
// Facts the runner relies on (measured here, duckdb-go v2.20000.0 = DuckDB
// 2.0.0):
//
//   - A view registered over an array.RecordReader can be scanned once; a
//     second scan silently returns no rows.
//   - Worse, DuckDB pushes projections and filters into that scan and
//     trusts the Go stream to apply them, which it does not: a query that
//     reads some columns, or filters, over such a view returns wrong values
//     (another column's buffer) or unfiltered rows (duckdb-go issue #24).
//     Only SELECT * is safe. So batches are never queried as views:
//     [DB.Load] copies a reader into a temporary table with CREATE TABLE AS
//     SELECT * (Arrow to DuckDB's columns, no row-by-row copy), which
//     queries may read any number of times, with every pushdown.
//   - Extensions are never installed or loaded on demand (both
//     autoinstall_known_extensions and autoload_known_extensions are off):
//     weir runs where the network is closed, and an INSTALL would hang.
package duck
