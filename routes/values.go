package routes

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ValueError is a value a destination cannot hold (NaN into MySQL, a date
// outside ClickHouse's Date, PostgreSQL's infinity into Iceberg), found
// while writing: bad input (exit 2) naming the column. The stage is
// aborted, so nothing of the table lands; weir.Transfer's error names the
// table.
type ValueError struct {
	Column string
	Err    error
}

func (e *ValueError) Error() string { return "column " + e.Column + ": " + e.Err.Error() }

// Unwrap returns the conversion's error.
func (e *ValueError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrBadInput) true.
func (e *ValueError) Is(target error) bool { return target == ErrBadInput }

// Infinity finds PostgreSQL's ±infinity in a timestamp or date32 array:
// the postgres route keeps them as the sentinels MaxInt64/MinInt64
// (timestamp, any unit) and MaxInt32/MinInt32 (date32), docs/routes-postgres.md.
// It returns "infinity" or "-infinity" for the first one, or "".
func Infinity(a arrow.Array) string {
	switch a := a.(type) {
	case *array.Timestamp:
		for i := 0; i < a.Len(); i++ {
			if inf := TimestampInfinity(int64(a.Value(i))); a.IsValid(i) && inf != "" {
				return inf
			}
		}
	case *array.Date32:
		for i := 0; i < a.Len(); i++ {
			if inf := DateInfinity(int32(a.Value(i))); a.IsValid(i) && inf != "" {
				return inf
			}
		}
	}
	return ""
}

// TimestampInfinity is "infinity" or "-infinity" when a timestamp's value
// (any unit) is one of Infinity's sentinels, else "".
func TimestampInfinity(v int64) string {
	if v == math.MaxInt64 || v == math.MinInt64 {
		return infinityName(v > 0)
	}
	return ""
}

// DateInfinity is TimestampInfinity for a date32's days.
func DateInfinity(v int32) string {
	if v == math.MaxInt32 || v == math.MinInt32 {
		return infinityName(v > 0)
	}
	return ""
}

func infinityName(pos bool) string {
	if pos {
		return "infinity"
	}
	return "-infinity"
}

// ClockMicros reads a signed clock text, [-]H…H:MM:SS[.f…] (MySQL's TIME
// read as a duration, as the binlog gives it), as microseconds.
func ClockMicros(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 || len(parts[1]) != 2 || len(parts[2]) != 2 || len(frac) > 6 || hasFrac && frac == "" {
		return 0, false
	}
	var n [3]int64
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil || i > 0 && v > 59 {
			return 0, false
		}
		n[i] = int64(v)
	}
	us := (n[0]*3600 + n[1]*60 + n[2]) * 1e6
	if frac != "" {
		f, err := strconv.ParseUint(frac+strings.Repeat("0", 6-len(frac)), 10, 32)
		if err != nil {
			return 0, false
		}
		us += int64(f)
	}
	if neg {
		us = -us
	}
	return us, true
}
