package iceberg

import (
	"context"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

var _ routes.SnapshotSummarizer = (*Endpoint)(nil)

// Changes summarizes the snapshots with sequence numbers in (after, until]
// of a table (routes.SnapshotSummarizer).
func (e *Endpoint) Changes(ctx context.Context, t routes.TableRef, after, until string) (routes.ChangeSummary, error) {
	var sum routes.ChangeSummary
	lo, err := parseSeq(after)
	if err != nil {
		return sum, err
	}
	base, _, err := splitSnapshot(t)
	if err != nil {
		return sum, err
	}
	tbl, err := e.loadTable(ctx, base)
	if err != nil {
		return sum, err
	}
	snap, err := rangeEnd(tbl, until)
	if err != nil || snap == nil {
		return sum, err
	}
	meta := tbl.Metadata()
	for s := snap; s != nil && s.SequenceNumber > lo; s = parentOf(meta, s) {
		addChange(&sum, snapshotChange(s))
	}
	return sum, nil
}

func rangeEnd(tbl *table.Table, until string) (*table.Snapshot, error) {
	if until == "" {
		return tbl.CurrentSnapshot(), nil
	}
	hi, err := parseSeq(until)
	if err != nil {
		return nil, err
	}
	return snapshotBySeq(tbl, hi)
}

func addChange(c *routes.ChangeSummary, s routes.SnapshotChange) {
	c.Snapshots = append([]routes.SnapshotChange{s}, c.Snapshots...)
	switch {
	case s.Operation == string(table.OpAppend):
		c.Appends++
	case s.Operation == string(table.OpReplace):
		c.Compactions++
	case s.Flagged:
		c.Rewrites++
		c.DeletedDataFiles += max(s.DeletedDataFiles, 0)
		c.DeletedRows += max(s.DeletedRows, 0)
		c.AddedDeleteFiles += max(s.AddedDeleteFiles, 0)
		c.AddedDeleteRows += max(s.AddedDeleteRows, 0)
	}
}

func snapshotChange(s *table.Snapshot) routes.SnapshotChange {
	c := routes.SnapshotChange{SnapshotID: s.SnapshotID, SequenceNumber: s.SequenceNumber}
	if s.Summary == nil {
		c.Flagged = true // no summary: assume the worst
		return c
	}
	p := s.Summary.Properties
	c.Operation, c.RunID = string(s.Summary.Operation), p[RunProperty]
	c.AddedRows = count(p, "added-records")
	c.DeletedDataFiles = count(p, "deleted-data-files")
	c.DeletedRows = count(p, "deleted-records")
	c.AddedDeleteFiles = count(p, "added-delete-files")
	c.AddedDeleteRows = sumCounts(count(p, "added-position-deletes"), count(p, "added-equality-deletes"))
	switch s.Summary.Operation {
	case table.OpAppend, table.OpReplace:
	default:
		c.Flagged = !hasAny(p, deleteCounters) || c.DeletedDataFiles != 0 || c.DeletedRows != 0 || c.AddedDeleteFiles != 0 || c.AddedDeleteRows != 0
	}
	return c
}

var deleteCounters = []string{"deleted-data-files", "deleted-records", "added-delete-files", "added-position-deletes", "added-equality-deletes"}

func hasAny(p map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := p[k]; ok {
			return true
		}
	}
	return false
}

// count reads a summary counter: absent is 0, unparsable -1.
func count(p map[string]string, key string) int64 {
	v, ok := p[key]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func sumCounts(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}
