package main

import (
	"testing"

	"github.com/weirhq/weir/routes"
)

// The memory limit of a transfer into a Parquet writer (objstore,
// iceberg) has room for the writer beside the pipes' chunks; other
// destinations get none, and a URL that does not parse gets none.
func TestWriterBytes_ParquetDestinations(t *testing.T) {
	b := routes.Budget{Parallel: 3, ChunkBytes: 1 << 20}
	want := int64(3 * (1 << 20) * routes.ParquetWriterChunks)
	for _, u := range []string{"file:///tmp/lake", "./lake", "s3://bucket/prefix", "gcs://bucket/prefix",
		"iceberg://?catalog=sql&uri=sqlite:///tmp/c.db", "iceberg+rest://127.0.0.1:8181/?warehouse=wh"} {
		if got := writerBytes(b, u); got != want {
			t.Errorf("%s: writer room %d, want %d", u, got, want)
		}
	}
	for _, u := range []string{"postgres://u@127.0.0.1/db", "mysql://u@127.0.0.1/db", "clickhouse://127.0.0.1:9000/db", "%zz://x"} {
		if got := writerBytes(b, u); got != 0 {
			t.Errorf("%s: writer room %d, want 0", u, got)
		}
	}
}
