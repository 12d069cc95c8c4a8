package routes

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func intBatches(mem memory.Allocator, n int) (*arrow.Schema, Produce) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return schema, func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for i := 0; i < n; i++ {
			b := array.NewRecordBuilder(mem, schema)
			b.Field(0).(*array.Int64Builder).AppendValues([]int64{int64(i), int64(i)}, nil)
			rec := b.NewRecordBatch()
			b.Release()
			if err := emit(rec); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, produce := intBatches(mem, 5)
	s := NewBatches(context.Background(), schema, produce)
	var rows int64
	for s.Next() {
		rows += s.RecordBatch().NumRows()
	}
	if err := s.Err(); err != nil || rows != 10 || s.Rows() != 10 {
		t.Fatalf("rows %d (counted %d), err %v", rows, s.Rows(), err)
	}
	s.Release()
}

func TestBatches_ReleaseEarlyStopsProducer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, produce := intBatches(mem, 1000)
	s := NewBatches(context.Background(), schema, produce)
	if !s.Next() {
		t.Fatal("no first batch")
	}
	s.Release() // the producer is blocked on the channel: it must stop and free
}

func TestBatches_ErrorAndClaim(t *testing.T) {
	boom := errors.New("boom")
	s := NewBatches(context.Background(), nil, func(context.Context, func(arrow.RecordBatch) error) error { return boom })
	if s.Next() || !errors.Is(s.Err(), boom) {
		t.Fatalf("want boom, got %v", s.Err())
	}
	s.Release()
	c := NewBatches(context.Background(), nil, func(context.Context, func(arrow.RecordBatch) error) error { t.Fatal("ran"); return nil })
	if !c.Claim() || c.Next() || c.Err() != nil {
		t.Fatal("a claimed stream must read as empty")
	}
	c.Release()
}
