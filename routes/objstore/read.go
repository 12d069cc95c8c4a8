package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
	"github.com/weirhq/weir/routes/where"
)

// batchSource is an opened file's batches, in the columns asked for.
type batchSource = array.RecordReader

type batchOptions struct {
	mem   memory.Allocator
	chunk int
	read  *atomic.Int64 // bytes read from the store
}

// Read opens one pipe over one file (or row groups of one). Rows outside
// the (After, Until] cursor window are dropped as they are read: files
// have no index to skip them.
func (e *Endpoint) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	var spec rangeSpec
	if err := json.Unmarshal([]byte(r.Predicate), &spec); err != nil {
		return nil, fmt.Errorf("range %q: %w", r.Label, err)
	}
	out, err := outputSchema(r.Table, opts.Columns)
	if err != nil {
		return nil, err
	}
	filter, need, err := where.WindowFilter(r.Table, out, opts, "name an existing column with --cursor")
	if err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = routes.DefaultChunkBytes
	}
	s := &fileStream{ctx: ctx, schema: out, filter: filter, mem: opts.Allocator}
	s.refs.Store(1)
	bo := batchOptions{mem: opts.Allocator, chunk: opts.ChunkBytes, read: &s.bytes}
	s.open = func() (batchSource, error) { return e.openBatches(ctx, spec, r.Table, need, bo) }
	return s, nil
}

func (e *Endpoint) openBatches(ctx context.Context, spec rangeSpec, info *routes.TableInfo, need []string, bo batchOptions) (batchSource, error) {
	if spec.File.Format == fileformat.Parquet {
		return e.parquetBatches(ctx, spec, need, bo)
	}
	schema, err := outputSchema(info, need)
	if err != nil {
		return nil, err
	}
	return e.csvBatches(ctx, spec, schema, bo)
}

// outputSchema is the table's schema projected to cols (all when nil).
func outputSchema(info *routes.TableInfo, cols []string) (*arrow.Schema, error) {
	if cols == nil {
		return info.Schema(), nil
	}
	sub := &routes.TableInfo{Scheme: info.Scheme}
	for _, name := range cols {
		c, ok := info.Column(name)
		if !ok {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: name, Problem: "no such column"}
		}
		sub.Columns = append(sub.Columns, c)
	}
	return sub.Schema(), nil
}

// fileStream is one pipe: batches of one file, filtered by the cursor
// window and rebound to the table's schema. The file opens on the first
// Next.
type fileStream struct {
	ctx    context.Context // the Read call's: RecordReader has no ctx parameter
	schema *arrow.Schema
	filter *where.Filter
	mem    memory.Allocator
	open   func() (batchSource, error)

	src   batchSource
	cur   arrow.RecordBatch
	err   error
	done  bool
	refs  atomic.Int64
	rows  atomic.Int64
	bytes atomic.Int64
}

var _ routes.Counter = (*fileStream)(nil)

func (s *fileStream) Schema() *arrow.Schema          { return s.schema }
func (s *fileStream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *fileStream) Record() arrow.RecordBatch      { return s.cur }
func (s *fileStream) Err() error                     { return s.err }
func (s *fileStream) Rows() int64                    { return s.rows.Load() }
func (s *fileStream) Bytes() int64                   { return s.bytes.Load() }
func (s *fileStream) Retain()                        { s.refs.Add(1) }

func (s *fileStream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.releaseCur()
	s.closeSrc()
}

func (s *fileStream) releaseCur() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

func (s *fileStream) closeSrc() {
	if s.src != nil {
		s.src.Release()
		s.src = nil
	}
}

func (s *fileStream) Next() bool {
	s.releaseCur()
	if s.done {
		return false
	}
	if s.src == nil {
		if s.src, s.err = s.open(); s.err != nil {
			return s.finish()
		}
	}
	for s.ctx.Err() == nil && s.src.Next() {
		rec, err := s.shape(s.src.RecordBatch())
		if err != nil {
			s.err = err
			return s.finish()
		}
		if rec != nil {
			s.cur = rec
			s.rows.Add(rec.NumRows())
			return true
		}
	}
	s.err = s.src.Err()
	return s.finish()
}

// finish ends the stream: the context's error wins, the file is closed.
func (s *fileStream) finish() bool {
	if err := s.ctx.Err(); err != nil {
		s.err = err
	}
	s.done = true
	s.closeSrc()
	return false
}

// shape filters rec and rebinds its columns, by name, to the stream's
// schema; nil when no row is left.
func (s *fileStream) shape(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if s.filter != nil {
		kept, err := s.filter.Apply(s.ctx, rec, s.mem)
		if err != nil || kept == nil {
			return nil, err
		}
		defer kept.Release()
		rec = kept
	}
	if rec.NumRows() == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, s.schema.NumFields())
	var casts []arrow.Array
	defer func() {
		for _, c := range casts {
			c.Release()
		}
	}()
	for i, f := range s.schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("file has no column %q", f.Name)
		}
		c := rec.Column(idx[0])
		if !arrow.TypeEqual(c.DataType(), f.Type) {
			cast, err := castUnit(s.ctx, c, f.Type)
			if err != nil {
				return nil, routes.BadInput("column %q is %s in this file, %s in the table: %w", f.Name, c.DataType(), f.Type, err)
			}
			casts = append(casts, cast)
			c = cast
		}
		cols[i] = c
	}
	return array.NewRecordBatch(s.schema, cols, rec.NumRows()), nil
}

// castUnit converts a timestamp column Parquet stored in another unit
// (it has no seconds: a timestamp[s] table is written as milliseconds)
// back to the table's unit; the cast fails rather than truncate.
func castUnit(ctx context.Context, c arrow.Array, want arrow.DataType) (arrow.Array, error) {
	have, ok1 := c.DataType().(*arrow.TimestampType)
	to, ok2 := want.(*arrow.TimestampType)
	if !ok1 || !ok2 || have.TimeZone != to.TimeZone {
		return nil, errors.New("types differ")
	}
	return compute.CastArray(ctx, c, compute.SafeCastOptions(want))
}
