package objstore

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/weirhq/weir/routes"
)

// MaxCursor scans the cursor column (files keep no index; a Parquet column
// scan reads only that column) and returns its maximum as text in the
// forms PostgreSQL's route uses: integers and decimals as digits, times as
// "2006-01-02 15:04:05.000000" in UTC ("+00" appended for a zoned type).
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
	}
	m, err := newMaxTracker(c.Type)
	if err != nil {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: err.Error(), Hint: "use an integer, decimal, timestamp, date or text column as the cursor"}
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return "", false, err
	}
	for _, r := range ranges {
		if err := e.scanMax(ctx, r, cursor, m); err != nil {
			return "", false, fmt.Errorf("max of cursor %s.%s: %w", info.Ref, cursor, err)
		}
	}
	return m.text(), m.seen, nil
}

// NullCount scans the column and counts its NULLs.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	if _, ok := info.Column(column); !ok {
		return 0, &routes.ProbeError{Table: info.Ref.String(), Column: column, Problem: "column does not exist"}
	}
	ranges, err := e.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range ranges {
		s, err := e.Read(ctx, r, routes.ReadOptions{Columns: []string{column}})
		if err != nil {
			return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
		}
		for s.Next() {
			n += int64(s.RecordBatch().Column(0).NullN())
		}
		err = s.Err()
		s.Release()
		if err != nil {
			return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
		}
	}
	return n, nil
}

func (e *Endpoint) scanMax(ctx context.Context, r routes.Range, cursor string, m *maxTracker) error {
	s, err := e.Read(ctx, r, routes.ReadOptions{Columns: []string{cursor}})
	if err != nil {
		return err
	}
	defer s.Release()
	for s.Next() {
		m.observe(s.RecordBatch().Column(0))
	}
	return s.Err()
}

// maxTracker keeps the largest non-NULL value of a column.
type maxTracker struct {
	typ  arrow.DataType
	seen bool
	i    int64 // integers, timestamps, dates
	f    float64
	d    decimal128.Num
	s    string
}

func newMaxTracker(t arrow.DataType) (*maxTracker, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.TIMESTAMP, arrow.DATE32, arrow.STRING, arrow.LARGE_STRING:
		return &maxTracker{typ: t}, nil
	}
	return nil, fmt.Errorf("a %s column cannot be a cursor", t)
}

func (m *maxTracker) observe(a arrow.Array) {
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		m.take(a, i)
		m.seen = true
	}
}

func (m *maxTracker) take(a arrow.Array, i int) {
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
		m.i = maxOf(first, m.i, integerAt(a, i))
	}
}

func maxOf[T cmp.Ordered](first bool, cur, v T) T {
	if first {
		return v
	}
	return max(cur, v)
}

// integerAt reads integer-like values (integers, timestamps, dates).
func integerAt(a arrow.Array, i int) int64 {
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

func (m *maxTracker) text() string {
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
