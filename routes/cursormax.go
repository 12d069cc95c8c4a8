package routes

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// CursorMax keeps the largest non-NULL value of a cursor column as the
// sources without an index find it, by a scan (files, spreadsheets), and
// renders it as MaxCursor text: integers and decimals as digits, times as
// "2006-01-02 15:04:05.000000" in UTC ("+00" appended for a zoned type).
type CursorMax struct {
	typ  arrow.DataType
	seen bool
	i    int64 // integers, timestamps, dates
	f    float64
	d    decimal128.Num
	s    string
}

// NewCursorMax tracks a column of type t; a type no cursor can have is an
// error.
func NewCursorMax(t arrow.DataType) (*CursorMax, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.TIMESTAMP, arrow.DATE32, arrow.STRING, arrow.LARGE_STRING:
		return &CursorMax{typ: t}, nil
	}
	return nil, fmt.Errorf("a %s column cannot be a cursor", t)
}

// Observe takes the values of one batch of the column.
func (m *CursorMax) Observe(a arrow.Array) {
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		m.take(a, i)
		m.seen = true
	}
}

func (m *CursorMax) take(a arrow.Array, i int) {
	first := !m.seen
	switch a := a.(type) {
	case *array.Decimal128:
		if v := a.Value(i); first || v.Greater(m.d) {
			m.d = v
		}
	case *array.Float64:
		m.f = maxOf(first, m.f, a.Value(i))
	case *array.Float32:
		m.f = maxOf(first, m.f, float64(a.Value(i)))
	case *array.String:
		m.s = maxOf(first, m.s, a.Value(i))
	case *array.LargeString:
		m.s = maxOf(first, m.s, a.Value(i))
	default:
		m.i = maxOf(first, m.i, IntegerAt(a, i))
	}
}

func maxOf[T cmp.Ordered](first bool, cur, v T) T {
	if first {
		return v
	}
	return max(cur, v)
}

// IntegerAt reads integer-like values (integers, timestamps, dates) as
// int64; 0 for any other type.
func IntegerAt(a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Uint16:
		return int64(a.Value(i))
	case *array.Uint8:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	}
	return 0
}

// Seen reports whether any non-NULL value was observed.
func (m *CursorMax) Seen() bool { return m.seen }

// Text is the maximum as MaxCursor text, "" when none was seen.
func (m *CursorMax) Text() string {
	if !m.seen {
		return ""
	}
	switch t := m.typ.(type) {
	case *arrow.Decimal128Type:
		return m.d.ToString(t.Scale)
	case *arrow.Float32Type, *arrow.Float64Type:
		return strconv.FormatFloat(m.f, 'g', -1, 64)
	case *arrow.StringType, *arrow.LargeStringType:
		return m.s
	case *arrow.TimestampType:
		s := arrow.Timestamp(m.i).ToTime(t.Unit).UTC().Format("2006-01-02 15:04:05.000000")
		if t.TimeZone != "" {
			s += "+00"
		}
		return s
	case *arrow.Date32Type:
		return arrow.Date32(m.i).FormattedString()
	}
	return strconv.FormatInt(m.i, 10)
}
