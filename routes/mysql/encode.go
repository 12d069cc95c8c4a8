package mysql

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/weirhq/weir/routes"
)

// The LOAD DATA text format the encoder writes and loadSQL declares:
// fields end at a tab, rows at a newline, \N is NULL, and a backslash
// escapes the bytes that would otherwise end a field or a row. The file is
// CHARACTER SET binary: bytes land in the column untouched (text is UTF-8
// already, blobs are binary-safe).
const (
	fieldSep = '\t'
	rowSep   = '\n'
	// flushBytes is how much encoded text is buffered before a write to
	// the LOAD DATA reader (the driver sends packets of up to 16 KiB).
	flushBytes = 64 << 10
)

// valueFunc appends the text of row i of one column (never NULL) to buf.
type valueFunc func(buf []byte, i int) ([]byte, error)

// encoder turns Arrow record batches into LOAD DATA text.
type encoder struct {
	w    io.Writer
	buf  []byte
	rows int64
}

func newEncoder(w io.Writer) *encoder {
	return &encoder{w: w, buf: make([]byte, 0, flushBytes+4096)}
}

// Encode appends one batch's rows, writing out every flushBytes.
func (e *encoder) Encode(b arrow.RecordBatch) error {
	cols := b.Columns()
	fns := make([]valueFunc, len(cols))
	for c, col := range cols {
		fn, err := valueEncoder(col)
		if err != nil {
			return fmt.Errorf("column %s: %w", b.Schema().Field(c).Name, err)
		}
		fns[c] = fn
	}
	for i := 0; i < int(b.NumRows()); i++ {
		if err := e.encodeRow(b.Schema(), cols, fns, i); err != nil {
			return fmt.Errorf("row %d: %w", e.rows+1, err)
		}
		e.rows++
		if len(e.buf) >= flushBytes {
			if err := e.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *encoder) encodeRow(s *arrow.Schema, cols []arrow.Array, fns []valueFunc, i int) error {
	var err error
	for c, col := range cols {
		if c > 0 {
			e.buf = append(e.buf, fieldSep)
		}
		if col.IsNull(i) {
			e.buf = append(e.buf, '\\', 'N')
			continue
		}
		if e.buf, err = fns[c](e.buf, i); err != nil {
			return &routes.ValueError{Column: s.Field(c).Name, Err: err}
		}
	}
	e.buf = append(e.buf, rowSep)
	return nil
}

func (e *encoder) flush() error {
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// Close writes what is buffered.
func (e *encoder) Close() error { return e.flush() }

// escape appends s with the LOAD DATA escapes.
func escape[T string | []byte](buf []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc byte
		switch s[i] {
		case '\\':
			esc = '\\'
		case '\t':
			esc = 't'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case 0:
			esc = '0'
		default:
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = append(buf, '\\', esc)
		start = i + 1
	}
	return append(buf, s[start:]...)
}

// valueEncoder picks the text form of one column.
func valueEncoder(arr arrow.Array) (valueFunc, error) {
	if fn := intEncoder(arr); fn != nil {
		return fn, nil
	}
	if fn := bytesEncoder(arr); fn != nil {
		return fn, nil
	}
	if fn, err := temporalEncoder(arr); fn != nil || err != nil {
		return fn, err
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return func(buf []byte, i int) ([]byte, error) { return append(buf, "01"[boolIndex(a.Value(i))]), nil }, nil
	case *array.Float16:
		return func(buf []byte, i int) ([]byte, error) { return appendFloat(buf, float64(a.Value(i).Float32()), 64) }, nil
	case *array.Float32:
		// The exact value, not float32's shortest text: MySQL parses a
		// double and narrows it, and the shortest text of the largest
		// float32 (3.4028235e38) parses above FLOAT's range.
		return func(buf []byte, i int) ([]byte, error) { return appendFloat(buf, float64(a.Value(i)), 64) }, nil
	case *array.Float64:
		return func(buf []byte, i int) ([]byte, error) { return appendFloat(buf, a.Value(i), 64) }, nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return func(buf []byte, i int) ([]byte, error) { return appendDecimal128(buf, a.Value(i), scale), nil }, nil
	case *array.Decimal256:
		scale := a.DataType().(*arrow.Decimal256Type).Scale
		return func(buf []byte, i int) ([]byte, error) { return appendDecimal256(buf, a.Value(i), scale), nil }, nil
	case array.ExtensionArray:
		return extensionEncoder(a)
	}
	return jsonEncoder(arr), nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func intEncoder(arr arrow.Array) valueFunc {
	switch a := arr.(type) {
	case *array.Int8:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil }
	case *array.Int16:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil }
	case *array.Int32:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, int64(a.Value(i)), 10), nil }
	case *array.Int64:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendInt(buf, a.Value(i), 10), nil }
	case *array.Uint8:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil }
	case *array.Uint16:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil }
	case *array.Uint32:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendUint(buf, uint64(a.Value(i)), 10), nil }
	case *array.Uint64:
		return func(buf []byte, i int) ([]byte, error) { return strconv.AppendUint(buf, a.Value(i), 10), nil }
	}
	return nil
}

func bytesEncoder(arr arrow.Array) valueFunc {
	switch a := arr.(type) {
	case *array.String:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.LargeString:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.StringView:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.Binary:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.LargeBinary:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.BinaryView:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	case *array.FixedSizeBinary:
		return func(buf []byte, i int) ([]byte, error) { return escape(buf, a.Value(i)), nil }
	}
	return nil
}

var errNonFinite = errors.New("MySQL has no NaN or infinity")

func appendFloat(buf []byte, f float64, bitSize int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return buf, errNonFinite
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bitSize), nil
}

// appendDecimal128 writes the exact decimal text; values that fit an int64
// (most of them) take no allocation.
func appendDecimal128(buf []byte, n decimal128.Num, scale int32) []byte {
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo <= math.MaxInt64) || (hi == -1 && lo > math.MaxInt64) {
		var tmp [24]byte
		return appendScaled(buf, strconv.AppendInt(tmp[:0], int64(lo), 10), scale)
	}
	return appendScaled(buf, n.BigInt().Append(nil, 10), scale)
}

func appendDecimal256(buf []byte, n decimal256.Num, scale int32) []byte {
	return appendScaled(buf, n.BigInt().Append(nil, 10), scale)
}

// appendScaled places the decimal point scale digits from the right of the
// integer text digits ("-12345", 2 → "-123.45"; "5", 3 → "0.005").
func appendScaled(buf, digits []byte, scale int32) []byte {
	if len(digits) > 0 && digits[0] == '-' {
		buf = append(buf, '-')
		digits = digits[1:]
	}
	if scale <= 0 {
		buf = append(buf, digits...)
		for ; scale < 0; scale++ {
			buf = append(buf, '0')
		}
		return buf
	}
	s := int(scale)
	if len(digits) <= s {
		buf = append(buf, '0', '.')
		for k := len(digits); k < s; k++ {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	buf = append(buf, digits[:len(digits)-s]...)
	buf = append(buf, '.')
	return append(buf, digits[len(digits)-s:]...)
}

func extensionEncoder(a array.ExtensionArray) (valueFunc, error) {
	ext := a.DataType().(arrow.ExtensionType)
	storage := a.Storage()
	if fsb, ok := storage.(*array.FixedSizeBinary); ok && ext.ExtensionName() == "arrow.uuid" {
		return func(buf []byte, i int) ([]byte, error) { return appendUUID(buf, fsb.Value(i)), nil }, nil
	}
	return valueEncoder(storage)
}

func appendUUID(buf, u []byte) []byte {
	const hexDigits = "0123456789abcdef"
	for k, c := range u {
		if k == 4 || k == 6 || k == 8 || k == 10 {
			buf = append(buf, '-')
		}
		buf = append(buf, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return buf
}

// jsonEncoder writes lists, structs and maps (and any type without a text
// form of its own) as JSON, the way Arrow renders them.
func jsonEncoder(arr arrow.Array) valueFunc {
	return func(buf []byte, i int) ([]byte, error) {
		js, err := json.Marshal(arr.GetOneForMarshal(i))
		if err != nil {
			return buf, err
		}
		return escape(buf, js), nil
	}
}

// appendDate writes days since the epoch as YYYY-MM-DD.
func appendDate(buf []byte, days int64) ([]byte, error) {
	t := time.Unix(days*86400, 0).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return buf, fmt.Errorf("date %s is outside MySQL's years 0000..9999", t.Format(time.DateOnly))
	}
	return t.AppendFormat(buf, "2006-01-02"), nil
}

// appendDatetime writes microseconds since the epoch as
// "YYYY-MM-DD HH:MM:SS.ffffff" (UTC).
func appendDatetime(buf []byte, us int64) ([]byte, error) {
	t := time.UnixMicro(us).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return buf, fmt.Errorf("timestamp %s is outside MySQL's years 0000..9999", t.Format(time.RFC3339))
	}
	return t.AppendFormat(buf, "2006-01-02 15:04:05.000000"), nil
}

// appendClock writes signed microseconds as [-]HH:MM:SS.ffffff; hours may
// exceed 24 (TIME holds ±838:59:59).
func appendClock(buf []byte, us int64) []byte {
	if us < 0 {
		buf = append(buf, '-')
		us = -us
	}
	sec := us / 1e6
	buf = appendPadded(buf, sec/3600, 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, sec/60%60, 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, sec%60, 2)
	buf = append(buf, '.')
	return appendPadded(buf, us%1e6, 6)
}

func appendPadded(buf []byte, v int64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	for k := len(d); k < width; k++ {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}
