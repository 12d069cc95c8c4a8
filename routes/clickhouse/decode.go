package clickhouse

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// colDecoder appends one Native column of rows values to its Arrow
// builder. nulls, when set, is the column's null map (1 = NULL): values
// are read for every row and appended as NULL where it says so.
type colDecoder interface {
	decode(r *proto.Reader, rows int, nulls []byte) error
}

// batcher decodes result blocks into Arrow builders and cuts a record
// batch whenever about chunk bytes have accumulated. It is a ch-go
// proto.Result, so native results decode straight into Arrow; decoders
// are built from the first block's column types.
type batcher struct {
	rb    *array.RecordBuilder
	decs  []colDecoder
	types []string
	size  int64 // bytes decoded since the last batch
	rows  int64 // rows in the builders
	chunk int64
	emit  func(ctx context.Context, b arrow.RecordBatch, bytes int64) error
}

func newBatcher(mem memory.Allocator, schema *arrow.Schema, chunk int, emit func(context.Context, arrow.RecordBatch, int64) error) *batcher {
	return &batcher{rb: array.NewRecordBuilder(mem, schema), chunk: int64(chunk), emit: emit}
}

func (b *batcher) DecodeResult(r *proto.Reader, version int, blk proto.Block) error {
	fields := b.rb.Schema().Fields()
	if blk.Columns != len(fields) {
		return fmt.Errorf("block has %d columns, want %d", blk.Columns, len(fields))
	}
	for i, f := range fields {
		name, typ, err := readColumnHeader(r, version)
		if err != nil {
			return err
		}
		dec, err := b.decoder(i, typ)
		if err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
		if blk.Rows == 0 {
			continue
		}
		if err := dec.decode(r, blk.Rows, nil); err != nil {
			return fmt.Errorf("column %s (%s → arrow %s): %w", name, typ, f.Type, err)
		}
	}
	b.rows += int64(blk.Rows)
	return nil
}

// decoder returns column i's decoder, built when its type is first seen.
func (b *batcher) decoder(i int, typ string) (colDecoder, error) {
	if b.decs == nil {
		b.decs, b.types = make([]colDecoder, len(b.rb.Fields())), make([]string, len(b.rb.Fields()))
	}
	if b.decs[i] != nil && b.types[i] == typ {
		return b.decs[i], nil
	}
	t, err := parseType(typ)
	if err != nil {
		return nil, err
	}
	dec, err := newDecoder(t, b.rb.Field(i), &b.size)
	if err != nil {
		return nil, err
	}
	b.decs[i], b.types[i] = dec, typ
	return dec, nil
}

func (b *batcher) blockDone(ctx context.Context) error {
	if b.size < b.chunk {
		return nil
	}
	return b.flush(ctx)
}

// flush emits what the builders hold as one record batch.
func (b *batcher) flush(ctx context.Context) error {
	if b.rows == 0 {
		return nil
	}
	rec, size := b.rb.NewRecordBatch(), b.size
	b.rows, b.size = 0, 0
	return b.emit(ctx, rec, size)
}

func (b *batcher) release() { b.rb.Release() }

// newDecoder returns the decoder of ClickHouse type t into builder ab,
// or an error when t does not decode into ab's Arrow type.
func newDecoder(t chType, ab array.Builder, size *int64) (colDecoder, error) {
	switch t.Name {
	case "Nullable":
		inner, err := newDecoder(*t.Elem, ab, size)
		return &nullableDec{inner: inner}, err
	case "Array":
		lb, ok := ab.(*array.ListBuilder)
		if !ok {
			return nil, fmt.Errorf("%s does not decode into arrow %s", t.raw, ab.Type())
		}
		inner, err := newDecoder(*t.Elem, lb.ValueBuilder(), size)
		return &arrayDec{b: lb, inner: inner, size: size}, err
	}
	if dec := scalarDecoder(t, ab, size); dec != nil {
		return dec, nil
	}
	return nil, fmt.Errorf("%s does not decode into arrow %s", t.raw, ab.Type())
}

type nullableDec struct {
	inner colDecoder
	nulls []byte
}

func (d *nullableDec) decode(r *proto.Reader, rows int, _ []byte) error {
	d.nulls = grow(d.nulls, rows)
	if err := r.ReadFull(d.nulls); err != nil {
		return fmt.Errorf("null map: %w", err)
	}
	return d.inner.decode(r, rows, d.nulls)
}

// arrayDec reads the UInt64 end offsets, then every element as one column.
type arrayDec struct {
	b      *array.ListBuilder
	inner  colDecoder
	size   *int64
	ends   []uint64
	starts []int32
	valid  []bool
}

func (d *arrayDec) decode(r *proto.Reader, rows int, _ []byte) error {
	d.ends = grow(d.ends, rows)
	if err := r.ReadFull(asBytes(d.ends)); err != nil {
		return fmt.Errorf("array offsets: %w", err)
	}
	*d.size += int64(8 * rows)
	base := int32(d.b.ValueBuilder().Len())
	d.starts = grow(d.starts, rows)
	prev := uint64(0)
	for i, end := range d.ends {
		d.starts[i] = base + int32(prev)
		prev = end
	}
	if len(d.valid) < rows {
		d.valid = make([]bool, rows)
		for i := range d.valid {
			d.valid[i] = true // ClickHouse arrays are never NULL
		}
	}
	d.b.AppendValues(d.starts, d.valid[:rows])
	return d.inner.decode(r, int(prev), nil)
}

// grow returns s resized to n, reusing its memory.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// asBytes views a slice of fixed-width values as its bytes (the Native
// format is little-endian, like every platform weir builds for).
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// validity turns a null map into Arrow's valid flags (nil: all valid).
func validity(nulls []byte, buf *[]bool) []bool {
	if nulls == nil {
		return nil
	}
	*buf = grow(*buf, len(nulls))
	for i, n := range nulls {
		(*buf)[i] = n == 0
	}
	return *buf
}
