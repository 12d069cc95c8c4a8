package iceberg

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

var _ routes.SnapshotPager = (*Endpoint)(nil)

// ReadSnapshot streams every live row of the snapshot whose sequence
// number is snapshot, data files in path order, each file's rows in file
// order with its deletes applied, leaving out the first skip rows
// (routes.SnapshotPager). A file with no delete files is skipped whole by
// its record count; the rows skipped inside a file are read and dropped.
func (e *Endpoint) ReadSnapshot(ctx context.Context, info *routes.TableInfo, snapshot string, skip int64, opts routes.ReadOptions) (routes.Stream, error) {
	seq, err := parseSeq(snapshot)
	if err != nil {
		return nil, err
	}
	cols, err := projection(info, opts.Columns)
	if err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	base, _, err := e.pinned(info.Ref)
	if err != nil {
		return nil, err
	}
	tbl, err := e.loadTable(ctx, base)
	if err != nil {
		return nil, err
	}
	snap, err := snapshotBySeq(tbl, seq)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Ref, err)
	}
	scan, err := newScan(tbl, snap, info, opts.ChunkBytes, opts.Columns, nil, "", "", "")
	if err != nil {
		return nil, err
	}
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan files of %s: %w", info.Ref, err)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].File.FilePath() < tasks[j].File.FilePath() })
	p := &pager{ctx: ctx, scan: scan, tasks: tasks, skip: skip}
	s := &stream{ctx: ctx, e: e, opts: opts, started: true, next: p.next, stop: p.close,
		r:      routes.Range{Table: info, Count: 1, Label: fmt.Sprintf("snapshot %d from row %d", seq, skip)},
		schema: (&routes.TableInfo{Columns: cols, Scheme: Scheme}).Schema()}
	s.refs.Store(1)
	return s, nil
}

// pager reads a snapshot's file scan tasks one after another, each alone
// (so its rows come in file order), dropping the first skip rows. Each
// task's scan runs in a goroutine that hands its batches over a channel,
// not in an iter.Pull coroutine: a page ends mid-scan, and DuckDB releases
// the stream from a cgo callback, where a coroutine cannot be stopped.
type pager struct {
	ctx    context.Context
	scan   *table.Scan
	tasks  []table.FileScanTask
	skip   int64
	ch     chan scanned
	cancel context.CancelFunc
}

type scanned struct {
	rec arrow.RecordBatch
	err error
}

func (p *pager) next() (arrow.RecordBatch, error, bool) {
	for {
		if p.ch == nil {
			if len(p.tasks) == 0 {
				return nil, nil, false
			}
			t := p.tasks[0]
			p.tasks = p.tasks[1:]
			if n := t.File.Count(); p.skip >= n && noDeletes(t) {
				p.skip -= n
				continue
			}
			if err := p.start(t); err != nil {
				return nil, err, true
			}
		}
		got, ok := <-p.ch
		if !ok {
			p.close()
			continue
		}
		if got.err != nil {
			return nil, got.err, true
		}
		rec, n := got.rec, got.rec.NumRows()
		switch {
		case p.skip >= n:
			p.skip -= n
			rec.Release()
			continue
		case p.skip > 0:
			out := rec.NewSlice(p.skip, n)
			rec.Release()
			p.skip = 0
			return out, nil, true
		}
		return rec, nil, true
	}
}

// start scans one task in a goroutine.
func (p *pager) start(t table.FileScanTask) error {
	ctx, cancel := context.WithCancel(p.ctx)
	_, batches, err := p.scan.ReadTasks(ctx, []table.FileScanTask{t})
	if err != nil {
		cancel()
		return fmt.Errorf("scan %s: %w", t.File.FilePath(), err)
	}
	ch := make(chan scanned, 1)
	go func() {
		defer close(ch)
		for rec, err := range batches {
			select {
			case ch <- scanned{rec, err}:
			case <-ctx.Done():
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	p.ch, p.cancel = ch, cancel
	return nil
}

// close stops the running scan and drops what it had handed over.
func (p *pager) close() {
	if p.ch == nil {
		return
	}
	p.cancel()
	for got := range p.ch {
		if got.rec != nil {
			got.rec.Release()
		}
	}
	p.ch, p.cancel = nil, nil
}

func noDeletes(t table.FileScanTask) bool {
	return len(t.DeleteFiles) == 0 && len(t.EqualityDeleteFiles) == 0 && len(t.DeletionVectorFiles) == 0
}
