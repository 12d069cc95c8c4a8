package gsheets

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// stream is one tab's pipe: the producer reads a page of rows per
// request and builds batches of ChunkBytes; only one page is held.
type stream struct {
	*routes.Batches
	bytes atomic.Int64
}

var _ routes.Counter = (*stream)(nil)

// Bytes counts the cell text decoded (the API's JSON, less its syntax).
func (s *stream) Bytes() int64 { return s.bytes.Load() }

// Read opens the pipe of one tab. Rows outside the (After, Until] cursor
// window are dropped as they are read: a sheet has no index to skip them.
func (s *Source) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	var spec rangeSpec
	if err := json.Unmarshal([]byte(r.Predicate), &spec); err != nil {
		return nil, fmt.Errorf("range %q: %w", r.Label, err)
	}
	info := r.Table
	out, err := project(info, opts.Columns)
	if err != nil {
		return nil, err
	}
	filter, need, err := where.WindowFilter(info, out, opts, "name a header column with --cursor")
	if err != nil {
		return nil, err
	}
	built, err := project(info, need)
	if err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = routes.DefaultChunkBytes
	}
	st := &stream{}
	rd := &tabReader{src: s, spec: spec, info: info, built: built, out: out, filter: filter, mem: opts.Allocator, chunk: opts.ChunkBytes, bytes: &st.bytes}
	st.Batches = routes.NewBatches(ctx, out, rd.produce)
	return st, nil
}

// project is the table's schema cut to cols (all when nil).
func project(info *routes.TableInfo, cols []string) (*arrow.Schema, error) {
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

// tabReader decodes one tab's pages into batches.
type tabReader struct {
	src    *Source
	spec   rangeSpec
	info   *routes.TableInfo
	built  *arrow.Schema // the columns decoded: out's and the cursor
	out    *arrow.Schema
	filter *where.Filter
	mem    memory.Allocator
	chunk  int
	bytes  *atomic.Int64
}

func (t *tabReader) produce(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	cfg := t.src.cfg
	names := make([]string, len(t.info.Columns))
	pos := map[string]int{}
	for i, c := range t.info.Columns {
		names[i] = c.Name
		pos[c.Name] = i
	}
	idx := make([]int, t.built.NumFields()) // header position of each built column
	for i, f := range t.built.Fields() {
		idx[i] = pos[f.Name]
	}
	rb := array.NewRecordBuilder(t.mem, t.built)
	defer rb.Release()
	apps := make([]appender, len(idx))
	for i := range idx {
		apps[i] = appenderFor(rb.Field(i))
	}
	rows, size := 0, 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec := rb.NewRecordBatch()
		rows, size = 0, 0
		shaped, err := t.shape(ctx, rec)
		rec.Release()
		if err != nil || shaped == nil {
			return err
		}
		return emit(shaped)
	}
	for first := t.spec.First; first <= t.spec.Last; first += cfg.pageRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		last := min(first+cfg.pageRows-1, t.spec.Last)
		page, err := t.src.api.values(ctx, a1(t.spec.Tab, 1, t.spec.Cols, first, last), cfg.typed)
		if err != nil {
			return err
		}
		for i, row := range page {
			if allBlank(row) {
				continue // a blank row between rows holds no data
			}
			rowNum := first + i
			if err := checkWidth(t.spec.Tab, row, rowNum, names, cfg.headerRow); err != nil {
				return err
			}
			for j, c := range idx {
				if c >= len(row) || blank(row[c]) {
					rb.Field(j).AppendNull() // a short row: the API leaves out trailing blank cells
					continue
				}
				if err := apps[j](row[c]); err != nil {
					return t.typeError(rowNum, t.built.Field(j), err)
				}
				size += len(cellText(row[c])) + 8
			}
			rows++
			if size >= t.chunk {
				t.bytes.Add(int64(size))
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	t.bytes.Add(int64(size))
	return flush()
}

func (t *tabReader) typeError(rowNum int, f arrow.Field, err error) error {
	cfg := t.src.cfg
	return routes.BadInput("gsheets tab %q row %d, column %q: %v (typed=1 inferred %s from the first page of rows, page_rows=%d): fix the cell, or read the tab without typed=1 (every column text)",
		t.spec.Tab, rowNum, f.Name, err, f.Type, cfg.pageRows)
}

func allBlank(row []any) bool {
	for _, v := range row {
		if !blank(v) {
			return false
		}
	}
	return true
}

// shape filters rec by the cursor window and cuts it to the output's
// columns; nil when no row is left. rec is not released.
func (t *tabReader) shape(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if t.filter != nil {
		kept, err := t.filter.Apply(ctx, rec, t.mem)
		if err != nil || kept == nil {
			return nil, err
		}
		defer kept.Release()
		rec = kept
	}
	cols := make([]arrow.Array, t.out.NumFields())
	for i := range cols {
		cols[i] = rec.Column(i) // out's columns come first in built
	}
	return array.NewRecordBatch(t.out, cols, rec.NumRows()), nil
}

// MaxCursor reads the tab for the cursor's highest value (a sheet keeps
// no index), with routes.CursorMax, as the file route does.
func (s *Source) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist", Hint: "name a header column with --cursor"}
	}
	m, err := routes.NewCursorMax(c.Type)
	if err != nil {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: err.Error(), Hint: "read with typed=1 and use a column of numbers or dates as the cursor"}
	}
	err = s.scan(ctx, info, cursor, func(a arrow.Array) { m.Observe(a) })
	if err != nil {
		return "", false, fmt.Errorf("max of cursor %s.%s: %w", info.Ref, cursor, err)
	}
	return m.Text(), m.Seen(), nil
}

// NullCount reads the tab and counts the rows whose column is blank.
func (s *Source) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	if _, ok := info.Column(column); !ok {
		return 0, &routes.ProbeError{Table: info.Ref.String(), Column: column, Problem: "column does not exist"}
	}
	var n int64
	err := s.scan(ctx, info, column, func(a arrow.Array) { n += int64(a.NullN()) })
	if err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	return n, nil
}

// scan reads one column of every row.
func (s *Source) scan(ctx context.Context, info *routes.TableInfo, column string, each func(arrow.Array)) error {
	ranges, err := s.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return err
	}
	for _, r := range ranges {
		st, err := s.Read(ctx, r, routes.ReadOptions{Columns: []string{column}})
		if err != nil {
			return err
		}
		for st.Next() {
			each(st.RecordBatch().Column(0))
		}
		err = st.Err()
		st.Release()
		if err != nil {
			return err
		}
	}
	return nil
}
