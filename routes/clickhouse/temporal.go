package clickhouse

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Ranges ClickHouse dates hold (days since 1970-01-01, seconds).
const (
	maxDate        = math.MaxUint16 // Date: UInt16 days, up to 2149-06-06
	maxDateOld     = 49672          // 2105-12-31: the end of old servers' date tables
	maxDateTimeOld = 4291747199     // 2105-12-31 23:59:59
	minDate32      = -25567         // Date32: 1900-01-01
	maxDate32      = 120529         // Date32: 2299-12-31
	msPerDay       = 86_400_000
)

// dateLimits are the largest Date and DateTime a server handles: servers
// before 21.1 store up to 2149/2106 but their date functions and text
// output wrap after 2105, so weir refuses later values there.
func dateLimits(f features) (int64, int64) {
	if f.wideDates {
		return maxDate, math.MaxUint32
	}
	return maxDateOld, maxDateTimeOld
}

func limit(v, fallback int64) int64 {
	if v == 0 {
		return fallback
	}
	return v
}

func dateEncoder(a arrow.DataType, t chType, o Options) encoder {
	days := daysGetter(a)
	if days == nil {
		return nil
	}
	if t.Name == "Date32" {
		if a.ID() == arrow.DATE32 {
			return memEnc{t.raw, 4}
		}
		return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return bindDate(arr, days(arr), minDate32, maxDate32, 4) }}
	}
	hi := limit(o.maxDate, maxDate)
	return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return bindDate(arr, days(arr), 0, hi, 2) }}
}

// daysGetter reads Date32 and Date64 arrays as days since the epoch.
func daysGetter(a arrow.DataType) func(arrow.Array) func(int) int64 {
	switch a.ID() {
	case arrow.DATE32:
		return func(arr arrow.Array) func(int) int64 {
			d := arr.(*array.Date32)
			return func(i int) int64 { return int64(d.Value(i)) }
		}
	case arrow.DATE64:
		return func(arr arrow.Array) func(int) int64 {
			d := arr.(*array.Date64)
			return func(i int) int64 { return floorDiv(int64(d.Value(i)), msPerDay) }
		}
	}
	return nil
}

func bindDate(arr arrow.Array, days func(int) int64, lo, hi int64, width int) valueFunc {
	return func(b []byte, i int) ([]byte, error) {
		var d int64
		if arr.IsValid(i) {
			d = days(i)
		}
		if d < lo || d > hi {
			day := func(d int64) string { return time.Unix(d*86400, 0).UTC().Format(time.DateOnly) }
			return b, fmt.Errorf("date %s is outside the ClickHouse %s range (%s to %s)", day(d), pick(width == 2, "Date", "Date32"), day(lo), day(hi))
		}
		if width == 2 {
			return binary.LittleEndian.AppendUint16(b, uint16(d)), nil
		}
		return binary.LittleEndian.AppendUint32(b, uint32(int32(d))), nil
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// pow10 is 10^n for n in 0..18.
func pow10(n int) int64 { return int64(math.Pow10(n)) }

func dateTimeEncoder(a arrow.DataType, t chType, o Options) encoder {
	var digits int // of the source: 0 s, 3 ms, 6 us, 9 ns
	var get func(arrow.Array) func(int) int64
	switch at := a.(type) {
	case *arrow.TimestampType:
		digits = unitDigits(at.Unit)
		get = func(arr arrow.Array) func(int) int64 {
			ts := arr.(*array.Timestamp)
			return func(i int) int64 { return int64(ts.Value(i)) }
		}
	case *arrow.Date32Type, *arrow.Date64Type:
		days := daysGetter(a)
		get = func(arr arrow.Array) func(int) int64 {
			d := days(arr)
			return func(i int) int64 { return d(i) * 86400 }
		}
	default:
		return nil
	}
	p := 0
	if t.Name == "DateTime64" {
		p, _ = t.intArg(0)
	}
	conv := timeConv{from: digits, to: p, truncate: o.Subseconds == "truncate", dateTime: t.Name == "DateTime",
		maxDateTime: limit(o.maxDateTime, math.MaxUint32)}
	return scalarEnc{t.raw, func(arr arrow.Array) valueFunc { return conv.bind(arr, get(arr)) }}
}

// timeConv rescales epoch values from one number of fractional digits to
// another: DateTime (UInt32 seconds) or DateTime64(p) (Int64 ticks).
type timeConv struct {
	from, to    int
	truncate    bool // drop digits the destination cannot hold instead of failing
	dateTime    bool
	maxDateTime int64
}

func (c timeConv) bind(arr arrow.Array, get func(int) int64) valueFunc {
	return func(b []byte, i int) ([]byte, error) {
		var v int64
		if arr.IsValid(i) {
			v = get(i)
		}
		out, err := c.convert(v)
		if err != nil {
			return b, err
		}
		if c.dateTime {
			return binary.LittleEndian.AppendUint32(b, uint32(out)), nil
		}
		return binary.LittleEndian.AppendUint64(b, uint64(out)), nil
	}
}

func (c timeConv) convert(v int64) (int64, error) {
	if v == math.MaxInt64 || v == math.MinInt64 { // PostgreSQL's ±infinity (the postgres route's sentinels)
		return 0, infinityErr(pick(v > 0, "infinity", "-infinity"), c.target())
	}
	out := v
	switch {
	case c.to > c.from:
		m := pow10(c.to - c.from)
		if v > math.MaxInt64/m || v < math.MinInt64/m {
			return 0, fmt.Errorf("timestamp %s overflows DateTime64(%d)", c.text(v), c.to)
		}
		out = v * m
	case c.to < c.from:
		m := pow10(c.from - c.to)
		out = floorDiv(v, m)
		if out*m != v && !c.truncate {
			return 0, fmt.Errorf("timestamp %s has more fractional digits than ClickHouse %s holds (add subseconds=truncate to the destination URL to drop them)", c.text(v), c.target())
		}
	}
	if c.dateTime && (out < 0 || out > c.maxDateTime) {
		end := time.Unix(c.maxDateTime, 0).UTC().Format(time.DateTime)
		return 0, fmt.Errorf("timestamp %s is outside the range of this server's DateTime (1970-01-01 00:00:00 to %s)", c.text(v), end)
	}
	return out, nil
}

func (c timeConv) target() string {
	if c.dateTime {
		return "DateTime"
	}
	return fmt.Sprintf("DateTime64(%d)", c.to)
}

func (c timeConv) text(v int64) string {
	m := pow10(c.from)
	return time.Unix(floorDiv(v, m), (v-floorDiv(v, m)*m)*pow10(9-c.from)).UTC().Format("2006-01-02 15:04:05.999999999")
}

// infinityErr refuses an infinite timestamp or date: ClickHouse has none,
// and no truncation or range option makes one fit.
func infinityErr(text, typ string) error {
	return fmt.Errorf("timestamp %s has no ClickHouse %s value (ClickHouse has no infinite dates): replace it at the source, e.g. a view with NULLIF(col, '%[1]s')", text, typ)
}
