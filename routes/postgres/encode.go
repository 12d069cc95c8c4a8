package postgres

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

const (
	encodeBufferBytes = 64 << 10
	maxFieldBytes     = 1<<30 - 1 // PostgreSQL's limit on one value
)

var errFieldTooBig = errors.New("value larger than PostgreSQL's 1 GB limit")

// encoder writes Arrow record batches as a binary COPY stream for
// `COPY t (cols…) FROM STDIN (FORMAT binary)`. The wire form of each value
// is chosen by the destination column's type (cols[i].NativeType, the DDL
// pgType produced), so array_recv and numeric_recv get exactly what the
// table expects, whatever Arrow type carries the value. One row is built
// in a reused buffer and handed to a bufio.Writer; no value allocates.
type encoder struct {
	cols    []routes.Column
	specs   []pgTypeSpec
	w       *bufio.Writer
	buf     []byte // the row being built
	scratch []byte // decimal digits of one numeric
	schema  *arrow.Schema
	src     []int // per destination column, its index in the batch
	encs    []encodeFunc
	arrs    []arrow.Array // the current batch's columns, in destination order
	rows    int64
}

// encodeFunc appends the binary send form of a[i], which is not NULL, to
// e.buf (the length prefix is the caller's).
type encodeFunc func(e *encoder, a arrow.Array, i int) error

// newEncoder writes to w the columns cols, in order; NativeType is each
// column's type in the destination table.
func newEncoder(cols []routes.Column, w io.Writer) *encoder {
	e := &encoder{cols: cols, w: bufio.NewWriterSize(w, encodeBufferBytes)}
	e.specs = make([]pgTypeSpec, len(cols))
	for i, c := range cols {
		e.specs[i] = parsePGType(c.NativeType)
	}
	return e
}

// Rows returns the rows encoded so far.
func (e *encoder) Rows() int64 { return e.rows }

// WriteHeader writes the stream header: signature, no flags, no extension.
func (e *encoder) WriteHeader() error {
	e.buf = append(append(e.buf[:0], copySignature...), 0, 0, 0, 0, 0, 0, 0, 0)
	_, err := e.w.Write(e.buf)
	return err
}

// Encode writes every row of rec. Batch columns are matched to destination
// columns by name, else by position.
func (e *encoder) Encode(rec arrow.RecordBatch) error {
	if err := e.bind(rec.Schema()); err != nil {
		return err
	}
	for j, k := range e.src {
		e.arrs[j] = rec.Column(k)
	}
	defer clear(e.arrs) // do not pin the batch
	n := int(rec.NumRows())
	for i := range n {
		if err := e.row(i); err != nil {
			return err
		}
	}
	e.rows += int64(n)
	if cap(e.buf) > maxIdleCarry {
		e.buf = nil // a huge row passed: do not keep its buffer
	}
	return nil
}

// Close writes the trailer and flushes; it does not close the writer.
func (e *encoder) Close() error {
	if _, err := e.w.Write([]byte{0xff, 0xff}); err != nil {
		return err
	}
	return e.w.Flush()
}

func (e *encoder) row(i int) error {
	e.buf = be.AppendUint16(e.buf[:0], uint16(len(e.encs)))
	for c, enc := range e.encs {
		if err := e.field(enc, e.arrs[c], i); err != nil {
			return &routes.ValueError{Column: e.cols[c].Name, Err: err}
		}
	}
	_, err := e.w.Write(e.buf)
	return err
}

// field appends a length-prefixed value, or -1 for NULL. The length is
// patched in after the value, so arrays nest without a sizing pass.
func (e *encoder) field(enc encodeFunc, a arrow.Array, i int) error {
	if a.IsNull(i) {
		e.buf = be.AppendUint32(e.buf, math.MaxUint32)
		return nil
	}
	at := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	if err := enc(e, a, i); err != nil {
		return err
	}
	n := len(e.buf) - at - 4
	if n > maxFieldBytes {
		return errFieldTooBig
	}
	be.PutUint32(e.buf[at:], uint32(n))
	return nil
}

// bind plans the encoders for a batch schema, once per distinct schema.
func (e *encoder) bind(s *arrow.Schema) error {
	if e.schema != nil && (e.schema == s || e.schema.Equal(s)) {
		return nil
	}
	if s.NumFields() < len(e.cols) {
		return fmt.Errorf("copy encoder: batch has %d columns, the table %d", s.NumFields(), len(e.cols))
	}
	e.src, e.encs = make([]int, len(e.cols)), make([]encodeFunc, len(e.cols))
	e.arrs = make([]arrow.Array, len(e.cols))
	for i, c := range e.cols {
		e.src[i] = i
		if idx := s.FieldIndices(c.Name); len(idx) == 1 {
			e.src[i] = idx[0]
		}
		enc, err := encoderFor(e.specs[i], s.Field(e.src[i]).Type)
		if err != nil {
			return fmt.Errorf("column %q: cannot write Arrow %s into PostgreSQL %s: %w", c.Name, s.Field(e.src[i]).Type, c.NativeType, err)
		}
		e.encs[i] = enc
	}
	e.schema = s
	return nil
}
