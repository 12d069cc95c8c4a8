package routestest

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// Columns are the conformance table's columns as a PostgreSQL source
// describes them (Row).
var Columns = []routes.Column{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, NativeType: "bigint"},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true, NativeType: "text"},
	{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true, NativeType: "numeric(12,2)"},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true, NativeType: "timestamp without time zone"},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true, NativeType: "boolean"},
}

// MemInfo describes an in-memory conformance table named table.
func MemInfo(table string) *routes.TableInfo {
	ref, _ := routes.ParseTableRef(table)
	return &routes.TableInfo{Scheme: "mem", SourceID: "mem://#" + table, Ref: ref, Columns: Columns, PrimaryKey: []string{"id"}}
}

// Batch builds a record batch of conformance rows.
func Batch(mem memory.Allocator, rows []Row) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, MemInfo("t").Schema())
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		appendOpt(b.Field(1), r.Name, func(v string) { b.Field(1).(*array.StringBuilder).Append(v) })
		appendOpt(b.Field(2), r.Amount, func(v string) {
			n, err := decimal128.FromString(v, 12, 2)
			if err != nil {
				panic(fmt.Sprintf("amount %q: %v", v, err))
			}
			b.Field(2).(*array.Decimal128Builder).Append(n)
		})
		if r.TS != nil {
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.TS.UnixMicro()))
		} else {
			b.Field(3).AppendNull()
		}
		appendOpt(b.Field(4), r.Flag, func(v bool) { b.Field(4).(*array.BooleanBuilder).Append(v) })
	}
	return b.NewRecordBatch()
}

func appendOpt[T any](b array.Builder, v *T, put func(T)) {
	if v == nil {
		b.AppendNull()
		return
	}
	put(*v)
}

// MemSource is an in-memory routes.Source of one table: its rows, split into
// batches of Batch rows, one range per Pipes share. Block, when set, is
// received from before every batch after the first (tests use it to cancel
// mid-copy).
type MemSource struct {
	Table    *routes.TableInfo
	Rows     []Row
	BatchLen int
	Block    chan struct{}
	read     atomic.Int64
}

var _ routes.Source = (*MemSource)(nil)

// Close does nothing.
func (s *MemSource) Close() error { return nil }

// Probe returns the table.
func (s *MemSource) Probe(_ context.Context, t routes.TableRef) (*routes.TableInfo, error) {
	if t.String() != s.Table.Ref.String() {
		return nil, &routes.ProbeError{Table: t.String(), Problem: "no such table", Err: routes.ErrNotFound}
	}
	return s.Table, nil
}

// Plan splits the rows into up to opts.Pipes contiguous ranges.
func (s *MemSource) Plan(_ context.Context, info *routes.TableInfo, opts routes.PlanOptions) ([]routes.Range, error) {
	n := max(1, min(opts.Pipes, len(s.Rows)))
	out := make([]routes.Range, n)
	for i := range n {
		lo, hi := i*len(s.Rows)/n, (i+1)*len(s.Rows)/n
		out[i] = routes.Range{Table: info, Index: i, Count: n, Predicate: fmt.Sprintf("%d:%d", lo, hi), Label: fmt.Sprintf("rows [%d, %d)", lo, hi)}
	}
	return out, nil
}

var _ routes.CursorSource = (*MemSource)(nil)

// MaxCursor returns the highest id (the only cursor it knows).
func (s *MemSource) MaxCursor(_ context.Context, _ *routes.TableInfo, cursor string) (string, bool, error) {
	if cursor != "id" {
		return "", false, fmt.Errorf("cursor %q: only id", cursor)
	}
	var m int64
	for _, r := range s.Rows {
		m = max(m, r.ID)
	}
	return strconv.FormatInt(m, 10), len(s.Rows) > 0, nil
}

// NullCount is 0: the rows' ids are never NULL.
func (s *MemSource) NullCount(_ context.Context, _ *routes.TableInfo, column string) (int64, error) {
	if column != "id" {
		return 0, fmt.Errorf("column %q: only id", column)
	}
	return 0, nil
}

// Read streams one range, keeping ids in the (After, Until] window.
func (s *MemSource) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	var lo, hi int
	fmt.Sscanf(r.Predicate, "%d:%d", &lo, &hi)
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rows := window(s.Rows[lo:hi], opts)
	var batches []arrow.RecordBatch
	step := max(s.BatchLen, 1)
	if s.BatchLen == 0 {
		step = max(len(rows), 1)
	}
	for i := 0; i < len(rows); i += step {
		batches = append(batches, Batch(mem, rows[i:min(i+step, len(rows))]))
	}
	return &stream{ctx: ctx, schema: r.Table.Schema(), batches: batches, block: s.Block}, nil
}

// BatchStream is a routes.Stream of the given batches, which it owns
// (releases); Next ends with ctx's error once ctx is done.
func BatchStream(ctx context.Context, schema *arrow.Schema, batches ...arrow.RecordBatch) routes.Stream {
	return &stream{ctx: ctx, schema: schema, batches: batches}
}

type stream struct {
	ctx     context.Context
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	cur     arrow.RecordBatch
	block   chan struct{}
	started bool
	err     error
	refs    atomic.Int64
}

func (s *stream) Schema() *arrow.Schema          { return s.schema }
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *stream) Record() arrow.RecordBatch      { return s.cur }
func (s *stream) Err() error                     { return s.err }
func (s *stream) Retain()                        { s.refs.Add(1) }

func (s *stream) Release() {
	if s.refs.Add(-1) >= 0 {
		return
	}
	s.drop()
}

func (s *stream) drop() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	for _, b := range s.batches {
		b.Release()
	}
	s.batches = nil
}

func (s *stream) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.started && s.block != nil {
		select {
		case <-s.block:
		case <-s.ctx.Done():
		}
	}
	s.started = true
	if err := s.ctx.Err(); err != nil || len(s.batches) == 0 {
		s.err = err
		return false
	}
	s.cur, s.batches = s.batches[0], s.batches[1:]
	return true
}

func window(rows []Row, opts routes.ReadOptions) []Row {
	if opts.After == "" && opts.Until == "" {
		return rows
	}
	after, err := strconv.ParseInt(opts.After, 10, 64)
	if err != nil {
		after = -1 << 63
	}
	until, err := strconv.ParseInt(opts.Until, 10, 64)
	if err != nil {
		until = 1<<63 - 1
	}
	var out []Row
	for _, r := range rows {
		if r.ID > after && r.ID <= until {
			out = append(out, r)
		}
	}
	return out
}

// KeylessInfo describes the table of SourceFixture.CreateKeyless: one
// nullable bigint column, id, and no primary key.
func KeylessInfo(table string) *routes.TableInfo {
	ref, _ := routes.ParseTableRef(table)
	return &routes.TableInfo{Scheme: "mem", SourceID: "mem://#" + table, Ref: ref,
		Columns: []routes.Column{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true, NativeType: "bigint"}}}
}

// KeylessBatch builds a batch of KeylessInfo's table (nil is a NULL).
func KeylessBatch(mem memory.Allocator, ids []*int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, KeylessInfo("t").Schema())
	defer b.Release()
	for _, id := range ids {
		appendOpt(b.Field(0), id, b.Field(0).(*array.Int64Builder).Append)
	}
	return b.NewRecordBatch()
}
