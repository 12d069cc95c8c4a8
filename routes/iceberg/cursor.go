package iceberg

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

// Cursor values are text that compares back (routes.CursorSource):
// integers in decimal, dates as 2006-01-02, timestamps as
// "2006-01-02 15:04:05.000000" (UTC; "+00" appended for timestamptz, the
// way the Postgres route prints them).
const (
	dateText = "2006-01-02"
	tsText   = "2006-01-02 15:04:05.000000"
)

// cursorFilter is After < col <= Until as an Iceberg expression; empty
// bounds are open.
func cursorFilter(col string, typ iceberg.Type, after, until string) (iceberg.BooleanExpression, error) {
	ref := iceberg.Reference(col)
	switch typ.(type) {
	case iceberg.Int32Type:
		return bounded(ref, after, until, func(s string) (int32, error) {
			n, err := strconv.ParseInt(s, 10, 32)
			return int32(n), err
		})
	case iceberg.Int64Type:
		return bounded(ref, after, until, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	case iceberg.StringType:
		return bounded(ref, after, until, func(s string) (string, error) { return s, nil })
	case iceberg.DateType:
		return bounded(ref, after, until, parseDate)
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return bounded(ref, after, until, parseTimestamp)
	}
	return nil, fmt.Errorf("column %s of type %s cannot be a cursor (use an integer, date, timestamp or string column)", col, typ)
}

func bounded[T iceberg.LiteralType](ref iceberg.Reference, after, until string, parse func(string) (T, error)) (iceberg.BooleanExpression, error) {
	var expr iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	if after != "" {
		v, err := parse(after)
		if err != nil {
			return nil, fmt.Errorf("cursor value %q: %w", after, err)
		}
		expr = iceberg.NewAnd(expr, iceberg.GreaterThan(ref, v))
	}
	if until != "" {
		v, err := parse(until)
		if err != nil {
			return nil, fmt.Errorf("cursor value %q: %w", until, err)
		}
		expr = iceberg.NewAnd(expr, iceberg.LessThanEqual(ref, v))
	}
	return expr, nil
}

func parseDate(s string) (iceberg.Date, error) {
	t, err := time.Parse(dateText, s)
	return iceberg.Date(t.Unix() / 86400), err
}

// parseTimestamp reads cursor text with or without fraction and "+00".
func parseTimestamp(s string) (iceberg.Timestamp, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "+00")
	t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	if err != nil {
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	return iceberg.Timestamp(t.UnixMicro()), err
}

// cursorText renders a column value (an Iceberg literal's Go value) as
// cursor text.
func cursorText(typ iceberg.Type, v any) string {
	switch x := v.(type) {
	case iceberg.Date:
		return time.Unix(int64(x)*86400, 0).UTC().Format(dateText)
	case iceberg.Timestamp:
		s := time.UnixMicro(int64(x)).UTC().Format(tsText)
		if _, tz := typ.(iceberg.TimestampTzType); tz {
			s += "+00"
		}
		return s
	}
	return fmt.Sprint(v)
}
