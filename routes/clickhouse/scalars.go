package clickhouse

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
)

// chNumeric maps ClickHouse number types to the Arrow type with the same
// layout.
var chNumeric = map[string]arrow.Type{
	"Int8": arrow.INT8, "Int16": arrow.INT16, "Int32": arrow.INT32, "Int64": arrow.INT64,
	"UInt8": arrow.UINT8, "UInt16": arrow.UINT16, "UInt32": arrow.UINT32, "UInt64": arrow.UINT64,
	"Float32": arrow.FLOAT32, "Float64": arrow.FLOAT64,
}

// scalarEncoder returns the encoder of a non-wrapper ClickHouse type, or
// nil when Arrow type a cannot be written as it.
func scalarEncoder(a arrow.DataType, t chType, o Options) encoder {
	if ext, ok := a.(arrow.ExtensionType); ok {
		return extensionEncoder(ext, t, o)
	}
	if id, ok := chNumeric[t.Name]; ok {
		return numericEncoder(a, t, id)
	}
	switch t.Name {
	case "Bool":
		if a.ID() == arrow.BOOL {
			return scalarEnc{t.raw, bindBool}
		}
	case "String":
		return stringEncoder(a)
	case "FixedString":
		return fixedStringEncoder(a, t)
	case "Date", "Date32":
		return dateEncoder(a, t, o)
	case "DateTime", "DateTime64":
		return dateTimeEncoder(a, t, o)
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		return decimalEncoder(a, t)
	case "UUID":
		if fw, ok := a.(*arrow.FixedSizeBinaryType); ok && fw.ByteWidth == 16 {
			return scalarEnc{"UUID", bindUUID}
		}
	}
	return nil
}

func extensionEncoder(ext arrow.ExtensionType, t chType, o Options) encoder {
	if ext.ExtensionName() == "arrow.uuid" && t.Name == "String" {
		return storageEnc{scalarEnc{"String", bindUUIDText}}
	}
	if inner := scalarEncoder(ext.StorageType(), t, o); inner != nil {
		return storageEnc{inner}
	}
	return nil
}

func numericEncoder(a arrow.DataType, t chType, id arrow.Type) encoder {
	width := intWidth(t.Name)
	switch {
	case a.ID() == id:
		return memEnc{t.raw, a.(arrow.FixedWidthDataType).BitWidth() / 8}
	case a.ID() == arrow.DURATION && t.Name == "Int64":
		return memEnc{t.raw, 8} // int64 ticks of the duration's unit, as stored
	case a.ID() == arrow.BOOL && width == 1:
		return scalarEnc{t.raw, bindBool}
	case a.ID() == arrow.FLOAT16 && t.Name == "Float32":
		return scalarEnc{t.raw, bindFloat16}
	case arrow.IsInteger(a.ID()) && width > 0:
		signed := t.Name[0] == 'I'
		return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return bindIntConv(arr, width, signed) }}
	}
	return nil
}

// intWidth is the byte width of a ClickHouse integer type, 0 for floats.
func intWidth(name string) int {
	return map[string]int{"Int8": 1, "UInt8": 1, "Int16": 2, "UInt16": 2,
		"Int32": 4, "UInt32": 4, "Int64": 8, "UInt64": 8}[name]
}

func bindBool(arr arrow.Array) valueFunc {
	a := arr.(*array.Boolean)
	return func(b []byte, i int) ([]byte, error) {
		return append(b, boolByte(a.IsValid(i) && a.Value(i))), nil
	}
}

func bindFloat16(arr arrow.Array) valueFunc {
	a := arr.(*array.Float16)
	return func(b []byte, i int) ([]byte, error) {
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(a.Value(i).Float32())), nil
	}
}

// bindIntConv writes any Arrow integer into a ClickHouse integer of
// another width or signedness, refusing values that do not fit.
func bindIntConv(arr arrow.Array, width int, signed bool) valueFunc {
	get := intGetter(arr)
	bits := uint(width * 8)
	return func(b []byte, i int) ([]byte, error) {
		var v int64
		var neg bool
		var u uint64
		if arr.IsValid(i) {
			v, neg = get(i)
			u = uint64(v)
		}
		ok := signed && fitsSigned(v, neg, u, bits) || !signed && !neg && (bits == 64 || u < 1<<bits)
		if !ok {
			return b, fmt.Errorf("integer %s does not fit %d bits", intText(v, neg, u), bits)
		}
		for k := 0; k < width; k++ {
			b = append(b, byte(u>>(8*k)))
		}
		return b, nil
	}
}

func fitsSigned(v int64, neg bool, u uint64, bits uint) bool {
	if neg {
		return bits == 64 || v >= -(1<<(bits-1))
	}
	return u < 1<<(bits-1)
}

func intText(v int64, neg bool, u uint64) string {
	if neg {
		return fmt.Sprint(v)
	}
	return fmt.Sprint(u)
}

// intGetter reads row i of an integer array as its bits and whether it is
// negative (int64(bits) is the value when negative, uint64 otherwise).
func intGetter(arr arrow.Array) func(int) (int64, bool) {
	s := func(v int64) (int64, bool) { return v, v < 0 }
	u := func(v uint64) (int64, bool) { return int64(v), false }
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) (int64, bool) { return s(int64(a.Value(i))) }
	case *array.Int16:
		return func(i int) (int64, bool) { return s(int64(a.Value(i))) }
	case *array.Int32:
		return func(i int) (int64, bool) { return s(int64(a.Value(i))) }
	case *array.Int64:
		return func(i int) (int64, bool) { return s(a.Value(i)) }
	case *array.Uint8:
		return func(i int) (int64, bool) { return u(uint64(a.Value(i))) }
	case *array.Uint16:
		return func(i int) (int64, bool) { return u(uint64(a.Value(i))) }
	case *array.Uint32:
		return func(i int) (int64, bool) { return u(uint64(a.Value(i))) }
	case *array.Uint64:
		return func(i int) (int64, bool) { return u(a.Value(i)) }
	}
	return func(int) (int64, bool) { return 0, false }
}

func stringEncoder(a arrow.DataType) encoder {
	switch a.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return scalarEnc{"String", bindBytes}
	}
	return scalarEnc{"String", bindText}
}

// strAt reads row i of a string or binary array without copying.
func strAt(arr arrow.Array) func(int) string {
	switch a := arr.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.StringView:
		return a.Value
	case *array.Binary:
		return a.ValueString
	case *array.LargeBinary:
		return a.ValueString
	case *array.BinaryView:
		return a.ValueString
	}
	return arr.ValueStr
}

func bindBytes(arr arrow.Array) valueFunc {
	return bindString(arr, strAt(arr))
}

// bindText writes the text form of types ClickHouse cannot hold natively.
func bindText(arr arrow.Array) valueFunc {
	return bindString(arr, textAt(arr))
}

func bindString(arr arrow.Array, at func(int) string) valueFunc {
	return func(b []byte, i int) ([]byte, error) {
		if arr.IsNull(i) {
			return append(b, 0), nil
		}
		s := at(i)
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...), nil
	}
}

// textAt renders values as text: decimals exact, times as
// 15:04:05.999999, intervals in ISO 8601, the rest as arrow-go prints them
// (nested types as JSON).
func textAt(arr arrow.Array) func(int) string {
	switch a := arr.(type) {
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		return func(i int) string { return clockText(int64(a.Value(i)), unit) }
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		return func(i int) string { return clockText(int64(a.Value(i)), unit) }
	case *array.Decimal128:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(i int) string { return a.Value(i).ToString(scale) }
	case *array.Decimal256:
		scale := a.DataType().(arrow.DecimalType).GetScale()
		return func(i int) string { return a.Value(i).ToString(scale) }
	case *array.MonthDayNanoInterval:
		return func(i int) string { return isoInterval(a.Value(i)) }
	case *array.Null:
		return func(int) string { return "" }
	}
	return arr.ValueStr
}

// clockText renders a time of day as HH:MM:SS[.fraction] without wrapping
// at midnight: MySQL's TIME '24:00:00' (and ±838h) stays what it was.
func clockText(v int64, unit arrow.TimeUnit) string {
	perSecond := int64(time.Second / unit.Multiplier())
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	secs, frac := v/perSecond, v%perSecond
	out := fmt.Sprintf("%s%02d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
	if frac != 0 {
		digits := len(strconv.FormatInt(perSecond, 10)) - 1
		out += "." + strings.TrimRight(fmt.Sprintf("%0*d", digits, frac), "0")
	}
	return out
}

func fixedStringEncoder(a arrow.DataType, t chType) encoder {
	n, err := t.intArg(0)
	if err != nil {
		return nil
	}
	if fw, ok := a.(*arrow.FixedSizeBinaryType); ok && fw.ByteWidth == n {
		return memEnc{t.raw, n}
	}
	if _, ok := a.(arrow.BinaryDataType); !ok {
		return nil
	}
	return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return bindFixedPad(arr, n) }}
}

// bindFixedPad pads text with zero bytes to FixedString(n).
func bindFixedPad(arr arrow.Array, n int) valueFunc {
	at := strAt(arr)
	return func(b []byte, i int) ([]byte, error) {
		s := ""
		if arr.IsValid(i) {
			s = at(i)
		}
		if len(s) > n {
			return b, fmt.Errorf("value of %d bytes does not fit FixedString(%d)", len(s), n)
		}
		b = append(b, s...)
		return append(b, make([]byte, n-len(s))...), nil
	}
}

func bindUUID(arr arrow.Array) valueFunc {
	a := arr.(*array.FixedSizeBinary)
	return func(b []byte, i int) ([]byte, error) {
		if a.IsNull(i) {
			return append(b, make([]byte, 16)...), nil
		}
		return appendUUID(b, a.Value(i)), nil
	}
}

// appendUUID writes a UUID as ClickHouse stores it: two little-endian
// UInt64 halves, the high one first.
func appendUUID(b, u []byte) []byte {
	for _, half := range [2][]byte{u[:8], u[8:16]} {
		for k := 7; k >= 0; k-- {
			b = append(b, half[k])
		}
	}
	return b
}

func bindUUIDText(arr arrow.Array) valueFunc {
	a := arr.(*array.FixedSizeBinary)
	return bindString(arr, func(i int) string { return uuid.UUID(a.Value(i)).String() })
}
