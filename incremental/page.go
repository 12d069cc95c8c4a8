package incremental

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// pollPage reads the next page of a first read of one snapshot: at most
// maxRows rows (0: all that are left) from the committed place inside it
// (Mark.Page), else from the start of the table's head snapshot. A killed
// first run resumes at the last committed page: the pager yields the same
// rows for the same (snapshot, skip), so none is read twice or lost.
func (c *Consumer) pollPage(ctx context.Context, b *Batch, p routes.SnapshotPager, maxRows int64) (*Batch, error) {
	head, ok, err := c.Head(ctx)
	if err != nil {
		return nil, err
	}
	b.Head = head
	snap, skip := head, int64(0)
	if c.page != "" {
		if snap, skip, err = parsePage(c.page); err != nil {
			return nil, fmt.Errorf("source %s of task %s: %w", c.info.Ref, c.cfg.Task, err)
		}
	} else if !ok {
		b.Empty = true
		b.Stream, err = emptyStream(c.info.Schema(), nil)
		return b, err
	}
	s, err := p.ReadSnapshot(ctx, c.info, snap, skip, routes.ReadOptions{ChunkBytes: c.cfg.Budget.ChunkBytes, Allocator: c.cfg.Allocator})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.info.Ref, err)
	}
	b.Paging, b.Page = true, c.page
	b.Stream = &pageStream{in: s, b: b, snap: snap, skip: skip, max: maxRows}
	return b, nil
}

// parsePage splits a Mark.Page, "<snapshot>:<rows>".
func parsePage(page string) (string, int64, error) {
	snap, rows, ok := strings.Cut(page, ":")
	n, err := strconv.ParseInt(rows, 10, 64)
	if !ok || snap == "" || err != nil || n < 0 {
		return "", 0, fmt.Errorf("committed page %q is not <snapshot>:<rows>", page)
	}
	return snap, n, nil
}

func formatPage(snap string, rows int64) string {
	return snap + ":" + strconv.FormatInt(rows, 10)
}

// pageStream passes at most max rows of a snapshot's stream (cutting the
// batch that crosses the limit) and, when it ends, sets its batch's end:
// the snapshot when the stream ran out, else the page the next poll
// starts at.
type pageStream struct {
	in   routes.Stream
	b    *Batch
	snap string
	skip int64 // rows of the snapshot before this page
	max  int64 // 0: no limit
	rows int64
	cur  arrow.RecordBatch
	done bool
}

func (s *pageStream) Schema() *arrow.Schema          { return s.in.Schema() }
func (s *pageStream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *pageStream) Record() arrow.RecordBatch      { return s.cur }
func (s *pageStream) Err() error                     { return s.in.Err() }
func (s *pageStream) Retain()                        { s.in.Retain() }

func (s *pageStream) Release() {
	s.in.Release()
	s.release()
}

func (s *pageStream) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

func (s *pageStream) Next() bool {
	s.release()
	if s.done {
		return false
	}
	if s.max > 0 && s.rows >= s.max {
		s.end(false)
		return false
	}
	if !s.in.Next() {
		if s.in.Err() == nil {
			s.end(true)
		}
		return false
	}
	rec := s.in.RecordBatch()
	n := rec.NumRows()
	if s.max > 0 && s.rows+n > s.max {
		s.cur = rec.NewSlice(0, s.max-s.rows)
	} else {
		rec.Retain()
		s.cur = rec
	}
	s.rows += s.cur.NumRows()
	return true
}

// end records where the page ended: the whole snapshot (the batch commits
// the snapshot as the offset) or a place inside it.
func (s *pageStream) end(last bool) {
	s.done = true
	if last {
		s.b.To, s.b.Page = s.snap, ""
		return
	}
	s.b.Page = formatPage(s.snap, s.skip+s.rows)
}

var _ routes.Stream = (*pageStream)(nil)
