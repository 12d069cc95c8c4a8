package routes

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// DefaultChunkBytes is the target size of one record batch (one pipe's buffer).
const DefaultChunkBytes = 4 << 20

// ChunksPerPipe is how many chunks one pipe holds at its peak: the batch
// the source is building (or handing over, unbuffered: routes.Batches), the
// batch the destination is encoding, and the destination's encoded form of
// it (a ClickHouse block, a Parquet column chunk's pages).
const ChunksPerPipe = 3

// Budget is how many pipes run and how much each buffers.
type Budget struct {
	Parallel   int
	ChunkBytes int
}

// PipeBytes is what all pipes hold together at their peak.
func (b Budget) PipeBytes() int64 {
	return int64(b.Parallel) * int64(b.ChunkBytes) * ChunksPerPipe
}

// DefaultBudget fits the pipes to the CPUs and to a cgroup memory cap: the
// pipes' ChunksPerPipe chunks each must fit in three quarters of the cap,
// the last quarter is left for everything else.
func DefaultBudget() Budget {
	return budgetFor(runtime.NumCPU(), cgroupMemoryLimit())
}

func budgetFor(cpus int, memLimit int64) Budget {
	b := Budget{Parallel: min(max(cpus, 2), 8), ChunkBytes: DefaultChunkBytes}
	if memLimit <= 0 {
		return b
	}
	usable := memLimit * 3 / 4
	for b.Parallel > 1 && b.PipeBytes() > usable {
		if b.ChunkBytes > 1<<20 {
			b.ChunkBytes /= 2
			continue
		}
		b.Parallel--
	}
	return b
}

// Fill replaces zero fields with the defaults (chunk thinned to fit the cap).
func (b Budget) Fill() Budget {
	d := DefaultBudget()
	if b.Parallel <= 0 {
		b.Parallel = d.Parallel
	}
	if b.ChunkBytes <= 0 {
		b.ChunkBytes = d.ChunkBytes
	}
	return b
}

// cgroupMemoryLimit reads the cgroup v2 (or v1) memory cap; 0 means none.
func cgroupMemoryLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0
		}
		return n
	}
	return 0
}

// MemoryCap is the cgroup memory cap of this process; 0 means none.
func MemoryCap() int64 { return cgroupMemoryLimit() }
