package iceberg

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// appendChange appends one change value (cdc.Change's Go values: nil,
// string, []byte, integers, floats, bool, time.Time) to a builder of the
// table's Arrow type. PostgreSQL's pgoutput sends each type's text output,
// so strings are parsed by the column's type; the binlog sends typed
// values. A value still Unchanged here (no earlier version to fill it
// from) is written as NULL.
func appendChange(b array.Builder, v any) error {
	if v == nil || cdc.IsUnchanged(v) {
		b.AppendNull()
		return nil
	}
	if s, ok := v.([]byte); ok && !isBinaryBuilder(b) {
		v = string(s)
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(textOf(v))
	case *array.LargeStringBuilder:
		b.Append(textOf(v))
	case *array.BinaryBuilder:
		raw, err := bytesOf(v)
		if err != nil {
			return err
		}
		b.Append(raw)
	case *array.Int32Builder:
		n, err := intOf(v)
		b.Append(int32(n))
		return err
	case *array.Int64Builder:
		n, err := intOf(v)
		b.Append(n)
		return err
	case *array.Float32Builder:
		f, err := floatOf(v)
		b.Append(float32(f))
		return err
	case *array.Float64Builder:
		f, err := floatOf(v)
		b.Append(f)
		return err
	case *array.BooleanBuilder:
		x, err := boolOf(v)
		b.Append(x)
		return err
	case *array.Decimal128Builder:
		return appendDecimal(b, v)
	case *array.TimestampBuilder:
		return appendTimestamp(b, v)
	case *array.Date32Builder:
		t, err := timeOf(v)
		b.Append(arrow.Date32FromTime(t))
		return err
	case *array.Time64Builder:
		return appendTime(b, v)
	case *extensions.UUIDBuilder:
		u, err := uuid.Parse(textOf(v))
		b.Append(u)
		return err
	default:
		return b.AppendValueFromString(textOf(v))
	}
	return nil
}

func isBinaryBuilder(b array.Builder) bool {
	_, ok := b.(*array.BinaryBuilder)
	return ok
}

// textOf renders a value as text: times in UTC, bytes as they are.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case arrow.MonthDayNanoInterval: // pgoutput's, decoded: as valueText prints the bulk route's
		return routes.IntervalText(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// bytesOf reads bytes: PostgreSQL's bytea text output is \x and hex.
func bytesOf(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		if strings.HasPrefix(x, `\x`) {
			return hex.DecodeString(x[2:])
		}
		return []byte(x), nil
	}
	return []byte(textOf(v)), nil
}

func intOf(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(textOf(v)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", textOf(v))
	}
	return n, nil
}

func floatOf(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case string, []byte: // text: ParseFloat keeps "-0" negative, which an integer parse does not
	default:
		if n, err := intOf(v); err == nil {
			return float64(n), nil
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(textOf(v)), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", textOf(v))
	}
	return f, nil
}

// boolOf reads PostgreSQL's t/f, true/false and MySQL's 0/1.
func boolOf(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(x) {
		case "t", "true", "1", "y", "yes", "on":
			return true, nil
		case "f", "false", "0", "n", "no", "off":
			return false, nil
		}
		return false, fmt.Errorf("%q is not a boolean", x)
	}
	n, err := intOf(v)
	return n != 0, err
}

func appendDecimal(b *array.Decimal128Builder, v any) error {
	dt := b.Type().(*arrow.Decimal128Type)
	n, err := decimal128.FromString(strings.TrimSpace(textOf(v)), dt.Precision, dt.Scale)
	if err != nil {
		return fmt.Errorf("%q is not a decimal(%d,%d): %w", textOf(v), dt.Precision, dt.Scale, err)
	}
	b.Append(n)
	return nil
}

// timeLayouts are the texts of timestamps and dates weir's sources send:
// PostgreSQL's output (zone offset +00 or +05:30), MySQL's DATETIME text.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02",
}

// timeOf reads a time; a text without a zone is UTC (MySQL DATETIME, a
// PostgreSQL timestamp without time zone: the wall time is kept).
func timeOf(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	s := strings.TrimSpace(textOf(v))
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp or date", s)
}

func appendTimestamp(b *array.TimestampBuilder, v any) error {
	t, err := timeOf(v)
	if err != nil {
		return err
	}
	ts, err := arrow.TimestampFromTime(t.UTC(), b.Type().(*arrow.TimestampType).Unit)
	if err != nil {
		return err
	}
	b.Append(ts)
	return nil
}

func appendTime(b *array.Time64Builder, v any) error {
	s := strings.TrimSpace(textOf(v))
	// PostgreSQL's time runs to 24:00:00, which the bulk route keeps
	us, ok := routes.ClockMicros(s)
	if !ok || us < 0 || us > 24*3600e6 {
		return fmt.Errorf("%q is not a time of day", s)
	}
	unit := b.Type().(*arrow.Time64Type).Unit
	b.Append(arrow.Time64(us * 1000 / int64(unit.Multiplier())))
	return nil
}
