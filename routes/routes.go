package routes

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Source reads tables. Its methods are safe for concurrent use: Read is called
// once per range, from as many goroutines as there are pipes.
type Source interface {
	io.Closer
	Prober
	// Plan splits the table into ranges that together cover every row
	// exactly once; there may be more ranges than opts.Pipes (Copy runs
	// Pipes of them at a time).
	Plan(ctx context.Context, info *TableInfo, opts PlanOptions) ([]Range, error)
	// Read opens one pipe over one range. Nothing is read before the first
	// Next (or WriteTo, for a NativeStream).
	Read(ctx context.Context, r Range, opts ReadOptions) (Stream, error)
}

// Prober describes tables. Every Source is one; a destination that cannot
// be read (BigQuery) may be one too, so that an append or merge with no
// saved state resumes from its table's cursor maximum (with CursorSource)
// without opening it as a Source.
type Prober interface {
	// Probe returns the table's columns (Arrow and native types), primary key
	// and row estimate. A missing table or an unreadable type is a *ProbeError.
	Probe(ctx context.Context, table TableRef) (*TableInfo, error)
}

// Destination writes tables through a staging object that is swapped in (or
// merged, or appended) atomically by Stage.Commit.
type Destination interface {
	io.Closer
	// Prepare takes the destination table's lock and creates the staging
	// object. A table held by another live run fails with a *LockedError
	// (errors.Is(err, ErrLocked)) before any row moves.
	Prepare(ctx context.Context, info *TableInfo, opts WriteOptions) (Stage, error)
}

// Stage is one run's staging object on a destination.
type Stage interface {
	// Write loads one pipe into the staging object and returns the rows
	// written. It is called once per pipe, concurrently.
	Write(ctx context.Context, s Stream) (int64, error)
	// Commit makes the staged rows visible (swap, append or merge by
	// opts.Mode) and saves state, in one atomic step, then releases the lock.
	Commit(ctx context.Context, state State) error
	// Abort drops the staging object and releases the lock; the destination
	// table is left exactly as it was. Abort after Commit is a no-op.
	Abort(ctx context.Context) error
}

// JointStage is a stage that can commit another stage of the same
// destination in its own atomic step (PostgreSQL: one transaction), so
// both tables change together or neither does.
type JointStage interface {
	Stage
	// CommitWith commits other with otherState and this stage with state,
	// atomically, then releases both locks. A stage it cannot join fails
	// with ErrUnsupported before anything is committed.
	CommitWith(ctx context.Context, state State, other Stage, otherState State) error
}

// SharedDestination is a Destination whose tables several workers of one
// backfill plan write at once (docs/workers.md): PrepareShared takes the
// table's lock in shared mode — shared stages coexist, a run that wants the
// table whole (Prepare) is refused with ErrLocked while one is open, and
// the other way round — and never creates, replaces or alters the table
// (it must exist: the plan's commit created it). Its stage commits only
// with FencedStage.CommitIf. Only append and merge.
type SharedDestination interface {
	PrepareShared(ctx context.Context, info *TableInfo, opts WriteOptions) (FencedStage, error)
}

// FencedStage is a Stage whose commit is a compare-and-set on the state it
// replaces: CommitIf commits the data and state only if the destination's
// saved state for state.SourceID is prev (nil: none saved) in Watermark and
// Position, checked in the commit's own atomic step; otherwise nothing is
// committed, the stage is aborted, and the error is ErrFenced.
type FencedStage interface {
	Stage
	CommitIf(ctx context.Context, state State, prev *State) error
}

// Stream is one pipe of Arrow record batches. On cancel Next returns false
// and Err returns the context's error.
type Stream interface {
	array.RecordReader
}

// NativeStream is a Stream that can also hand over its wire bytes untouched,
// like io.WriterTo for io.Copy. A stream is consumed one way or the other,
// never both.
type NativeStream interface {
	Stream
	// Format names the wire format, e.g. "postgres/binary-copy".
	Format() string
	// WriteTo copies the wire bytes to w and returns the bytes written.
	WriteTo(w io.Writer) (int64, error)
}

// NativeWriter is a Stage that can load a wire format without an Arrow decode.
type NativeWriter interface {
	// AcceptsNative reports whether WriteNative can load the format for the
	// table being staged.
	AcceptsNative(format string) bool
	// WriteNative loads the stream's wire bytes and returns the rows written,
	// or ErrNoPassthrough (before reading anything) to ask for Arrow instead.
	WriteNative(ctx context.Context, s NativeStream) (int64, error)
}

// Counter is implemented by streams that count what they read, for progress
// and the report. Both methods are safe to call from another goroutine.
type Counter interface {
	Rows() int64
	Bytes() int64
}

// StateReader is a Destination that can return the state saved by the last
// commit into a table from a source (watermark, position).
type StateReader interface {
	LoadState(ctx context.Context, table TableRef, sourceID string) (State, bool, error)
}

// StateLister is a StateReader that returns every state saved beside a
// table (each source's, a backfill plan's and its buckets' progress), read
// in one atomic step: one version of them, never a mix of two commits. A
// model reads it to learn what a backfill under way on its source table
// can still commit (incremental.Settled). No state at all is an empty list.
type StateLister interface {
	States(ctx context.Context, table TableRef) ([]State, error)
}

// PlanOptions bound how a source splits a table.
type PlanOptions struct {
	Pipes int // the pipes that will read the ranges at a time; >= 1
	// Cursor and After restrict the plan to rows past a watermark (append,
	// merge); empty After means from the start.
	Cursor string
	After  string
}

// ReadOptions shape one pipe.
type ReadOptions struct {
	Columns    []string // projection; nil means every column of the TableInfo
	Cursor     string   // the watermark column, when After or Until is set
	After      string   // exclusive lower bound on Cursor, text-encoded
	Until      string   // inclusive upper bound on Cursor, text-encoded
	ChunkBytes int      // target size of one record batch
	Allocator  memory.Allocator
}

// WriteOptions shape one destination write.
type WriteOptions struct {
	Table     TableRef // the destination table
	Mode      Mode
	RunID     string
	Key       []string // merge key; defaults to the source's primary key
	Allocator memory.Allocator
	// Fresh: the table is one weir creates (a changelog's baseline), so an
	// existing table of that name is the user's: Prepare refuses it
	// (routes.Occupied) under the lock instead of replacing it.
	Fresh bool
	// Existing: the table must be there already (a backfill's finish: the
	// workers' rows are in it); a commit that would create it fails with
	// ErrNotFound instead, so a table dropped meanwhile is not recreated
	// empty under an offset that says its rows were copied.
	Existing bool
	// Truncate: a replace that may leave the table empty (weir reset
	// --full-refresh). Without it a destination may refuse to replace a
	// table with no rows.
	Truncate bool
}

// Range is one slice of a planned table. Only the source that planned it
// interprets Predicate.
type Range struct {
	Table     *TableInfo
	Index     int    // position in the plan
	Count     int    // ranges in the plan
	Predicate string // source-specific, e.g. a SQL condition
	Label     string // for progress and errors, e.g. "id in [1, 5000)"
}

// State is what a commit records beside the data, in the same atomic step.
type State struct {
	SourceID  string // the source identity (URL without secrets + table)
	Cursor    string // watermark column
	Watermark string // text-encoded highest cursor value committed
	Position  string // CDC position (LSN, binlog coordinate); a VersionedSource's version and revision
	RunID     string
	Rows      int64 // rows this run committed
}

// CursorSource is a Source that can bound an incremental read: the highest
// value of the cursor column now in the table, text-encoded so the same
// source compares it back in its SQL (integers as decimal text, times as
// "2006-01-02 15:04:05.999999" in UTC). ok is false for an empty table.
//
// NullCount counts the rows whose column is NULL. An incremental run
// compares the cursor with > and <=, so a row with a NULL cursor is never
// copied: every source that runs incrementally counts them, and the window
// refuses such a cursor instead of losing those rows silently.
type CursorSource interface {
	MaxCursor(ctx context.Context, info *TableInfo, cursor string) (max string, ok bool, err error)
	NullCount(ctx context.Context, info *TableInfo, column string) (int64, error)
}

// RangeCounter is a CursorSource that counts the rows of a cursor window,
// after < cursor <= until (after "": from the start of the table): weir
// status gives lag in rows with it. PostgreSQL counts with count(*);
// Iceberg, for its pseudo-cursor of snapshots, adds up the added-records of
// the snapshots' summaries (the head snapshot's total-records from the
// start). Another cursor it cannot count is ErrUnsupported.
type RangeCounter interface {
	CountRange(ctx context.Context, info *TableInfo, cursor, after, until string) (int64, error)
}

// Window bounds one incremental run: rows with After < Cursor <= Until.
// Empty means there is nothing new, and the run is a no-op that says so.
type Window struct {
	Cursor, After, Until string
	Empty                bool
}

// WindowFunc decides a run's window once the source table is probed.
type WindowFunc func(ctx context.Context, info *TableInfo, dest TableRef) (Window, error)

// VersionedSource is a Source whose tables have a content version that
// changes whenever their rows may (github://: the files' blob SHAs), read
// at one pinned revision (the commit SHA a ref resolved to). Copy records
// both in State.Position ("version=… rev=…", or "rev=…" for append and
// merge) and in CopyResult.SourceRevision; a replace that finds, under the
// destination's lock, the version the last replace committed is a no-op
// that says so (CopyResult.Unchanged): nothing is read.
type VersionedSource interface {
	TableVersion(ctx context.Context, info *TableInfo) (revision, version string, err error)
}

// TableLister is a Source that can list the tables of a schema (--schema).
type TableLister interface {
	ListTables(ctx context.Context, schema string) ([]TableRef, error)
}

// KeysetSource is a Source that pages through a table in the order of a
// key (keyset or "seek" paging: each page starts where the last ended, so
// it stays as fast deep into a huge table as at its start, unlike OFFSET).
// Key values are text-encoded as MaxCursor encodes them, one per key
// column, so the same source compares them back exactly.
type KeysetSource interface {
	// KeysetPage plans the page after the key values after (nil: from the
	// first row): the rows whose key is greater than after and at most the
	// limit-th such row's key, in key order. It returns that range, for
	// Read, and the key of its last row; ok is false when no row is past
	// after. Rows with a NULL in a key column are in no page. When the key
	// is not unique, a page holds every row equal to its last key (so no
	// row is ever skipped) and may exceed limit by those ties.
	KeysetPage(ctx context.Context, info *TableInfo, key, after []string, limit int) (r Range, last []string, ok bool, err error)
}
