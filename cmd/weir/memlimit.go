package main

import (
	"os"
	"runtime/debug"

	"github.com/weirhq/weir/routes"
)

// baseMemory is what weir needs beside its pipes: the Go runtime and the
// heap the linked libraries keep from their init (about 12 MB live after a
// collection, most of it iceberg-go's Substrait catalogue), the drivers'
// and encoders' own buffers (Parquet pages and zstd tables, connection
// buffers), and room for the collector to work in.
const baseMemory = 32 << 20

// gcPercent lets the heap grow half its live size between collections
// instead of Go's default of all of it. The pipes' live data is a few
// chunks, so collections stay cheap, and the heap stays well under the
// limit on routes whose encoders hold little (binary COPY, ClickHouse
// blocks); the limit itself then binds only on the heavier ones (Parquet),
// where a lower limit makes the collector run back to back.
const gcPercent = 50

// limitMemory sets Go's soft memory limit to the transfer's budget (the
// pipes' routes.ChunksPerPipe chunks each, plus the destination's
// writer room, routes.SchemeInfo.WriterChunks, plus a base) and the
// collector's pacing, so the heap stays near what the pipes hold instead
// of doubling. GOMEMLIMIT and GOGC in the environment win.
func limitMemory(parallel, chunkBytes int, dstURL string) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	b := routes.Budget{Parallel: parallel, ChunkBytes: chunkBytes}.Fill()
	debug.SetMemoryLimit(b.PipeBytes() + writerBytes(b, dstURL) + baseMemory)
}

// writerBytes is the room the destination's writers take beside the
// pipes' chunks (0 for a URL that does not parse: opening it fails later).
func writerBytes(b routes.Budget, dstURL string) int64 {
	u, err := routes.ParseURL(dstURL)
	if err != nil {
		return 0
	}
	info, _ := routes.Describe(u.Scheme())
	return int64(b.Parallel) * int64(b.ChunkBytes) * int64(info.WriterChunks)
}
