package mysql

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes"
)

// temporalEncoder covers dates, times, timestamps, durations and
// intervals; nil for other arrays.
func temporalEncoder(arr arrow.Array) (valueFunc, error) {
	switch a := arr.(type) {
	case *array.Date32:
		return func(buf []byte, i int) ([]byte, error) {
			if inf := routes.DateInfinity(int32(a.Value(i))); inf != "" {
				return buf, noInfinity(inf)
			}
			return appendDate(buf, int64(a.Value(i)))
		}, nil
	case *array.Date64:
		return func(buf []byte, i int) ([]byte, error) { return appendDate(buf, floorDiv(int64(a.Value(i)), 86400e3)) }, nil
	case *array.Time32:
		per := unitMicros(a.DataType().(*arrow.Time32Type).Unit)
		return func(buf []byte, i int) ([]byte, error) { return appendClock(buf, int64(a.Value(i))*per), nil }, nil
	case *array.Time64:
		return microsEncoder(a.DataType().(*arrow.Time64Type).Unit, func(i int) int64 { return int64(a.Value(i)) }, clockText)
	case *array.Timestamp:
		enc, err := microsEncoder(a.DataType().(*arrow.TimestampType).Unit, func(i int) int64 { return int64(a.Value(i)) }, appendDatetime)
		if err != nil {
			return nil, err
		}
		return func(buf []byte, i int) ([]byte, error) {
			if inf := routes.TimestampInfinity(int64(a.Value(i))); inf != "" {
				return buf, noInfinity(inf)
			}
			return enc(buf, i)
		}, nil
	case *array.Duration:
		return microsEncoder(a.DataType().(*arrow.DurationType).Unit, func(i int) int64 { return int64(a.Value(i)) }, clockText)
	}
	return intervalEncoder(arr), nil
}

// noInfinity refuses PostgreSQL's ±infinity (routes.Infinity's
// sentinels), which would otherwise read as a date in year 294247.
func noInfinity(inf string) error {
	return fmt.Errorf("%s has no MySQL value (MySQL has no infinite dates): replace it at the source, e.g. a view with NULLIF(col, '%[1]s')", inf)
}

func clockText(buf []byte, us int64) ([]byte, error) { return appendClock(buf, us), nil }

// unitMicros is how many microseconds one unit holds (0 for nanoseconds).
func unitMicros(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e6
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1
	}
	return 0
}

// microsEncoder converts a value in unit to microseconds, MySQL's finest
// precision; a nanosecond value that does not fall on a microsecond is an
// error, not a silent rounding.
func microsEncoder(u arrow.TimeUnit, value func(int) int64, text func([]byte, int64) ([]byte, error)) (valueFunc, error) {
	per := unitMicros(u)
	return func(buf []byte, i int) ([]byte, error) {
		v := value(i)
		if per > 0 {
			return text(buf, v*per)
		}
		if v%1000 != 0 {
			return buf, fmt.Errorf("%d ns is finer than MySQL's microseconds", v)
		}
		return text(buf, v/1000)
	}, nil
}

// intervalEncoder writes intervals as PostgreSQL prints them (IntervalStyle
// postgres: "1 year 2 mons 3 days 04:05:06.5"), so a Postgres interval
// compares equal to its interval::text after the trip.
func intervalEncoder(arr arrow.Array) valueFunc {
	switch a := arr.(type) {
	case *array.MonthDayNanoInterval:
		return func(buf []byte, i int) ([]byte, error) {
			v := a.Value(i)
			return routes.AppendInterval(buf, v.Months, v.Days, v.Nanoseconds/1000), nil
		}
	case *array.MonthInterval:
		return func(buf []byte, i int) ([]byte, error) {
			return routes.AppendInterval(buf, int32(a.Value(i)), 0, 0), nil
		}
	case *array.DayTimeInterval:
		return func(buf []byte, i int) ([]byte, error) {
			v := a.Value(i)
			return routes.AppendInterval(buf, 0, v.Days, int64(v.Milliseconds)*1000), nil
		}
	}
	return nil
}
