// Package fileformat writes record batches as data files: Parquet (zstd,
// with encoders sized for Parquet pages, UseLeanZstd) and RFC 4180 CSV,
// plain or gzipped, in text forms weir reads back exactly. It sits below
// the adapters: routes/objstore writes its tables with it, routes/bigquery
// its load files, and weir read its output, so none of them imports
// another adapter. Reading the files back is objstore's.
package fileformat

import "github.com/weirhq/weir/routes"

// The data file formats.
const (
	Parquet = "parquet" // the default: zstd, one row group per ~chunk of Arrow data
	CSVGzip = "csv.gz"  // RFC 4180 with a header, gzip
	CSV     = "csv"     // the same, uncompressed
)

// DefaultRowGroupBytes is the Arrow data per Parquet row group.
const DefaultRowGroupBytes = routes.DefaultChunkBytes

// Valid reports whether f names a format.
func Valid(f string) bool { return f == Parquet || f == CSVGzip || f == CSV }
