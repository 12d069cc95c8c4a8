package gsheets

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// With typed=1 a column's type comes from the cells' own types in the
// sheet (read as UNFORMATTED_VALUE, dates as FORMATTED_STRING) over the
// first page of rows:
//
//	int64      every number is whole and within ±2^53 (a sheet's numbers are doubles)
//	float64    numbers, some not whole
//	bool       TRUE/FALSE cells
//	date32     text in the form 2024-01-31 (a date cell formatted yyyy-mm-dd)
//	timestamp  text 2024-01-31 12:00[:00[.fff]] (T or space), or dates and
//	           date-times mixed; timestamp[us], no zone (a sheet's times are wall-clock)
//	string     anything else: text cells (also text that looks like a number:
//	           the sheet keeps it as text), mixed kinds, and a column with no value
//
// A blank cell is NULL in every type.
type kind int

const (
	kindInt kind = 1 << iota
	kindFloat
	kindBool
	kindDate
	kindTime
	kindText
)

// Native types, as the columns' weir.native_type.
const (
	nativeText   = "text"
	nativeNumber = "number"
	nativeBool   = "boolean"
	nativeDate   = "date"
	nativeTime   = "datetime"
)

// maxExactInt is the largest integer every double holds exactly.
const maxExactInt = 1 << 53

// kindOf classifies one non-blank cell value.
func kindOf(v any) kind {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= maxExactInt {
			return kindInt
		}
		return kindFloat
	case bool:
		return kindBool
	case string:
		if _, ok := parseDate(v); ok {
			return kindDate
		}
		if _, ok := parseDateTime(v); ok {
			return kindTime
		}
	}
	return kindText
}

// inferType is the Arrow type of a column whose cells had the kinds seen.
func inferType(seen kind) (arrow.DataType, string) {
	switch seen {
	case kindInt:
		return arrow.PrimitiveTypes.Int64, nativeNumber
	case kindFloat, kindInt | kindFloat:
		return arrow.PrimitiveTypes.Float64, nativeNumber
	case kindBool:
		return arrow.FixedWidthTypes.Boolean, nativeBool
	case kindDate:
		return arrow.FixedWidthTypes.Date32, nativeDate
	case kindTime, kindDate | kindTime:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nativeTime
	}
	return arrow.BinaryTypes.String, nativeText
}

// blank reports a cell with no value: the API sends "" for an empty cell
// before the row's last value, and nothing after it.
func blank(v any) bool {
	s, ok := v.(string)
	return v == nil || ok && s == ""
}

// cellText is a value as text: a string as it is, a number in its
// shortest form, a boolean as the sheet shows it.
func cellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		if v {
			return "TRUE"
		}
		return "FALSE"
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func parseDate(s string) (time.Time, bool) {
	if len(s) != len("2006-01-02") {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// dateTimeForms are the date-time texts typed=1 reads.
var dateTimeForms = []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02T15:04"}

func parseDateTime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02 15:04") {
		return time.Time{}, false
	}
	for _, f := range dateTimeForms {
		if t, err := time.Parse(f, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// appender adds one cell to a column's builder; an error says why the
// value does not fit the column's type.
type appender func(v any) error

func appenderFor(b array.Builder) appender {
	switch b := b.(type) {
	case *array.Int64Builder:
		return func(v any) error {
			if kindOf(v) != kindInt {
				return mismatch(v, "a whole number")
			}
			b.Append(int64(v.(float64)))
			return nil
		}
	case *array.Float64Builder:
		return func(v any) error {
			f, ok := v.(float64)
			if !ok {
				return mismatch(v, "a number")
			}
			b.Append(f)
			return nil
		}
	case *array.BooleanBuilder:
		return func(v any) error {
			x, ok := v.(bool)
			if !ok {
				return mismatch(v, "TRUE or FALSE")
			}
			b.Append(x)
			return nil
		}
	case *array.Date32Builder:
		return func(v any) error {
			s, _ := v.(string)
			t, ok := parseDate(s)
			if !ok {
				return mismatch(v, "a date (yyyy-mm-dd)")
			}
			b.Append(arrow.Date32FromTime(t))
			return nil
		}
	case *array.TimestampBuilder:
		return func(v any) error {
			s, _ := v.(string)
			t, ok := parseDate(s)
			if !ok {
				t, ok = parseDateTime(s)
			}
			if !ok {
				return mismatch(v, "a date-time (yyyy-mm-dd hh:mm[:ss])")
			}
			b.Append(arrow.Timestamp(t.UnixMicro()))
			return nil
		}
	case *array.StringBuilder:
		return func(v any) error {
			b.Append(cellText(v))
			return nil
		}
	}
	return func(any) error { return fmt.Errorf("no reader for %s", b.Type()) }
}

func mismatch(v any, want string) error {
	return fmt.Errorf("%q is not %s", cellText(v), want)
}
