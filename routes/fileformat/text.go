package fileformat

import (
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// appender appends the text of a non-NULL value of row i to dst.
type appender func(dst []byte, i int) []byte

// textAppender returns how a column's values are written as text (CSV, and
// Parquet columns of types Parquet cannot hold). Every form reads back
// exactly through the column builder's AppendValueFromString:
//
//	integers, floats, booleans   strconv forms (1.5, NaN, true)
//	decimals                     fixed scale: 12.30, -0.01
//	timestamps                   2024-01-31 12:00:00.123456, UTC, with a Z when the type has a zone
//	dates, times                 2024-01-31, 12:00:00.5
//	strings                      as is
//	binary                       base64
//	lists, structs, intervals    Arrow's JSON-like ValueStr
func textAppender(a arrow.Array) appender {
	switch a := a.(type) {
	case *array.String:
		return func(dst []byte, i int) []byte { return append(dst, a.Value(i)...) }
	case *array.LargeString:
		return func(dst []byte, i int) []byte { return append(dst, a.Value(i)...) }
	case *array.Int64:
		return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, a.Value(i), 10) }
	case *array.Int32:
		return func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }
	case *array.Float64:
		return func(dst []byte, i int) []byte { return strconv.AppendFloat(dst, a.Value(i), 'g', -1, 64) }
	case *array.Boolean:
		return func(dst []byte, i int) []byte { return strconv.AppendBool(dst, a.Value(i)) }
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return func(dst []byte, i int) []byte { return append(dst, a.Value(i).ToString(scale)...) }
	case *array.Decimal256:
		scale := a.DataType().(*arrow.Decimal256Type).Scale
		return func(dst []byte, i int) []byte { return append(dst, a.Value(i).ToString(scale)...) }
	case *array.Timestamp:
		return timestampAppender(a)
	case *array.Date32:
		// Years outside 0000..9999 (PostgreSQL's BC dates, year 10000, the
		// infinity sentinels) do not parse as 2006-01-02: the raw day count.
		return func(dst []byte, i int) []byte {
			if y := a.Value(i).ToTime().Year(); y < 0 || y > 9999 {
				return strconv.AppendInt(dst, int64(a.Value(i)), 10)
			}
			return append(dst, a.ValueStr(i)...)
		}
	case *array.Time64:
		// PostgreSQL's 24:00:00 is a day's count, which ValueStr wraps to
		// 00:00:00: such a value is written as the raw count, read back as is.
		day := int64(24 * time.Hour / a.DataType().(*arrow.Time64Type).Unit.Multiplier())
		return func(dst []byte, i int) []byte {
			if v := int64(a.Value(i)); v < 0 || v >= day {
				return strconv.AppendInt(dst, v, 10)
			}
			return append(dst, a.ValueStr(i)...)
		}
	}
	return func(dst []byte, i int) []byte { return append(dst, a.ValueStr(i)...) }
}

const textTimeLayout = "2006-01-02 15:04:05.999999999"

func timestampAppender(a *array.Timestamp) appender {
	t := a.DataType().(*arrow.TimestampType)
	zone := t.TimeZone != ""
	return func(dst []byte, i int) []byte {
		v := a.Value(i).ToTime(t.Unit)
		if v.Year() < 0 || v.Year() > 9999 {
			return strconv.AppendInt(dst, int64(a.Value(i)), 10) // read back as the raw count
		}
		dst = v.UTC().AppendFormat(dst, textTimeLayout)
		if zone {
			dst = append(dst, 'Z')
		}
		return dst
	}
}
