package postgres

import (
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// PostgreSQL counts timestamps in µs and dates in days from 2000-01-01;
// Arrow counts from 1970-01-01.
//
// ±infinity: PostgreSQL stores timestamp 'infinity' as MaxInt64 and
// '-infinity' as MinInt64, date 'infinity' as MaxInt32 and '-infinity' as
// MinInt32. weir keeps those sentinels unshifted in Arrow (timestamp
// MaxInt64/MinInt64 in any unit, date32 MaxInt32/MinInt32) and the encoder
// maps them back, so infinities round-trip. A finite value that would land
// on a sentinel or overflow is an error, never a wrap.
const (
	pgEpochMicros = 946684800000000 // 2000-01-01T00:00:00Z in µs since 1970
	pgEpochDays   = 10957           // 2000-01-01 in days since 1970
	microsPerDay  = 86400000000
)

var (
	errTimeRange = errors.New("timestamp or date out of the range Arrow and PostgreSQL share")
	errInterval  = routes.ErrIntervalRange
)

func isInfinity64(v int64) bool { return v == math.MaxInt64 || v == math.MinInt64 }
func isInfinity32(v int32) bool { return v == math.MaxInt32 || v == math.MinInt32 }

// timestampFromPG shifts PostgreSQL µs to Unix µs.
func timestampFromPG(us int64) (int64, bool) {
	if isInfinity64(us) {
		return us, true
	}
	if us >= math.MaxInt64-pgEpochMicros {
		return 0, false
	}
	return us + pgEpochMicros, true
}

// timestampToPG shifts Unix µs to PostgreSQL µs.
func timestampToPG(us int64) (int64, bool) {
	if isInfinity64(us) {
		return us, true
	}
	if us <= math.MinInt64+pgEpochMicros {
		return 0, false
	}
	return us - pgEpochMicros, true
}

func dateFromPG(d int32) (int32, bool) {
	if isInfinity32(d) {
		return d, true
	}
	v := int64(d) + pgEpochDays
	return int32(v), v < math.MaxInt32
}

func dateToPG(d int64) (int32, bool) {
	if d == math.MaxInt32 || d == math.MinInt32 {
		return int32(d), true
	}
	v := d - pgEpochDays
	return int32(v), v > math.MinInt32 && v < math.MaxInt32
}

// toMicros converts a count of unit to µs: exact for s and ms (or an
// overflow error), floored for ns since PostgreSQL keeps µs. The infinity
// sentinels pass through.
func toMicros(v int64, unit arrow.TimeUnit) (int64, bool) {
	if isInfinity64(v) {
		return v, true
	}
	switch unit {
	case arrow.Second:
		return mulCheck(v, 1000000)
	case arrow.Millisecond:
		return mulCheck(v, 1000)
	case arrow.Nanosecond:
		return floorDiv(v, 1000), true
	}
	return v, true
}

func mulCheck(v, m int64) (int64, bool) {
	if v > math.MaxInt64/m || v < math.MinInt64/m {
		return 0, false
	}
	return v * m, true
}

func floorDiv(v, d int64) int64 {
	q := v / d
	if v%d != 0 && v < 0 {
		q--
	}
	return q
}
