package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/jackc/pgx/v5"
)

// The decoders of single values, one per Arrow type arrowType produces.
// Each checks the value's length, then appends straight from the wire
// bytes; none allocates.

var (
	be             = binary.BigEndian
	errJSONBFormat = errors.New("unsupported jsonb binary version (want 1)")
)

func errLength(want, got int) error {
	return fmt.Errorf("binary value of %d bytes, want %d", got, want)
}

// newPut returns the decoder of one column (or array element) of Arrow
// type t, sent by PostgreSQL as spec, into bld.
func newPut(name string, t arrow.DataType, spec pgTypeSpec, bld array.Builder) (putFunc, error) {
	if t == nil {
		return nil, errors.New("no Arrow type")
	}
	if put := newFixedPut(t, bld); put != nil {
		return put, nil
	}
	switch t.ID() {
	case arrow.STRING:
		return newStringPut(spec, bld.(*array.StringBuilder)), nil
	case arrow.BINARY:
		b := bld.(*array.BinaryBuilder)
		return func(v []byte) error { b.Append(v); return nil }, nil
	case arrow.DECIMAL128:
		return putDecimal128(t.(*arrow.Decimal128Type), bld.(*array.Decimal128Builder)), nil
	case arrow.DECIMAL256:
		return putDecimal256(t.(*arrow.Decimal256Type), bld.(*array.Decimal256Builder)), nil
	case arrow.EXTENSION:
		return newExtensionPut(t.(arrow.ExtensionType), bld)
	case arrow.LIST:
		return newArrayPut(name, t.(*arrow.ListType), spec, bld.(*array.ListBuilder))
	}
	return nil, fmt.Errorf("cannot decode %s into Arrow %s", typeLabel(spec), t)
}

func typeLabel(spec pgTypeSpec) string {
	if spec.kind == kindUnknown {
		return "this PostgreSQL type"
	}
	return fmt.Sprintf("PostgreSQL type oid %d", kindOIDs[spec.kind])
}

// newFixedPut covers the fixed-width types; nil for the others.
func newFixedPut(t arrow.DataType, bld array.Builder) putFunc {
	switch t.ID() {
	case arrow.BOOL:
		return putBool(bld.(*array.BooleanBuilder))
	case arrow.INT16:
		return putInt16(bld.(*array.Int16Builder))
	case arrow.INT32:
		return putInt32(bld.(*array.Int32Builder))
	case arrow.INT64:
		return putInt64(bld.(*array.Int64Builder))
	case arrow.UINT32:
		return putUint32(bld.(*array.Uint32Builder))
	case arrow.FLOAT32:
		return putFloat32(bld.(*array.Float32Builder))
	case arrow.FLOAT64:
		return putFloat64(bld.(*array.Float64Builder))
	case arrow.DATE32:
		return putDate32(bld.(*array.Date32Builder))
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return putInterval(bld.(*array.MonthDayNanoIntervalBuilder))
	}
	return newTimePut(t, bld)
}

func newTimePut(t arrow.DataType, bld array.Builder) putFunc {
	switch t := t.(type) {
	case *arrow.Time64Type:
		if t.Unit == arrow.Microsecond {
			return putTime64(bld.(*array.Time64Builder))
		}
	case *arrow.TimestampType:
		if t.Unit == arrow.Microsecond {
			return putTimestamp(bld.(*array.TimestampBuilder))
		}
	}
	return nil
}

func putBool(b *array.BooleanBuilder) putFunc {
	return func(v []byte) error {
		if len(v) != 1 {
			return errLength(1, len(v))
		}
		b.Append(v[0] != 0)
		return nil
	}
}

func putInt16(b *array.Int16Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 2 {
			return errLength(2, len(v))
		}
		b.Append(int16(be.Uint16(v)))
		return nil
	}
}

func putInt32(b *array.Int32Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 4 {
			return errLength(4, len(v))
		}
		b.Append(int32(be.Uint32(v)))
		return nil
	}
}

func putInt64(b *array.Int64Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 8 {
			return errLength(8, len(v))
		}
		b.Append(int64(be.Uint64(v)))
		return nil
	}
}

func putUint32(b *array.Uint32Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 4 {
			return errLength(4, len(v))
		}
		b.Append(be.Uint32(v))
		return nil
	}
}

func putFloat32(b *array.Float32Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 4 {
			return errLength(4, len(v))
		}
		b.Append(math.Float32frombits(be.Uint32(v)))
		return nil
	}
}

func putFloat64(b *array.Float64Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 8 {
			return errLength(8, len(v))
		}
		b.Append(math.Float64frombits(be.Uint64(v)))
		return nil
	}
}

func putDate32(b *array.Date32Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 4 {
			return errLength(4, len(v))
		}
		d, ok := dateFromPG(int32(be.Uint32(v)))
		if !ok {
			return errTimeRange
		}
		b.Append(arrow.Date32(d))
		return nil
	}
}

func putTime64(b *array.Time64Builder) putFunc {
	return func(v []byte) error {
		if len(v) != 8 {
			return errLength(8, len(v))
		}
		b.Append(arrow.Time64(be.Uint64(v)))
		return nil
	}
}

func putTimestamp(b *array.TimestampBuilder) putFunc {
	return func(v []byte) error {
		if len(v) != 8 {
			return errLength(8, len(v))
		}
		us, ok := timestampFromPG(int64(be.Uint64(v)))
		if !ok {
			return errTimeRange
		}
		b.Append(arrow.Timestamp(us))
		return nil
	}
}

// putInterval: the wire holds int64 µs, int32 days, int32 months.
// PostgreSQL 17's infinite intervals keep their sentinels.
func putInterval(b *array.MonthDayNanoIntervalBuilder) putFunc {
	return func(v []byte) error {
		if len(v) != 16 {
			return errLength(16, len(v))
		}
		us, ns := int64(be.Uint64(v)), int64(0)
		switch {
		case isInfinity64(us):
			ns = us
		case us > math.MaxInt64/1000 || us < math.MinInt64/1000:
			return errInterval
		default:
			ns = us * 1000
		}
		b.Append(arrow.MonthDayNanoInterval{Months: int32(be.Uint32(v[12:])), Days: int32(be.Uint32(v[8:])), Nanoseconds: ns})
		return nil
	}
}

func putDecimal128(t *arrow.Decimal128Type, b *array.Decimal128Builder) putFunc {
	scale := int(t.Scale)
	return func(v []byte) error {
		n, err := numericToDecimal128(v, scale)
		if err != nil {
			return err
		}
		b.Append(n)
		return nil
	}
}

func putDecimal256(t *arrow.Decimal256Type, b *array.Decimal256Builder) putFunc {
	scale := int(t.Scale)
	return func(v []byte) error {
		n, err := numericToDecimal256(v, scale)
		if err != nil {
			return err
		}
		b.Append(n)
		return nil
	}
}

// newStringPut: text-like types arrive as their bytes; numeric, jsonb and
// "char" need translating. Strings are appended as bytes, so the builder
// copies them from the wire buffer and nothing points into it.
func newStringPut(spec pgTypeSpec, b *array.StringBuilder) putFunc {
	switch spec.kind {
	case kindNumeric:
		var text []byte // reused: one buffer per column, not per value
		return func(v []byte) (err error) {
			if text, err = appendNumericText(text[:0], v); err == nil {
				b.BinaryBuilder.Append(text)
			}
			return err
		}
	case kindJSONB:
		return func(v []byte) error {
			if len(v) == 0 || v[0] != 1 {
				return errJSONBFormat
			}
			b.BinaryBuilder.Append(v[1:])
			return nil
		}
	case kindChar:
		return putChar(b)
	}
	return func(v []byte) error { b.BinaryBuilder.Append(v); return nil }
}

// putChar decodes "char" (one raw byte) to its text form as charout prints
// it since PostgreSQL 14: '\0' is empty and bytes ≥ 0x80 are \ooo octal.
func putChar(b *array.StringBuilder) putFunc {
	var buf [4]byte
	return func(v []byte) error {
		if len(v) != 1 {
			return errLength(1, len(v))
		}
		switch c := v[0]; {
		case c == 0:
			b.BinaryBuilder.Append(buf[:0])
		case c < 0x80:
			b.BinaryBuilder.Append(v)
		default:
			buf = [4]byte{'\\', '0' + c>>6, '0' + c>>3&7, '0' + c&7}
			b.BinaryBuilder.Append(buf[:])
		}
		return nil
	}
}

func newExtensionPut(t arrow.ExtensionType, bld array.Builder) (putFunc, error) {
	if _, ok := t.(*extensions.UUIDType); !ok {
		return nil, fmt.Errorf("cannot decode into Arrow extension %s", t.ExtensionName())
	}
	var fb *array.FixedSizeBinaryBuilder
	switch b := bld.(type) {
	case *extensions.UUIDBuilder:
		fb, _ = b.Builder.(*array.FixedSizeBinaryBuilder)
	case *array.ExtensionBuilder:
		fb, _ = b.Builder.(*array.FixedSizeBinaryBuilder)
	}
	if fb == nil {
		return nil, errors.New("uuid builder without fixed-size storage")
	}
	return func(v []byte) error {
		if len(v) != 16 {
			return errLength(16, len(v))
		}
		fb.Append(v)
		return nil
	}, nil
}

// newArrayPut decodes the binary array format (int32 ndim, int32 has-null
// flag, int32 element oid, per dimension int32 length and lower bound,
// then length-prefixed elements) into a list. Only one-dimensional arrays
// with lower bound 1 are lists: anything else would change on the way
// back, so it is an error that says how to read the column instead.
func newArrayPut(name string, t *arrow.ListType, spec pgTypeSpec, lb *array.ListBuilder) (putFunc, error) {
	vb := lb.ValueBuilder()
	elem, err := newPut(name, t.Elem(), spec.elem(), vb)
	if err != nil {
		return nil, err
	}
	null := vb.AppendNull
	return func(v []byte) error {
		if len(v) < 12 {
			return errArrayShort
		}
		switch ndim := int32(be.Uint32(v)); {
		case ndim == 0:
			lb.Append(true) // an empty array
			return nil
		case ndim != 1 || len(v) < 20 || be.Uint32(v[16:]) != 1:
			return arrayShapeError(name, ndim)
		}
		lb.Append(true)
		return putElements(v[20:], int(int32(be.Uint32(v[12:]))), elem, null)
	}, nil
}

var errArrayShort = errors.New("malformed binary array")

func arrayShapeError(name string, ndim int32) error {
	what := fmt.Sprintf("a %d-dimensional array", ndim)
	if ndim == 1 {
		what = "an array with a lower bound other than 1"
	}
	return fmt.Errorf("%s cannot be read as an Arrow list without changing it; cast the column to text in the query (%s::text)", what, pgx.Identifier{name}.Sanitize())
}

func putElements(v []byte, n int, elem putFunc, null func()) error {
	off := 0
	for range n {
		if len(v) < off+4 {
			return errArrayShort
		}
		l := int(int32(be.Uint32(v[off:])))
		off += 4
		if l < 0 {
			null()
			continue
		}
		if len(v) < off+l {
			return errArrayShort
		}
		if err := elem(v[off : off+l]); err != nil {
			return err
		}
		off += l
	}
	return nil
}
