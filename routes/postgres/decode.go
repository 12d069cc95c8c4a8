package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// The binary COPY stream: an 11-byte signature, int32 flags, int32 header
// extension length and the extension; then tuples (int16 field count, and
// per field an int32 length, -1 for NULL, and the value's binary send
// form); then the trailer, an int16 -1.
var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

const (
	copyHeaderLen  = 19
	copyFlagOIDs   = 1 << 16
	defaultChunk   = 4 << 20
	maxIdleCarry   = 1 << 20 // a carry buffer grown past this by a huge row is dropped once empty
	tupleFieldsLen = 2
)

// decoder turns a binary COPY stream into Arrow record batches. It is an
// io.Writer fed by pgconn's CopyTo, with writes of arbitrary boundaries: a
// tuple split across writes waits in carry until complete, and nothing is
// appended to the builders before a tuple is whole, so values are copied
// once, from the wire bytes straight into the builders.
type decoder struct {
	rb      *array.RecordBuilder
	cols    []colDecoder
	emit    func(arrow.RecordBatch) error
	chunk   int
	carry   []byte // an incomplete header or tuple
	need    int    // bytes carry must hold before parsing can progress
	started bool   // header seen
	ended   bool   // trailer seen
	closed  bool
	pending int // tuple bytes in the builders since the last emit
	batch   int // rows in the builders
	read    int64
	err     error
	binary  []*array.BinaryBuilder // string and binary builders, to presize
	rows    atomic.Int64           // rows emitted
	bytes   atomic.Int64           // bytes consumed, published per batch
}

// colDecoder appends one column's values to its builder.
type colDecoder struct {
	name string
	put  putFunc
	null func()
}

// putFunc appends one non-NULL value given its binary send form. It must
// not keep b.
type putFunc func(b []byte) error

// newDecoder decodes the stream of `COPY (SELECT cols…) TO STDOUT (FORMAT
// binary)` into batches of (&routes.TableInfo{Columns: cols}).Schema(),
// calling emit whenever the builders hold about chunkBytes of wire data.
// emit takes ownership of the batch, even when it returns an error (which
// stops the decode). A column the codec cannot decode is reported by the
// first Write.
func newDecoder(cols []routes.Column, alloc memory.Allocator, chunkBytes int, emit func(arrow.RecordBatch) error) *decoder {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	if chunkBytes <= 0 {
		chunkBytes = defaultChunk
	}
	schema := (&routes.TableInfo{Scheme: Scheme, Columns: cols}).Schema()
	d := &decoder{rb: array.NewRecordBuilder(alloc, schema), emit: emit, chunk: chunkBytes}
	d.cols = make([]colDecoder, len(cols))
	for i, c := range cols {
		put, err := newPut(c.Name, c.Type, parsePGType(c.NativeType), d.rb.Field(i))
		if err != nil {
			d.err = fmt.Errorf("column %q: %w", c.Name, err)
			break
		}
		d.cols[i] = colDecoder{name: c.Name, put: put, null: d.rb.Field(i).AppendNull}
		d.binary = appendBinaryBuilders(d.binary, d.rb.Field(i))
	}
	return d
}

// appendBinaryBuilders collects the variable-length builders under b.
func appendBinaryBuilders(list []*array.BinaryBuilder, b array.Builder) []*array.BinaryBuilder {
	switch b := b.(type) {
	case *array.StringBuilder:
		return append(list, b.BinaryBuilder)
	case *array.BinaryBuilder:
		return append(list, b)
	case *array.ListBuilder:
		return appendBinaryBuilders(list, b.ValueBuilder())
	}
	return list
}

// Rows returns the rows emitted so far; safe from another goroutine. (The
// counters move once a batch: a shared counter bumped per row would cost
// more than decoding an integer.)
func (d *decoder) Rows() int64 { return d.rows.Load() }

// Bytes returns the stream bytes consumed by the batches emitted so far
// (all of them after Close); safe from another goroutine.
func (d *decoder) Bytes() int64 { return d.bytes.Load() }

// Write decodes p. An error is sticky: later writes and Close return it.
func (d *decoder) Write(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.closed {
		return 0, errors.New("copy decoder: write after close")
	}
	n := len(p)
	rest, err := d.completeCarry(p)
	if err == nil && len(rest) > 0 {
		var used int
		used, err = d.parse(rest)
		d.carry = append(d.carry, rest[used:]...)
	}
	if err != nil {
		d.err = err
		return 0, err
	}
	d.read += int64(n)
	return n, nil
}

// completeCarry feeds p into a pending partial tuple, a few bytes at a time
// (as many as the tuple is known to need), until it is decoded or p runs
// out; it returns what is left of p.
func (d *decoder) completeCarry(p []byte) ([]byte, error) {
	for len(d.carry) > 0 && len(p) > 0 {
		k := min(max(d.need-len(d.carry), 1), len(p))
		d.carry, p = append(d.carry, p[:k]...), p[k:]
		if len(d.carry) < d.need {
			return p, nil
		}
		used, err := d.parse(d.carry)
		if err != nil {
			return p, err
		}
		d.carry = d.carry[:copy(d.carry, d.carry[used:])]
	}
	if len(d.carry) == 0 && cap(d.carry) > maxIdleCarry {
		d.carry = nil
	}
	return p, nil
}

// parse decodes every complete item in buf and returns the bytes used; when
// it stops short it records in d.need how many bytes it needs.
func (d *decoder) parse(buf []byte) (off int, err error) {
	if !d.started {
		if off, err = d.header(buf); off == 0 || err != nil {
			return 0, err
		}
	}
	for off < len(buf) {
		if d.ended {
			return off, errors.New("binary copy: data after the trailer")
		}
		size, err := d.tuple(buf[off:])
		if size == 0 || err != nil {
			return off, err
		}
		off += size
		if d.ended {
			continue
		}
		if err := d.afterTuple(size); err != nil {
			return off, err
		}
	}
	return off, nil
}

// header checks the stream header and returns its length, or 0 and sets
// d.need while it is incomplete.
func (d *decoder) header(b []byte) (int, error) {
	if len(b) < copyHeaderLen {
		d.need = copyHeaderLen
		return 0, nil
	}
	if !bytes.Equal(b[:len(copySignature)], copySignature) {
		return 0, errors.New("not a binary COPY stream (bad signature)")
	}
	if binary.BigEndian.Uint32(b[11:])&copyFlagOIDs != 0 {
		return 0, errors.New("binary COPY with OIDs is not supported")
	}
	size := copyHeaderLen + int(binary.BigEndian.Uint32(b[15:]))
	if len(b) < size {
		d.need = size
		return 0, nil
	}
	d.started = true
	return size, nil
}

// tuple decodes the tuple (or trailer) at the start of b and returns its
// size, or 0 and sets d.need while it is incomplete.
func (d *decoder) tuple(b []byte) (int, error) {
	size, err := d.scanTuple(b)
	if size <= 0 || err != nil {
		return 0, err
	}
	if size == tupleFieldsLen {
		d.ended = true // the trailer: a field count of -1
		return size, nil
	}
	return size, d.decodeTuple(b[:size])
}

// scanTuple walks the field lengths to find the tuple's end without
// decoding anything.
func (d *decoder) scanTuple(b []byte) (int, error) {
	if len(b) < tupleFieldsLen {
		d.need = tupleFieldsLen
		return 0, nil
	}
	nf := int(int16(binary.BigEndian.Uint16(b)))
	if nf == -1 {
		return tupleFieldsLen, nil
	}
	if nf != len(d.cols) || nf == 0 {
		return 0, fmt.Errorf("binary copy: tuple has %d fields, want %d", nf, len(d.cols))
	}
	off := tupleFieldsLen
	for range nf {
		if len(b) < off+4 {
			d.need = off + 4
			return 0, nil
		}
		n := int(int32(binary.BigEndian.Uint32(b[off:])))
		if n < -1 {
			return 0, fmt.Errorf("binary copy: bad field length %d", n)
		}
		off += 4 + max(n, 0)
	}
	if len(b) < off {
		d.need = off
		return 0, nil
	}
	return off, nil
}

func (d *decoder) decodeTuple(t []byte) error {
	off := tupleFieldsLen
	for i := range d.cols {
		c := &d.cols[i]
		n := int(int32(binary.BigEndian.Uint32(t[off:])))
		off += 4
		if n < 0 {
			c.null()
			continue
		}
		if err := c.put(t[off : off+n]); err != nil {
			return fmt.Errorf("column %q: %w", c.name, err)
		}
		off += n
	}
	return nil
}

// afterTuple emits a batch once the builders hold chunk bytes of tuples,
// so a batch is at most chunk bytes plus one row.
func (d *decoder) afterTuple(size int) error {
	d.batch++
	d.pending += size
	if d.pending < d.chunk {
		return nil
	}
	return d.flush()
}

// flush emits the builders' rows, then sizes the builders for a batch like
// this one so the next grows without copying. It reserves only once emit
// has handed the batch over (and the consumer has let go of the one
// before), so a pipe never holds three batches' worth of buffers.
func (d *decoder) flush() error {
	d.bytes.Store(d.read)
	if d.batch == 0 {
		return nil
	}
	var data [16]int
	for i, b := range d.binary[:min(len(d.binary), len(data))] {
		data[i] = b.DataLen()
	}
	rec := d.rb.NewRecordBatch()
	n := d.batch
	d.batch, d.pending = 0, 0
	d.rows.Add(int64(n))
	if err := d.emit(rec); err != nil {
		return err
	}
	d.rb.Reserve(n + n/routes.BatchHeadroom)
	for i, b := range d.binary[:min(len(d.binary), len(data))] {
		b.ReserveData(data[i] + data[i]/routes.BatchHeadroom)
	}
	return nil
}

// Close emits the last partial batch and checks the stream was whole. It
// frees the builders; call it exactly once, also after a failed Write.
func (d *decoder) Close() error {
	if d.closed {
		return d.err
	}
	d.closed = true
	d.bytes.Store(d.read)
	defer d.rb.Release()
	switch {
	case d.err != nil:
		return d.err
	case !d.started:
		d.err = errors.New("binary copy: stream ended before its header")
	case !d.ended:
		d.err = errors.New("binary copy: stream ended before its trailer (truncated)")
	default:
		d.err = d.flush()
	}
	return d.err
}
