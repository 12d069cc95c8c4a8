package routes

import "context"

// SnapshotPager is a Source whose first read of a table can be split into
// pages that a later process resumes: ReadSnapshot streams the rows of the
// snapshot whose offset (the SnapshotCursor value, e.g. an Iceberg sequence
// number) is snapshot, in one fixed order — data files by path, each file's
// rows in file order, deletes applied — leaving out the first skip rows of
// that order. The same (snapshot, skip) always yields the same rows, so a
// consumer commits (snapshot, rows consumed) as its place inside a
// snapshot (incremental.Mark.Page). Iceberg implements it.
type SnapshotPager interface {
	ReadSnapshot(ctx context.Context, info *TableInfo, snapshot string, skip int64, opts ReadOptions) (Stream, error)
}
