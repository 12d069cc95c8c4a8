package main

import (
	"os"
	"runtime/debug"

	"github.com/weirhq/weir/routes"
)

// baseMemory is what weir needs beside its pipes: the Go runtime, the
// drivers' connection buffers, the libraries' tables.
const baseMemory = 32 << 20

// limitMemory sets Go's soft memory limit to the transfer's budget (four
// chunks a pipe, the pipeline's depth, plus a base), so the garbage collector
// keeps the heap near what the pipes hold instead of letting it double. A
// GOMEMLIMIT in the environment wins.
func limitMemory(parallel, chunkBytes int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	b := routes.Budget{Parallel: parallel, ChunkBytes: chunkBytes}.Fill()
	debug.SetMemoryLimit(int64(b.Parallel*b.ChunkBytes*4) + baseMemory)
}
