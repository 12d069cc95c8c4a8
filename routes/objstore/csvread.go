package objstore

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// csvInput is an open CSV file: the object, gunzipped when it ends in .gz.
type csvInput struct {
	*csvParser
	closers []io.Closer
}

func openCSV(ctx context.Context, s store, f dataFile, read *atomic.Int64) (*csvInput, error) {
	rc, err := s.Stream(ctx, f.Key)
	if err != nil {
		return nil, err
	}
	in := &csvInput{closers: []io.Closer{rc}}
	var r io.Reader = rc
	if read != nil {
		r = &countReader{r: rc, n: read}
	}
	if f.Format == fileformat.CSVGzip {
		gz, err := gzip.NewReader(r)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		in.closers = append([]io.Closer{gz}, in.closers...)
		r = gz
	}
	in.csvParser = newCSVParser(r)
	return in, nil
}

func (in *csvInput) Close() error {
	var first error
	for _, c := range in.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func csvSchema(ctx context.Context, s store, f dataFile) (*arrow.Schema, error) {
	in, err := openCSV(ctx, s, f, nil)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return inferSchema(in.csvParser)
}

// cellFunc appends one field to a column builder.
type cellFunc func(f csvField) error

// csvBatches decodes the needed columns of a CSV file into batches of
// about chunk bytes of text.
type csvBatches struct {
	in     *csvInput
	label  string
	schema *arrow.Schema
	rb     *array.RecordBuilder
	idx    []int // header position of each needed column
	cells  []cellFunc
	chunk  int64
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func (e *Endpoint) csvBatches(ctx context.Context, spec rangeSpec, schema *arrow.Schema, opts batchOptions) (batchSource, error) {
	in, err := openCSV(ctx, e.store, spec.File, opts.read)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", e.describe(spec.File.Key), err)
	}
	b := &csvBatches{in: in, label: e.describe(spec.File.Key), schema: schema, chunk: int64(opts.chunk)}
	b.refs.Store(1)
	if err := b.bind(opts.mem); err != nil {
		in.Close()
		return nil, fmt.Errorf("%s: %w", b.label, err)
	}
	return b, nil
}

// bind maps the needed columns to header positions and builders.
func (b *csvBatches) bind(mem memory.Allocator) error {
	names, err := b.in.header()
	if err != nil {
		return err
	}
	pos := make(map[string]int, len(names))
	for i, n := range names {
		pos[n] = i
	}
	b.rb = array.NewRecordBuilder(mem, b.schema)
	for i, f := range b.schema.Fields() {
		p, ok := pos[f.Name]
		if !ok {
			b.rb.Release()
			return fmt.Errorf("header has no column %q", f.Name)
		}
		b.idx = append(b.idx, p)
		cell := cellFor(b.rb.Field(i))
		if native, _ := f.Metadata.GetValue(routes.MetaNativeType); native == NativeCSV {
			cell = inferredCell(f.Type, cell)
		}
		b.cells = append(b.cells, cell)
	}
	return nil
}

// inferredCell holds a row past the first InferRows to the rule that typed
// its column: 007 in an int64 column, or 12345678901234567.5 in a float64
// one, fails the read instead of landing as 7 or 12345678901234568.
func inferredCell(t arrow.DataType, cell cellFunc) cellFunc {
	var fits func(string) bool
	switch t.ID() {
	case arrow.INT64:
		fits = isInt
	case arrow.FLOAT64:
		fits = isFloat
	default:
		return cell
	}
	return func(f csvField) error {
		if len(f.b) > 0 && !fits(string(f.b)) {
			return fmt.Errorf("%q does not fit %s exactly (the type was inferred from the first %d rows)", f.b, t, InferRows)
		}
		return cell(f)
	}
}

func (b *csvBatches) Schema() *arrow.Schema          { return b.schema }
func (b *csvBatches) RecordBatch() arrow.RecordBatch { return b.cur }
func (b *csvBatches) Record() arrow.RecordBatch      { return b.cur }
func (b *csvBatches) Err() error                     { return b.err }
func (b *csvBatches) Retain()                        { b.refs.Add(1) }

func (b *csvBatches) Release() {
	if b.refs.Add(-1) != 0 {
		return
	}
	b.releaseCur()
	b.rb.Release()
	b.in.Close()
}

func (b *csvBatches) releaseCur() {
	if b.cur != nil {
		b.cur.Release()
		b.cur = nil
	}
}

func (b *csvBatches) Next() bool {
	b.releaseCur()
	if b.err != nil {
		return false
	}
	start, rows := b.in.n, 0
	for b.in.n-start < b.chunk {
		rec, err := b.in.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = b.row(rec)
		}
		if err != nil {
			b.err = fmt.Errorf("%s line %d: %w", b.label, b.in.line, err)
			return false
		}
		rows++
	}
	if rows == 0 {
		return false
	}
	b.cur = b.rb.NewRecordBatch()
	return true
}

func (b *csvBatches) row(rec []csvField) error {
	for i, p := range b.idx {
		if p >= len(rec) {
			b.rb.Field(i).AppendNull() // a short row: missing trailing fields are NULL
			continue
		}
		if err := b.cells[i](rec[p]); err != nil {
			return fmt.Errorf("column %q: %w", b.schema.Field(i).Name, err)
		}
	}
	return nil
}

// cellFor parses text into a builder: an empty unquoted field is NULL;
// strings keep "" as empty; other types go through the forms of
// textAppender (and InferRows' timestamp forms).
func cellFor(bld array.Builder) cellFunc {
	switch bld := bld.(type) {
	case *array.StringBuilder:
		return func(f csvField) error {
			if len(f.b) == 0 && !f.quoted {
				bld.AppendNull()
			} else {
				bld.BinaryBuilder.Append(f.b)
			}
			return nil
		}
	case *array.TimestampBuilder:
		return timestampCell(bld)
	case *array.BinaryBuilder:
		return func(f csvField) error {
			if len(f.b) == 0 && !f.quoted {
				bld.AppendNull()
				return nil
			}
			return bld.AppendValueFromString(string(f.b)) // base64; "" is an empty value
		}
	}
	return func(f csvField) error {
		if len(f.b) == 0 {
			bld.AppendNull()
			return nil
		}
		return bld.AppendValueFromString(string(f.b))
	}
}

// timestampCell reads the raw count, or text with or without an offset
// (without one, the column's zone, UTC when it has none).
func timestampCell(bld *array.TimestampBuilder) cellFunc {
	t := bld.Type().(*arrow.TimestampType)
	loc, err := t.GetZone()
	if err != nil || loc == nil {
		loc = time.UTC
	}
	return func(f csvField) error {
		if len(f.b) == 0 {
			bld.AppendNull()
			return nil
		}
		s := string(f.b)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			bld.Append(arrow.Timestamp(n))
			return nil
		}
		v, _, err := arrow.TimestampFromStringInLocation(s, t.Unit, loc)
		if err != nil {
			return fmt.Errorf("%q is not a timestamp (the type was inferred from the first %d rows)", s, InferRows)
		}
		bld.Append(v)
		return nil
	}
}

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
