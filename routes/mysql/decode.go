package mysql

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// decoder appends text-protocol rows to Arrow builders and emits a record
// batch whenever the builders reach chunk bytes. The driver hands each
// value over as int64/uint64/float (numbers it parsed) or as a []byte into
// its read buffer; the decoder parses the bytes in place (dates, times,
// decimals) or copies them once into the builder (text, blobs), so it
// allocates nothing per value itself.
type decoder struct {
	table string
	cols  []routes.Column
	kinds []kind
	scale []int32 // decimal scale per column
	opts  options
	bld   *array.RecordBuilder
	bins  []*array.BinaryBuilder // string and binary builders, to presize
	emit  func(arrow.RecordBatch) error
	chunk int
	size  int // bytes appended since the last batch
	rows  int
	bytes int64 // value bytes decoded, for the Counter
}

func newDecoder(table string, cols []routes.Column, schema *arrow.Schema, mem memory.Allocator, chunk int, o options, emit func(arrow.RecordBatch) error) *decoder {
	d := &decoder{table: table, cols: cols, opts: o, emit: emit, chunk: chunk,
		bld: array.NewRecordBuilder(mem, schema), kinds: make([]kind, len(cols)), scale: make([]int32, len(cols))}
	for i, c := range cols {
		ct := parseColumnType(c.NativeType)
		d.kinds[i], _ = columnKind(ct, o)
		d.scale[i] = ct.scale
		switch b := d.bld.Field(i).(type) {
		case *array.StringBuilder:
			d.bins = append(d.bins, b.BinaryBuilder)
		case *array.BinaryBuilder:
			d.bins = append(d.bins, b)
		}
	}
	return d
}

// appendRow decodes one row; it may emit a batch.
func (d *decoder) appendRow(vals []driver.Value) error {
	for i, v := range vals {
		if err := d.appendValue(i, v); err != nil {
			return d.valueErr(i, v, err)
		}
	}
	d.rows++
	if d.size >= d.chunk {
		return d.flush()
	}
	return nil
}

// flush emits the builders' rows, then sizes the builders for a batch like
// this one, so the next fills without growing (each growth copies and
// leaves garbage). It reserves only after emit has handed the batch over,
// so a pipe holds two batches' buffers, not three.
func (d *decoder) flush() error {
	if d.rows == 0 {
		return nil
	}
	data := make([]int, len(d.bins))
	for i, b := range d.bins {
		data[i] = b.DataLen()
	}
	rows := d.rows
	b := d.bld.NewRecordBatch()
	d.size, d.rows = 0, 0
	if err := d.emit(b); err != nil {
		return err
	}
	d.bld.Reserve(rows + rows/routes.BatchHeadroom)
	for i, b := range d.bins {
		b.ReserveData(data[i] + data[i]/routes.BatchHeadroom)
	}
	return nil
}

// Close emits the last batch.
func (d *decoder) Close() error { return d.flush() }

// Release frees the builders, and a half-decoded row with them.
func (d *decoder) Release() { d.bld.Release() }

func (d *decoder) appendValue(i int, v driver.Value) error {
	b := d.bld.Field(i)
	if v == nil {
		b.AppendNull()
		d.size++
		return nil
	}
	switch d.kinds[i] {
	case kindString, kindBinary:
		return d.appendBytes(b, v)
	case kindBool, kindBitBool:
		return d.appendBool(b.(*array.BooleanBuilder), d.kinds[i], v)
	case kindDecimal:
		return d.appendDecimal(b, v, d.scale[i])
	case kindDate, kindDatetime, kindTime, kindDuration:
		return d.appendTemporal(b, d.kinds[i], v)
	case kindFloat32, kindFloat64:
		return d.appendFloat(b, v)
	}
	return d.appendInt(b, d.kinds[i], v)
}

func (d *decoder) appendBytes(b array.Builder, v driver.Value) error {
	bs, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("unexpected %T", v)
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		b.BinaryBuilder.Append(bs)
	case *array.BinaryBuilder:
		b.Append(bs)
	}
	d.size += len(bs) + 4
	d.bytes += int64(len(bs))
	return nil
}

var (
	errNotBool   = errors.New("not 0 or 1")
	errZeroDate  = errors.New("zero or invalid date")
	errTimeRange = errors.New("outside 00:00:00..24:00:00")
	errRange     = errors.New("out of range")
)

func (d *decoder) appendBool(b *array.BooleanBuilder, k kind, v driver.Value) error {
	var n uint64
	var err error
	if k == kindBitBool {
		n, err = bitsValue(v)
	} else {
		n, err = uintValue(v)
	}
	switch {
	case err != nil:
		return err
	case n > 1:
		return errNotBool
	}
	b.Append(n == 1)
	d.size++
	d.bytes++
	return nil
}

func (d *decoder) appendFloat(b array.Builder, v driver.Value) error {
	var f float64
	switch x := v.(type) {
	case float32:
		b.(*array.Float32Builder).Append(x)
		d.size += 4
		d.bytes += 4
		return nil
	case float64:
		f = x
	case []byte:
		var err error
		if f, err = parseFloat(x); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unexpected %T", v)
	}
	switch b := b.(type) {
	case *array.Float32Builder:
		b.Append(float32(f))
	case *array.Float64Builder:
		b.Append(f)
	}
	d.size += 8
	d.bytes += 8
	return nil
}

// appendInt covers the integer kinds, bit(n) and year.
func (d *decoder) appendInt(b array.Builder, k kind, v driver.Value) error {
	d.size += 8
	d.bytes += 8
	if (k >= kindUint8 && k <= kindUint64) || k == kindBits {
		return appendUint(b, k, v)
	}
	n, err := intValue(v)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		if n < math.MinInt8 || n > math.MaxInt8 {
			return errRange
		}
		b.Append(int8(n))
	case *array.Int16Builder:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return errRange
		}
		b.Append(int16(n))
	case *array.Int32Builder:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return errRange
		}
		b.Append(int32(n))
	case *array.Int64Builder:
		b.Append(n)
	}
	return nil
}

func appendUint(b array.Builder, k kind, v driver.Value) error {
	var n uint64
	var err error
	if k == kindBits {
		n, err = bitsValue(v)
	} else {
		n, err = uintValue(v)
	}
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Uint8Builder:
		if n > math.MaxUint8 {
			return errRange
		}
		b.Append(uint8(n))
	case *array.Uint16Builder:
		if n > math.MaxUint16 {
			return errRange
		}
		b.Append(uint16(n))
	case *array.Uint32Builder:
		if n > math.MaxUint32 {
			return errRange
		}
		b.Append(uint32(n))
	case *array.Uint64Builder:
		b.Append(n)
	}
	return nil
}

func (d *decoder) appendDecimal(b array.Builder, v driver.Value, scale int32) error {
	bs, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("unexpected %T", v)
	}
	l, err := parseDecimal(bs, scale)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Decimal128Builder:
		b.Append(decimal128.New(int64(l[1]), l[0]))
		d.size += 16
	case *array.Decimal256Builder:
		b.Append(decimal256.New(l[3], l[2], l[1], l[0]))
		d.size += 32
	}
	d.bytes += int64(len(bs))
	return nil
}

func (d *decoder) appendTemporal(b array.Builder, k kind, v driver.Value) error {
	bs, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("unexpected %T", v)
	}
	d.size += 8
	d.bytes += int64(len(bs))
	switch k {
	case kindDate:
		days, err := parseDate(bs)
		return d.orNull(b, err, func() { b.(*array.Date32Builder).Append(arrow.Date32(days)) })
	case kindDatetime:
		us, err := parseDatetime(bs)
		return d.orNull(b, err, func() { b.(*array.TimestampBuilder).Append(arrow.Timestamp(us)) })
	}
	us, err := parseTime(bs)
	if err != nil {
		return err
	}
	if k == kindDuration {
		b.(*array.DurationBuilder).Append(arrow.Duration(us))
		return nil
	}
	if us < 0 || us > 24*3600*1e6 {
		return errTimeRange
	}
	b.(*array.Time64Builder).Append(arrow.Time64(us))
	return nil
}

// orNull appends the parsed value, or NULL for a zero date when the URL
// says zero_dates=null.
func (d *decoder) orNull(b array.Builder, err error, appendValue func()) error {
	switch {
	case err == nil:
		appendValue()
	case errors.Is(err, errZeroDate) && d.opts.zeroDatesNull:
		b.AppendNull()
	default:
		return err
	}
	return nil
}

// valueErr names the table, column and value (valueErr).
func (d *decoder) valueErr(i int, v driver.Value, err error) error {
	shown := fmt.Sprint(v)
	if bs, ok := v.([]byte); ok {
		shown = string(bs[:min(len(bs), 40)])
	}
	return valueErr(d.table, d.cols[i], shown, err)
}
