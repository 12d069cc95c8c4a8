package clickhouse

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
)

// scalarDecoder returns the decoder of a non-wrapper type into ab, or nil.
func scalarDecoder(t chType, ab array.Builder, size *int64) colDecoder {
	switch b := ab.(type) {
	case *array.Int8Builder:
		return fixed(t, "Int8", b.AppendValues, size)
	case *array.Int16Builder:
		return fixed(t, "Int16", b.AppendValues, size)
	case *array.Int32Builder:
		return fixed(t, "Int32", b.AppendValues, size)
	case *array.Int64Builder:
		return fixed(t, "Int64", b.AppendValues, size)
	case *array.Uint8Builder:
		return fixed(t, "UInt8", b.AppendValues, size)
	case *array.Uint16Builder:
		return fixed(t, "UInt16", b.AppendValues, size)
	case *array.Uint32Builder:
		return fixed(t, "UInt32", b.AppendValues, size)
	case *array.Uint64Builder:
		return fixed(t, "UInt64", b.AppendValues, size)
	case *array.Float32Builder:
		return fixed(t, "Float32", b.AppendValues, size)
	case *array.Float64Builder:
		return fixed(t, "Float64", b.AppendValues, size)
	case *array.BooleanBuilder:
		if t.Name == "Bool" || t.Name == "UInt8" {
			return &convDec[uint8, bool]{app: b.AppendValues, conv: func(v uint8) bool { return v != 0 }, size: size}
		}
	case *array.StringBuilder:
		return stringDecoder(t, b.BinaryBuilder, size)
	case *array.BinaryBuilder:
		return stringDecoder(t, b, size)
	case *array.FixedSizeBinaryBuilder:
		return fixedStringDecoder(t, b, size)
	case *array.Date32Builder:
		return dateDecoder(t, b, size)
	case *array.TimestampBuilder:
		return timestampDecoder(t, b, size)
	case *array.Decimal128Builder:
		return decimal128Decoder(t, b, size)
	case *array.Decimal256Builder:
		return decimal256Decoder(t, b, size)
	case *extensions.UUIDBuilder:
		if t.Name == "UUID" {
			return &convDec[[16]byte, uuid.UUID]{app: b.AppendValues, conv: uuidFromCH, size: size}
		}
	}
	return nil
}

func fixed[T any](t chType, name string, app func([]T, []bool), size *int64) colDecoder {
	if t.Name != name {
		return nil
	}
	return &fixedDec[T]{app: app, size: size}
}

// fixedDec reads values whose Native layout is Arrow's.
type fixedDec[T any] struct {
	app   func([]T, []bool)
	buf   []T
	valid []bool
	size  *int64
}

func (d *fixedDec[T]) decode(r *proto.Reader, rows int, nulls []byte) error {
	d.buf = grow(d.buf, rows)
	b := asBytes(d.buf)
	if err := r.ReadFull(b); err != nil {
		return err
	}
	*d.size += int64(len(b))
	d.app(d.buf, validity(nulls, &d.valid))
	return nil
}

// convDec reads fixed-width values of type S and converts them to T.
type convDec[S, T any] struct {
	app   func([]T, []bool)
	conv  func(S) T
	src   []S
	dst   []T
	valid []bool
	size  *int64
}

func (d *convDec[S, T]) decode(r *proto.Reader, rows int, nulls []byte) error {
	d.src, d.dst = grow(d.src, rows), grow(d.dst, rows)
	b := asBytes(d.src)
	if err := r.ReadFull(b); err != nil {
		return err
	}
	*d.size += int64(len(b))
	for i, v := range d.src {
		d.dst[i] = d.conv(v)
	}
	d.app(d.dst, validity(nulls, &d.valid))
	return nil
}

func stringDecoder(t chType, b *array.BinaryBuilder, size *int64) colDecoder {
	switch t.Name {
	case "String":
		return &strDec{b: b, size: size}
	case "Enum8", "Enum16":
		names, err := enumNames(t)
		if err != nil {
			return nil
		}
		return &enumDec{b: b, names: names, wide: t.Name == "Enum16", size: size}
	}
	return nil
}

// enumNames parses Enum8('a' = 1, 'b' = 2) into its value → name map.
func enumNames(t chType) (map[int16]string, error) {
	names := make(map[int16]string, len(t.Args))
	for _, a := range t.Args {
		i := strings.LastIndex(a, "=")
		if i < 0 {
			return nil, fmt.Errorf("enum element %q", a)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(a[i+1:]), 10, 16)
		if err != nil {
			return nil, fmt.Errorf("enum element %q: %w", a, err)
		}
		names[int16(v)] = unquote(strings.TrimSpace(a[:i]))
	}
	return names, nil
}

// enumDec reads Enum codes and appends their names (NULL rows hold a
// code that may name nothing, so they are skipped before the lookup).
type enumDec struct {
	b     *array.BinaryBuilder
	names map[int16]string
	wide  bool
	buf   []byte
	size  *int64
}

func (d *enumDec) decode(r *proto.Reader, rows int, nulls []byte) error {
	w := map[bool]int{false: 1, true: 2}[d.wide]
	d.buf = grow(d.buf, rows*w)
	if err := r.ReadFull(d.buf); err != nil {
		return err
	}
	*d.size += int64(len(d.buf))
	for i := 0; i < rows; i++ {
		if nulls != nil && nulls[i] == 1 {
			d.b.AppendNull()
			continue
		}
		code := int16(int8(d.buf[i]))
		if d.wide {
			code = int16(binary.LittleEndian.Uint16(d.buf[2*i:]))
		}
		name, ok := d.names[code]
		if !ok {
			return fmt.Errorf("enum value %d has no name", code)
		}
		d.b.AppendString(name)
	}
	return nil
}

type strDec struct {
	b    *array.BinaryBuilder
	size *int64
}

func (d *strDec) decode(r *proto.Reader, rows int, nulls []byte) error {
	d.b.Reserve(rows)
	for i := 0; i < rows; i++ {
		s, err := r.StrRaw()
		if err != nil {
			return err
		}
		*d.size += int64(len(s)) + 8
		if nulls != nil && nulls[i] == 1 {
			d.b.AppendNull()
			continue
		}
		d.b.Append(s)
	}
	return nil
}

func fixedStringDecoder(t chType, b *array.FixedSizeBinaryBuilder, size *int64) colDecoder {
	n, err := t.intArg(0)
	if t.Name != "FixedString" || err != nil || n != b.Type().(*arrow.FixedSizeBinaryType).ByteWidth {
		return nil
	}
	return &fixedStrDec{b: b, n: n, size: size}
}

type fixedStrDec struct {
	b    *array.FixedSizeBinaryBuilder
	n    int
	buf  []byte
	size *int64
}

func (d *fixedStrDec) decode(r *proto.Reader, rows int, nulls []byte) error {
	d.buf = grow(d.buf, rows*d.n)
	if err := r.ReadFull(d.buf); err != nil {
		return err
	}
	*d.size += int64(len(d.buf))
	for i := 0; i < rows; i++ {
		if nulls != nil && nulls[i] == 1 {
			d.b.AppendNull()
			continue
		}
		d.b.Append(d.buf[i*d.n : (i+1)*d.n])
	}
	return nil
}

func dateDecoder(t chType, b *array.Date32Builder, size *int64) colDecoder {
	switch t.Name {
	case "Date":
		return &convDec[uint16, arrow.Date32]{app: b.AppendValues, conv: func(v uint16) arrow.Date32 { return arrow.Date32(v) }, size: size}
	case "Date32":
		return &convDec[int32, arrow.Date32]{app: b.AppendValues, conv: func(v int32) arrow.Date32 { return arrow.Date32(v) }, size: size}
	}
	return nil
}

// timestampDecoder scales DateTime seconds or DateTime64(p) ticks to the
// builder's unit (chosen to hold p digits, so it only multiplies).
func timestampDecoder(t chType, b *array.TimestampBuilder, size *int64) colDecoder {
	digits := unitDigits(b.Type().(*arrow.TimestampType).Unit)
	switch t.Name {
	case "DateTime":
		m := pow10(digits)
		return &convDec[uint32, arrow.Timestamp]{app: b.AppendValues, conv: func(v uint32) arrow.Timestamp { return arrow.Timestamp(int64(v) * m) }, size: size}
	case "DateTime64":
		p, err := t.intArg(0)
		if err != nil || p > digits {
			return nil
		}
		m := pow10(digits - p)
		return &convDec[int64, arrow.Timestamp]{app: b.AppendValues, conv: func(v int64) arrow.Timestamp { return arrow.Timestamp(v * m) }, size: size}
	}
	return nil
}

// decimalStorage checks t is a Decimal whose precision fits maxP and
// returns its storage width.
func decimalStorage(t chType, maxP int) (int, bool) {
	switch t.Name {
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		p, _ := decimalParams(t)
		return decimalWidth(p), p <= maxP
	}
	return 0, false
}

func decimal128Decoder(t chType, b *array.Decimal128Builder, size *int64) colDecoder {
	w, ok := decimalStorage(t, 38)
	if !ok {
		return nil
	}
	app := b.AppendValues
	switch w {
	case 4:
		return &convDec[int32, decimal128.Num]{app: app, conv: func(v int32) decimal128.Num { return decimal128.FromI64(int64(v)) }, size: size}
	case 8:
		return &convDec[int64, decimal128.Num]{app: app, conv: decimal128.FromI64, size: size}
	}
	return &convDec[[2]uint64, decimal128.Num]{app: app, conv: func(v [2]uint64) decimal128.Num { return decimal128.New(int64(v[1]), v[0]) }, size: size}
}

func decimal256Decoder(t chType, b *array.Decimal256Builder, size *int64) colDecoder {
	w, ok := decimalStorage(t, 76)
	if !ok {
		return nil
	}
	app := b.AppendValues
	switch w {
	case 4:
		return &convDec[int32, decimal256.Num]{app: app, conv: func(v int32) decimal256.Num { return decimal256.FromI64(int64(v)) }, size: size}
	case 8:
		return &convDec[int64, decimal256.Num]{app: app, conv: decimal256.FromI64, size: size}
	case 16:
		return &convDec[[2]uint64, decimal256.Num]{app: app, conv: func(v [2]uint64) decimal256.Num {
			w := signExtend(v[0], int64(v[1]))
			return decimal256.New(w[3], w[2], w[1], w[0])
		}, size: size}
	}
	return &convDec[[4]uint64, decimal256.Num]{app: app, conv: func(v [4]uint64) decimal256.Num { return decimal256.New(v[3], v[2], v[1], v[0]) }, size: size}
}

// uuidFromCH undoes appendUUID: each 8-byte half is little-endian.
func uuidFromCH(v [16]byte) uuid.UUID {
	var u uuid.UUID
	for k := 0; k < 8; k++ {
		u[k], u[8+k] = v[7-k], v[15-k]
	}
	return u
}
