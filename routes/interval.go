package routes

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// An interval's text is PostgreSQL's output with IntervalStyle postgres
// ("1 year 2 mons -3 days +04:05:06.789"): what the postgres source's
// change capture receives (pgoutput) and what the destinations that keep
// an interval as PostgreSQL's text write (MySQL, Iceberg). AppendInterval
// prints it, ParseInterval reads it back into the bulk route's value, so
// a row lands the same whether it was copied or captured.

// AppendInterval follows PostgreSQL's EncodeInterval for INTSTYLE_POSTGRES:
// years and months from months, each part with its own sign, a "+" on a
// positive part after a negative one, the clock's trailing zeros dropped.
func AppendInterval(buf []byte, months, days int32, us int64) []byte {
	start := len(buf)
	isBefore := false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		if isBefore && v > 0 {
			buf = append(buf, '+')
		}
		buf = fmt.Appendf(buf, "%d %s", v, unit)
		if v != 1 {
			buf = append(buf, 's')
		}
		isBefore = v < 0
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if len(buf) > start && us == 0 {
		return buf
	}
	if len(buf) > start {
		buf = append(buf, ' ')
	}
	switch {
	case us < 0:
		buf = append(buf, '-')
		us = -us
	case isBefore:
		buf = append(buf, '+')
	}
	return appendPGClock(buf, us)
}

// IntervalText is AppendInterval's text of an Arrow month_day_nano
// interval (nanoseconds truncated to PostgreSQL's microseconds).
func IntervalText(v arrow.MonthDayNanoInterval) string {
	return string(AppendInterval(nil, v.Months, v.Days, v.Nanoseconds/1000))
}

// appendPGClock writes HH:MM:SS with the fraction's trailing zeros dropped.
func appendPGClock(buf []byte, us int64) []byte {
	sec := uint64(us) / 1e6 // uint64: -MinInt64 stays positive
	pad := func(v uint64, width int) {
		d := strconv.AppendUint(nil, v, 10)
		for k := len(d); k < width; k++ {
			buf = append(buf, '0')
		}
		buf = append(buf, d...)
	}
	pad(sec/3600, 2)
	buf = append(buf, ':')
	pad(sec/60%60, 2)
	buf = append(buf, ':')
	pad(sec%60, 2)
	frac := uint64(us) % 1e6
	if frac == 0 {
		return buf
	}
	digits := 6
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	buf = append(buf, '.')
	pad(frac, digits)
	return buf
}

// ErrIntervalRange: Arrow's month_day_nano holds ±292 years of
// microseconds in its nanoseconds; PostgreSQL's interval holds more.
var ErrIntervalRange = errors.New("interval out of range of Arrow month_day_nano (±292 years of microseconds)")

// ParseInterval reads AppendInterval's text (PostgreSQL's output with
// IntervalStyle postgres) into the value the bulk route reads from the
// binary wire: months (years × 12 + mons), days, and the clock's
// microseconds as nanoseconds.
func ParseInterval(s string) (arrow.MonthDayNanoInterval, error) {
	var v arrow.MonthDayNanoInterval
	bad := func() (arrow.MonthDayNanoInterval, error) {
		return arrow.MonthDayNanoInterval{}, fmt.Errorf("%q is not PostgreSQL's interval output (IntervalStyle postgres)", s)
	}
	f := strings.Fields(s)
	var months int64
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			if i != len(f)-1 {
				return bad()
			}
			us, ok := ClockMicros(strings.TrimPrefix(f[i], "+"))
			if !ok {
				return bad()
			}
			if us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
				return arrow.MonthDayNanoInterval{}, fmt.Errorf("%s: %w", s, ErrIntervalRange)
			}
			v.Nanoseconds = us * 1000
			continue
		}
		if i+1 >= len(f) {
			return bad()
		}
		n, err := strconv.ParseInt(f[i], 10, 32)
		if err != nil {
			return bad()
		}
		i++
		switch strings.TrimSuffix(f[i], "s") {
		case "year":
			months += n * 12
		case "mon":
			months += n
		case "day":
			v.Days = int32(n)
		default:
			return bad()
		}
	}
	if len(f) == 0 || months > math.MaxInt32 || months < math.MinInt32 {
		return bad()
	}
	v.Months = int32(months)
	return v, nil
}
