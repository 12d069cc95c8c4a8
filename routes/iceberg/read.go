package iceberg

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// newScan scans snap with a projection, the filter when set and, for a
// column cursor, the After < cursor <= Until filter (applied to rows, not
// only to files).
func newScan(tbl *table.Table, snap *table.Snapshot, info *routes.TableInfo, chunk int, cols []string, filter iceberg.BooleanExpression, cursor, after, until string) (*table.Scan, error) {
	opts := []table.ScanOption{table.WithSnapshotID(snap.SnapshotID), table.WithArrowBatchSize(batchRows(info, chunk))}
	if len(cols) > 0 {
		opts = append(opts, table.WithSelectedFields(cols...))
	}
	if filter == nil {
		filter = iceberg.AlwaysTrue{}
	}
	if cursor != "" && cursor != routes.SnapshotCursor && (after != "" || until != "") {
		f, ok := schemaOf(tbl, snap).FindFieldByName(cursor)
		if !ok {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
		}
		bounds, err := cursorFilter(cursor, f.Type, after, until)
		if err != nil {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: err.Error()}
		}
		filter = iceberg.NewAnd(filter, bounds)
	}
	opts = append(opts, table.WithRowFilter(filter))
	return tbl.Scan(opts...), nil
}

// batchRows sizes scan batches to about chunk bytes, guessing 16 bytes a
// value.
func batchRows(info *routes.TableInfo, chunk int) int {
	if chunk <= 0 {
		chunk = routes.DefaultChunkBytes
	}
	return max(1024, chunk/(16*max(len(info.Columns), 1)))
}

// Read opens one pipe over a range; the scan starts at the first Next.
func (e *Endpoint) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	return e.read(ctx, r, opts, nil)
}

// read opens a pipe whose scan also applies filter, when set.
func (e *Endpoint) read(ctx context.Context, r routes.Range, opts routes.ReadOptions, filter iceberg.BooleanExpression) (routes.Stream, error) {
	cols, err := projection(r.Table, opts.Columns)
	if err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	s := &stream{ctx: ctx, e: e, r: r, opts: opts, filter: filter, schema: (&routes.TableInfo{Columns: cols, Scheme: Scheme}).Schema()}
	s.refs.Store(1)
	return s, nil
}

func projection(info *routes.TableInfo, names []string) ([]routes.Column, error) {
	if len(names) == 0 {
		return info.Columns, nil
	}
	cols := make([]routes.Column, len(names))
	for i, n := range names {
		c, ok := info.Column(n)
		if !ok {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: n, Problem: "column does not exist"}
		}
		cols[i] = c
	}
	return cols, nil
}

// stream is one pipe: a scan of some data files to Arrow.
type stream struct {
	ctx    context.Context // the Read call's: RecordReader methods take none
	e      *Endpoint
	r      routes.Range
	opts   routes.ReadOptions
	filter iceberg.BooleanExpression // weir read --where's pushed part; nil: none
	schema *arrow.Schema

	refs, rows, bytes atomic.Int64
	started           bool
	next              func() (arrow.RecordBatch, error, bool)
	stop              func()
	cur               arrow.RecordBatch
	err               error
}

var _ routes.Counter = (*stream)(nil)

func (s *stream) Schema() *arrow.Schema          { return s.schema }
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *stream) Record() arrow.RecordBatch      { return s.cur }
func (s *stream) Err() error                     { return s.err }
func (s *stream) Rows() int64                    { return s.rows.Load() }
func (s *stream) Bytes() int64                   { return s.bytes.Load() }
func (s *stream) Retain()                        { s.refs.Add(1) }

// Release stops the scan at the last reference.
func (s *stream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.stop != nil {
		s.stop()
	}
	s.releaseCur()
}

func (s *stream) releaseCur() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Next moves to the next non-empty batch, in the Read's schema.
func (s *stream) Next() bool {
	s.releaseCur()
	if s.err != nil {
		return false
	}
	if !s.started {
		s.started = true
		if s.err = s.open(); s.err != nil {
			return false
		}
	}
	for {
		rec, err, ok := s.next()
		if !ok || err != nil {
			s.err = err
			if s.err == nil {
				s.err = s.ctx.Err()
			}
			return false
		}
		out, err := s.fit(rec)
		rec.Release()
		if s.err = err; err != nil {
			return false
		}
		if out.NumRows() > 0 {
			s.cur = out
			s.rows.Add(out.NumRows())
			s.bytes.Add(routes.RecordBytes(out))
			return true
		}
		out.Release()
	}
}

// open resolves the range's files and starts the scan.
func (s *stream) open() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	spec, err := decodeRange(s.r)
	if err != nil {
		return err
	}
	tbl, snap, keep, err := s.selection(spec)
	if err != nil || snap == nil {
		s.next = func() (arrow.RecordBatch, error, bool) { return nil, nil, false }
		return err
	}
	cursor := s.opts.Cursor
	if spec.Added {
		cursor = ""
	}
	scan, err := newScan(tbl, snap, s.r.Table, s.opts.ChunkBytes, s.opts.Columns, s.filter, cursor, s.opts.After, s.opts.Until)
	if err != nil {
		return err
	}
	return s.start(scan, keep)
}

func (s *stream) start(scan *table.Scan, keep func(string) bool) error {
	all, err := scan.PlanFiles(s.ctx)
	if err != nil {
		return fmt.Errorf("plan files of %s: %w", s.r.Table.Ref, err)
	}
	var tasks []table.FileScanTask
	for _, t := range all {
		if keep(t.File.FilePath()) {
			tasks = append(tasks, t)
		}
	}
	_, batches, err := scan.ReadTasks(s.ctx, tasks)
	if err != nil {
		return fmt.Errorf("scan %s: %w", s.r.Table.Ref, err)
	}
	s.next, s.stop = iter.Pull2(batches)
	return nil
}

// selection is the snapshot and the files a range reads.
func (s *stream) selection(spec rangeSpec) (*table.Table, *table.Snapshot, func(string) bool, error) {
	base, _, err := s.e.pinned(s.r.Table.Ref)
	if err != nil {
		return nil, nil, nil, err
	}
	tbl, err := s.e.loadTable(s.ctx, base)
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.Added {
		return s.addedSelection(tbl)
	}
	if spec.Snapshot == 0 {
		return tbl, nil, nil, nil
	}
	snap := tbl.SnapshotByID(spec.Snapshot)
	if snap == nil {
		return nil, nil, nil, fmt.Errorf("%s: snapshot %d expired during the run", s.r.Table.Ref, spec.Snapshot)
	}
	files := map[string]bool{}
	for _, f := range spec.Files {
		files[f] = true
	}
	return tbl, snap, func(p string) bool { return files[p] }, nil
}

// addedSelection: at the snapshot Until names (the current one when
// empty), the files added after After that hash to this part.
func (s *stream) addedSelection(tbl *table.Table) (*table.Table, *table.Snapshot, func(string) bool, error) {
	after, err := parseSeq(s.opts.After)
	if err != nil {
		return nil, nil, nil, err
	}
	snap := tbl.CurrentSnapshot()
	if s.opts.Until != "" {
		until, err := parseSeq(s.opts.Until)
		if err != nil {
			return nil, nil, nil, err
		}
		if snap, err = snapshotBySeq(tbl, until); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", s.r.Table.Ref, err)
		}
	}
	if snap == nil || snap.SequenceNumber <= after {
		return tbl, nil, nil, nil
	}
	if after < 0 {
		// From the start every live row is new, also those a compaction or
		// a copy-on-write delete rewrote (their files are skipped below,
		// whose rows an earlier offset has read).
		return tbl, snap, func(p string) bool { return inPart(p, s.r.Index, s.r.Count) }, nil
	}
	added, err := addedFiles(s.ctx, tbl, snap, after)
	if err != nil {
		return nil, nil, nil, err
	}
	keep := func(p string) bool { return added[p] && inPart(p, s.r.Index, s.r.Count) }
	return tbl, snap, keep, nil
}

// fit puts a scanned batch in the Read's schema: columns by name, types
// converted where the scan's differ (large strings, a pinned old schema).
func (s *stream) fit(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range s.schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			cols[i] = array.MakeArrayOfNull(s.opts.Allocator, f.Type, int(rec.NumRows()))
			continue
		}
		c, err := convertArray(s.ctx, rec.Column(idx[0]), f.Type, s.opts.Allocator)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(s.schema, cols, rec.NumRows()), nil
}
