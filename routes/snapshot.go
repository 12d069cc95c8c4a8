package routes

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// SnapshotCursor is the pseudo-column of a table versioned by snapshots
// (Iceberg): its value is a snapshot's sequence number (Kafka's offset).
// MaxCursor of it is the current snapshot's sequence number; a read with
// After N and Until M returns the rows the snapshots in (N, M] added that
// are still live at M. It is the default cursor of a model reading such a
// table (package incremental).
const SnapshotCursor = "_weir_snapshot"

// SnapshotSummarizer is a Source of a table versioned by snapshots
// (Iceberg) that reports, from the snapshots' summaries, what the
// snapshots in a SnapshotCursor range did beyond adding rows: the changes
// an incremental reader of added files cannot see (a model's on_change,
// and max_batch_rows cut at whole snapshots).
type SnapshotSummarizer interface {
	// Changes summarizes the snapshots with sequence numbers in (after,
	// until] (SnapshotCursor values; empty until is the current snapshot).
	Changes(ctx context.Context, table TableRef, after, until string) (ChangeSummary, error)
}

// ChangeSummary reports what the snapshots in a SnapshotCursor range did.
type ChangeSummary struct {
	Snapshots   []SnapshotChange // oldest first
	Appends     int              // snapshots that only added rows
	Compactions int              // replace snapshots: files rewritten, rows unchanged (not flagged)
	Rewrites    int              // overwrite and delete snapshots that removed or rewrote rows
	// Totals over the rewrites.
	DeletedDataFiles, DeletedRows, AddedDeleteFiles, AddedDeleteRows int64
}

// Flagged reports whether any snapshot in the range deleted or rewrote rows.
func (c ChangeSummary) Flagged() bool { return c.Rewrites > 0 }

// SnapshotChange is one snapshot's share, from its summary. An overwrite
// or delete whose summary carries none of the delete counters is flagged.
type SnapshotChange struct {
	SnapshotID, SequenceNumber int64
	Operation                  string
	RunID                      string // the weir run that made it, if any
	AddedRows                  int64  // rows in the data files it added (added-records; -1: unparsable)
	DeletedDataFiles           int64  // data files removed (their rows deleted or rewritten)
	DeletedRows                int64  // rows in them
	AddedDeleteFiles           int64  // position or equality delete files added
	AddedDeleteRows            int64  // position + equality deletes in them
	Flagged                    bool
}

// OfflineSchemaFunc reads a table's schema from local files alone, with
// no server, no lock and nothing written (weir lint). ok false, with why,
// says the URL's table cannot be read that way; err is a failure of a read
// that should have worked.
type OfflineSchemaFunc func(ctx context.Context, u *URL, table TableRef) (s *arrow.Schema, ok bool, why string, err error)

// OfflineSchema reads a table's schema with the OfflineSchemaFunc its
// URL's scheme registered (SchemeInfo.OfflineSchema: a local Iceberg
// lake); any other scheme's is not knowable offline, and why says so.
func OfflineSchema(ctx context.Context, rawURL string, table TableRef) (s *arrow.Schema, ok bool, why string, err error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, false, "", err
	}
	info, _ := Describe(u.Scheme())
	if info.OfflineSchema == nil {
		return nil, false, "tables of " + u.Scheme() + ":// are read only through a connection (only a local Iceberg lake's schema is read offline)", nil
	}
	return info.OfflineSchema(ctx, u, table)
}
