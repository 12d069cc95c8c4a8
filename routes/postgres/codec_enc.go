package postgres

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// The encoders of single values, chosen by (destination type, Arrow type).
// Exact matches get a direct encoder; near matches (any integer into any
// integer column, any timestamp unit, …) convert with a range check.

var (
	errNoEncoding = errors.New("no binary encoding for this pair")
	errIntRange   = errors.New("integer out of range of the column's type")
	errUUIDText   = errors.New("invalid uuid text")
	errCharText   = errors.New(`"char" holds one byte`)
)

// encoderFor returns the encoder of Arrow type t into a column of spec.
func encoderFor(spec pgTypeSpec, t arrow.DataType) (encodeFunc, error) {
	if spec.array {
		return listEncoder(spec, t)
	}
	if enc := kindEncoder(spec.kind, t); enc != nil {
		return enc, nil
	}
	if ext, ok := t.(arrow.ExtensionType); ok {
		inner, err := encoderFor(spec, ext.StorageType())
		if err != nil {
			return nil, err
		}
		return func(e *encoder, a arrow.Array, i int) error {
			return inner(e, a.(array.ExtensionArray).Storage(), i)
		}, nil
	}
	if isTextKind(spec.kind) {
		return encValueStr, nil // the text form of anything else
	}
	return nil, errNoEncoding
}

func isTextKind(k pgKind) bool {
	switch k {
	case kindText, kindVarchar, kindBpchar, kindName, kindJSON:
		return true
	}
	return false
}

func kindEncoder(k pgKind, t arrow.DataType) encodeFunc {
	switch k {
	case kindBool:
		return encBool(t)
	case kindInt2:
		return encInt(t, 2, math.MinInt16, math.MaxInt16)
	case kindInt4:
		return encInt(t, 4, math.MinInt32, math.MaxInt32)
	case kindInt8:
		return encInt(t, 8, math.MinInt64, math.MaxInt64)
	case kindOID:
		return encInt(t, 4, 0, math.MaxUint32)
	case kindFloat4:
		return encFloat4(t)
	case kindFloat8:
		return encFloat8(t)
	case kindNumeric:
		return encNumeric(t)
	case kindJSONB:
		return encJSONB(t)
	case kindChar:
		return encChar(t)
	}
	return kindEncoderMore(k, t)
}

func kindEncoderMore(k pgKind, t arrow.DataType) encodeFunc {
	switch k {
	case kindText, kindVarchar, kindBpchar, kindName, kindJSON, kindUnknown:
		// A type the codec does not know takes its text form if its
		// binary input does (enums do).
		return encText(t)
	case kindBytea:
		return encBytea(t)
	case kindDate:
		return encDate(t)
	case kindTime:
		return encTime(t)
	case kindTimestamp, kindTimestamptz:
		return encTimestamp(t)
	case kindInterval:
		return encInterval(t)
	case kindUUID:
		return encUUID(t)
	}
	return nil
}

func encBool(t arrow.DataType) encodeFunc {
	if t.ID() != arrow.BOOL {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) error {
		v := byte(0)
		if a.(*array.Boolean).Value(i) {
			v = 1
		}
		e.buf = append(e.buf, v)
		return nil
	}
}

// intGetter reads an integer as int64; false when a uint64 exceeds it.
type intGetter func(a arrow.Array, i int) (int64, bool)

var intGetters = map[arrow.Type]intGetter{
	arrow.INT8:   func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Int8).Value(i)), true },
	arrow.INT16:  func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Int16).Value(i)), true },
	arrow.INT32:  func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Int32).Value(i)), true },
	arrow.INT64:  func(a arrow.Array, i int) (int64, bool) { return a.(*array.Int64).Value(i), true },
	arrow.UINT8:  func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Uint8).Value(i)), true },
	arrow.UINT16: func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Uint16).Value(i)), true },
	arrow.UINT32: func(a arrow.Array, i int) (int64, bool) { return int64(a.(*array.Uint32).Value(i)), true },
	arrow.UINT64: func(a arrow.Array, i int) (int64, bool) {
		v := a.(*array.Uint64).Value(i)
		return int64(v), v <= math.MaxInt64
	},
}

func encInt(t arrow.DataType, size int, lo, hi int64) encodeFunc {
	if enc := encIntExact(t, size); enc != nil {
		return enc
	}
	get := intGetters[t.ID()]
	if get == nil {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) error {
		v, ok := get(a, i)
		if !ok || v < lo || v > hi {
			return errIntRange
		}
		e.buf = appendIntN(e.buf, v, size)
		return nil
	}
}

func appendIntN(b []byte, v int64, size int) []byte {
	switch size {
	case 2:
		return be.AppendUint16(b, uint16(v))
	case 4:
		return be.AppendUint32(b, uint32(v))
	}
	return be.AppendUint64(b, uint64(v))
}

// encIntExact: the Arrow type is the column's own, so no range check.
func encIntExact(t arrow.DataType, size int) encodeFunc {
	switch {
	case t.ID() == arrow.INT16 && size == 2:
		return func(e *encoder, a arrow.Array, i int) error {
			e.buf = be.AppendUint16(e.buf, uint16(a.(*array.Int16).Value(i)))
			return nil
		}
	case t.ID() == arrow.INT32 && size == 4:
		return func(e *encoder, a arrow.Array, i int) error {
			e.buf = be.AppendUint32(e.buf, uint32(a.(*array.Int32).Value(i)))
			return nil
		}
	case t.ID() == arrow.INT64 && size == 8:
		return func(e *encoder, a arrow.Array, i int) error {
			e.buf = be.AppendUint64(e.buf, uint64(a.(*array.Int64).Value(i)))
			return nil
		}
	}
	return nil
}

// floatGetter reads a floating-point value as float64.
var floatGetters = map[arrow.Type]func(a arrow.Array, i int) float64{
	arrow.FLOAT16: func(a arrow.Array, i int) float64 { return float64(a.(*array.Float16).Value(i).Float32()) },
	arrow.FLOAT32: func(a arrow.Array, i int) float64 { return float64(a.(*array.Float32).Value(i)) },
	arrow.FLOAT64: func(a arrow.Array, i int) float64 { return a.(*array.Float64).Value(i) },
}

func encFloat4(t arrow.DataType) encodeFunc {
	if t.ID() == arrow.FLOAT32 {
		return func(e *encoder, a arrow.Array, i int) error {
			e.buf = be.AppendUint32(e.buf, math.Float32bits(a.(*array.Float32).Value(i)))
			return nil
		}
	}
	get := floatGetters[t.ID()]
	if get == nil {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) error {
		e.buf = be.AppendUint32(e.buf, math.Float32bits(float32(get(a, i))))
		return nil
	}
}

func encFloat8(t arrow.DataType) encodeFunc {
	get := floatGetters[t.ID()]
	if get == nil {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) error {
		e.buf = be.AppendUint64(e.buf, math.Float64bits(get(a, i)))
		return nil
	}
}

// stringGetter reads a string-typed value without copying it.
var stringGetters = map[arrow.Type]func(a arrow.Array, i int) string{
	arrow.STRING:       func(a arrow.Array, i int) string { return a.(*array.String).Value(i) },
	arrow.LARGE_STRING: func(a arrow.Array, i int) string { return a.(*array.LargeString).Value(i) },
	arrow.STRING_VIEW:  func(a arrow.Array, i int) string { return a.(*array.StringView).Value(i) },
}

// bytesGetter reads a binary-typed value without copying it.
var bytesGetters = map[arrow.Type]func(a arrow.Array, i int) []byte{
	arrow.BINARY:            func(a arrow.Array, i int) []byte { return a.(*array.Binary).Value(i) },
	arrow.LARGE_BINARY:      func(a arrow.Array, i int) []byte { return a.(*array.LargeBinary).Value(i) },
	arrow.BINARY_VIEW:       func(a arrow.Array, i int) []byte { return a.(*array.BinaryView).Value(i) },
	arrow.FIXED_SIZE_BINARY: func(a arrow.Array, i int) []byte { return a.(*array.FixedSizeBinary).Value(i) },
}

// encText writes text bytes; strings and binaries are taken as they are,
// once checked here: PostgreSQL text holds UTF-8 without NUL bytes (a
// ClickHouse String holds any bytes), and the server's own refusal would
// fail the run without naming the column.
func encText(t arrow.DataType) encodeFunc {
	if t.ID() == arrow.STRING {
		return func(e *encoder, a arrow.Array, i int) error {
			v := a.(*array.String).Value(i)
			if err := checkText(v); err != nil {
				return err
			}
			e.buf = append(e.buf, v...)
			return nil
		}
	}
	if get := stringGetters[t.ID()]; get != nil {
		return func(e *encoder, a arrow.Array, i int) error {
			v := get(a, i)
			if err := checkText(v); err != nil {
				return err
			}
			e.buf = append(e.buf, v...)
			return nil
		}
	}
	if get := bytesGetters[t.ID()]; get != nil && t.ID() != arrow.FIXED_SIZE_BINARY {
		return func(e *encoder, a arrow.Array, i int) error {
			v := get(a, i)
			if err := checkBytes(v); err != nil {
				return err
			}
			e.buf = append(e.buf, v...)
			return nil
		}
	}
	return nil
}

var (
	errTextUTF8 = errors.New("text is not valid UTF-8, which a PostgreSQL text column needs: write it into bytea, or clean it at the source")
	errTextNUL  = errors.New("text holds a NUL byte (0x00), which PostgreSQL text cannot hold: write it into bytea, or clean it at the source")
)

func checkText(v string) error {
	switch {
	case !utf8.ValidString(v):
		return errTextUTF8
	case strings.IndexByte(v, 0) >= 0:
		return errTextNUL
	}
	return nil
}

func checkBytes(v []byte) error {
	switch {
	case !utf8.Valid(v):
		return errTextUTF8
	case bytes.IndexByte(v, 0) >= 0:
		return errTextNUL
	}
	return nil
}

// encValueStr writes Arrow's text form of a value with no closer Postgres
// type (structs, maps, nested lists, dictionaries). It allocates, but only
// on this fallback path.
func encValueStr(e *encoder, a arrow.Array, i int) error {
	e.buf = append(e.buf, a.ValueStr(i)...)
	return nil
}

// encJSONB: jsonb's binary form is a version byte, 1, and the JSON text.
func encJSONB(t arrow.DataType) encodeFunc {
	text := encText(t)
	if text == nil {
		if _, ok := t.(arrow.ExtensionType); ok {
			return nil // let encoderFor unwrap the storage
		}
		text = encValueStr
	}
	return func(e *encoder, a arrow.Array, i int) error {
		e.buf = append(e.buf, 1)
		return text(e, a, i)
	}
}

// encChar writes "char" from the text the decoder produces: "" is '\0',
// one byte is itself, and \ooo is an octal byte.
func encChar(t arrow.DataType) encodeFunc {
	get := stringGetters[t.ID()]
	if get == nil {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) error {
		switch s := get(a, i); {
		case len(s) == 0:
			e.buf = append(e.buf, 0)
		case len(s) == 1:
			e.buf = append(e.buf, s[0])
		case len(s) == 4 && s[0] == '\\' && isOctal(s[1:]):
			e.buf = append(e.buf, (s[1]-'0')<<6|(s[2]-'0')<<3|(s[3]-'0'))
		default:
			return errCharText
		}
		return nil
	}
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s[0] <= '3'
}

func encBytea(t arrow.DataType) encodeFunc {
	if get := bytesGetters[t.ID()]; get != nil {
		return func(e *encoder, a arrow.Array, i int) error {
			e.buf = append(e.buf, get(a, i)...)
			return nil
		}
	}
	return encText(t)
}

func encUUID(t arrow.DataType) encodeFunc {
	switch t := t.(type) {
	case *extensions.UUIDType:
		return func(e *encoder, a arrow.Array, i int) error {
			s := a.(array.ExtensionArray).Storage().(*array.FixedSizeBinary)
			e.buf = append(e.buf, s.Value(i)...)
			return nil
		}
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth == 16 {
			return encBytea(t)
		}
	}
	if get := stringGetters[t.ID()]; get != nil {
		return func(e *encoder, a arrow.Array, i int) (err error) {
			e.buf, err = appendUUIDText(e.buf, get(a, i))
			return err
		}
	}
	return nil
}

// appendUUIDText appends the 16 bytes of a uuid written as 32 hex digits,
// with or without dashes and braces.
func appendUUIDText(dst []byte, s string) ([]byte, error) {
	if len(s) > 1 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	var out [16]byte
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			continue
		}
		h, ok := hexVal(s[i])
		if !ok || n >= 32 {
			return dst, errUUIDText
		}
		out[n/2] |= h << (4 * (1 - n%2))
		n++
	}
	if n != 32 {
		return dst, errUUIDText
	}
	return append(dst, out[:]...), nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
