package iceberg

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// An incremental read by routes.SnapshotCursor with After N and Until M
// returns the rows of the data files that snapshots with sequence numbers
// in (N, M] added and that are still live at M (with the deletes
// committed up to M applied), except the files of replace (compaction)
// and delete (copy-on-write) snapshots, which hold no new rows.

// MaxCursor returns the highest value of cursor at the pinned (or current)
// snapshot: for routes.SnapshotCursor its sequence number; for a column, the
// largest upper bound of the data files' column stats when they are exact
// for it, else the maximum found by a scan of that column.
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	base, snapID, err := e.pinned(info.Ref)
	if err != nil {
		return "", false, err
	}
	tbl, err := e.loadTable(ctx, base)
	if err != nil {
		return "", false, err
	}
	snap, err := snapshotAt(tbl, snapID)
	if err != nil || snap == nil {
		return "", false, err
	}
	if cursor == routes.SnapshotCursor {
		return strconv.FormatInt(snap.SequenceNumber, 10), true, nil
	}
	f, ok := schemaOf(tbl, snap).FindFieldByName(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
	}
	return maxValue(ctx, tbl, snap, f)
}

var _ routes.RangeCounter = (*Endpoint)(nil)

// CountRange counts the rows the snapshots with sequence numbers in
// (after, until] added, from their summaries' added-records (metadata
// only: no file is read); from the start of the table (after ""), the
// until snapshot's total-records. The rows a compaction or a
// copy-on-write rewrite re-adds are counted too. Only routes.SnapshotCursor is
// counted.
func (e *Endpoint) CountRange(ctx context.Context, info *routes.TableInfo, cursor, after, until string) (int64, error) {
	if cursor != routes.SnapshotCursor {
		return 0, fmt.Errorf("%w: counting rows by column %s of an Iceberg table", routes.ErrUnsupported, cursor)
	}
	if after == "" {
		base, _, err := splitSnapshot(info.Ref)
		if err != nil {
			return 0, err
		}
		tbl, err := e.loadTable(ctx, base)
		if err != nil {
			return 0, err
		}
		snap, err := rangeEnd(tbl, until)
		if err != nil || snap == nil || snap.Summary == nil {
			return 0, err
		}
		n, err := strconv.ParseInt(snap.Summary.Properties["total-records"], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: snapshot %d of %s has no total-records", routes.ErrUnsupported, snap.SnapshotID, info.Ref)
		}
		return n, nil
	}
	sum, err := e.Changes(ctx, info.Ref, after, until)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, s := range sum.Snapshots {
		if s.AddedRows < 0 {
			return 0, fmt.Errorf("%w: snapshot %d of %s has no added-records", routes.ErrUnsupported, s.SnapshotID, info.Ref)
		}
		n += s.AddedRows
	}
	return n, nil
}

// NullCount counts the rows whose column is NULL at the pinned (or
// current) snapshot: from the data files' null counts when every file has
// one and no delete file applies, else by a scan of that column.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	if column == routes.SnapshotCursor {
		return 0, nil
	}
	base, snapID, err := e.pinned(info.Ref)
	if err != nil {
		return 0, err
	}
	tbl, err := e.loadTable(ctx, base)
	if err != nil {
		return 0, err
	}
	snap, err := snapshotAt(tbl, snapID)
	if err != nil || snap == nil {
		return 0, err
	}
	f, ok := schemaOf(tbl, snap).FindFieldByName(column)
	if !ok {
		return 0, &routes.ProbeError{Table: info.Ref.String(), Column: column, Problem: "column does not exist"}
	}
	return nullCount(ctx, tbl, snap, f)
}

// parseSeq reads a snapshot cursor value; empty is -1 (before everything).
func parseSeq(s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, routes.BadInput("%s value %q is not a snapshot sequence number", routes.SnapshotCursor, s)
	}
	return n, nil
}

// snapshotBySeq finds the snapshot of the main branch with a sequence
// number; an expired one is an error (the offset cannot be served).
func snapshotBySeq(tbl *table.Table, seq int64) (*table.Snapshot, error) {
	meta := tbl.Metadata()
	for s := tbl.CurrentSnapshot(); s != nil; s = parentOf(meta, s) {
		switch {
		case s.SequenceNumber == seq:
			return s, nil
		case s.SequenceNumber < seq:
			return nil, fmt.Errorf("no snapshot with sequence number %d on the main branch", seq)
		}
	}
	return nil, fmt.Errorf("snapshot with sequence number %d is expired or never existed", seq)
}

// addedFiles lists the live data files at snap that snapshots with
// sequence numbers in (after, snap] added, leaving out files that
// rewrites (replace and delete snapshots) wrote.
func addedFiles(ctx context.Context, tbl *table.Table, snap *table.Snapshot, after int64) (map[string]bool, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	added := map[string]bool{}
	for _, m := range mans {
		// A manifest cannot list a file added after it was written.
		if m.ManifestContent() != iceberg.ManifestContentData || m.SequenceNum() <= after {
			continue
		}
		if err := addedIn(fsys, tbl, m, after, snap.SequenceNumber, added); err != nil {
			return nil, err
		}
	}
	return added, nil
}

func addedIn(fsys icebergio.IO, tbl *table.Table, m iceberg.ManifestFile, after, until int64, added map[string]bool) error {
	for entry, err := range m.Entries(fsys, true) {
		if err != nil {
			return fmt.Errorf("manifest %s: %w", m.FilePath(), err)
		}
		seq := entry.FileSequenceNum()
		if seq == nil || *seq <= after || *seq > until || rewrote(tbl, entry.SnapshotID()) {
			continue
		}
		added[entry.DataFile().FilePath()] = true
	}
	return nil
}

// rewrote says a snapshot's added files hold no new rows: compaction
// (replace) rewrites rows as they were, a copy-on-write delete rewrites
// the rows it keeps.
func rewrote(tbl *table.Table, snapID int64) bool {
	s := tbl.SnapshotByID(snapID)
	if s == nil || s.Summary == nil {
		return false
	}
	return s.Summary.Operation == table.OpReplace || s.Summary.Operation == table.OpDelete
}
