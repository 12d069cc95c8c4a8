package routes

import (
	"context"
	"math"
	"time"
)

// Maintainer is a destination that maintains a table it wrote (weir
// maintain; docs/maintain.md): compacts small files, expires snapshots no
// reader's offset needs, removes orphan files, never moving an offset.
// Iceberg implements it.
type Maintainer interface {
	Maintain(ctx context.Context, t TableRef, o MaintainOptions) (*MaintainReport, error)
}

// AllConsumed is MaintainOptions.Consumed when no reader's offset holds
// the table back.
const AllConsumed = math.MaxInt64

// MaintainOptions say what Maintain does to one table. Every step runs
// under the table's lease, so no weir run writes meanwhile.
type MaintainOptions struct {
	RunID string
	// Consumed is the lowest snapshot sequence number an incremental
	// reader's committed offset names (AllConsumed: none does). Snapshots
	// from it on are kept, and only data files every reader has consumed
	// (sequence number ≤ Consumed) are compacted. The zero value keeps
	// every snapshot and compacts nothing.
	Consumed int64
	// RetainLast keeps at least this many snapshots of the main branch
	// (at least 1: the current one).
	RetainLast int
	// OrphanAge leaves unreferenced files younger than this (a run that
	// is still writing); 0 is the lease's TTL.
	OrphanAge time.Duration
	// TargetFileBytes is the size compaction packs small files into; 0 is
	// DefaultTargetFileBytes. MinInputFiles (0: 2) is the fewest small
	// files worth one rewrite.
	TargetFileBytes int64
	MinInputFiles   int
	// DryRun reports what would be done and changes nothing.
	DryRun bool
	// Skip names steps not to run: compact, expire, orphans.
	Skip []string
}

// DefaultTargetFileBytes is compaction's target data file size.
const DefaultTargetFileBytes = 128 << 20

// MaintainReport is what Maintain did (or, in a dry run, would do).
type MaintainReport struct {
	Table  string `json:"table"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Consumed is the lowest sequence number a reader's offset names
	// (omitted when none does).
	Consumed *int64         `json:"consumed_through,omitempty"`
	Compact  CompactReport  `json:"compact"`
	Expire   ExpireReport   `json:"expire"`
	Orphans  OrphansReport  `json:"orphans"`
	Skipped  []string       `json:"skipped,omitempty"`
	Snapshot *SnapshotState `json:"snapshot,omitempty"` // the current snapshot after maintenance
}

// CompactReport: data files before and after, those rewritten.
type CompactReport struct {
	DataFilesBefore int   `json:"data_files_before"`
	DataFilesAfter  int   `json:"data_files_after"`
	Rewritten       int   `json:"rewritten_files"`
	Written         int   `json:"written_files"`
	BytesBefore     int64 `json:"bytes_before"`
	BytesAfter      int64 `json:"bytes_after"`
	// Unconsumed are small files a reader has not read yet: left as they
	// are (a rewrite would hide their rows from it).
	Unconsumed int `json:"unconsumed_files"`
}

// ExpireReport: the snapshots expired, by sequence number, and those kept.
type ExpireReport struct {
	Expired []int64 `json:"expired_sequence_numbers"`
	Kept    int     `json:"kept_snapshots"`
}

// OrphansReport: files under the table's location no snapshot references.
type OrphansReport struct {
	Files     []string `json:"files"`
	Bytes     int64    `json:"bytes"`
	OlderThan string   `json:"older_than"`
}

// SnapshotState is a snapshot's sequence number and id.
type SnapshotState struct {
	SequenceNumber int64 `json:"sequence_number"`
	ID             int64 `json:"id"`
}
