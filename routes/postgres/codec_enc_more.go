package postgres

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Encoders for numeric, dates and times, intervals and arrays.

func encNumeric(t arrow.DataType) encodeFunc {
	switch t := t.(type) {
	case *arrow.Decimal128Type:
		return encDecimal128(int(t.Scale))
	case *arrow.Decimal256Type:
		return encDecimal256(int(t.Scale))
	case *arrow.Decimal64Type:
		scale := int(t.Scale)
		return encNumericInt(func(a arrow.Array, i int) int64 { return int64(a.(*array.Decimal64).Value(i)) }, scale)
	case *arrow.Decimal32Type:
		scale := int(t.Scale)
		return encNumericInt(func(a arrow.Array, i int) int64 { return int64(a.(*array.Decimal32).Value(i)) }, scale)
	}
	if t.ID() == arrow.UINT64 {
		return func(e *encoder, a arrow.Array, i int) (err error) {
			e.buf, e.scratch, err = appendNumericWide(e.buf, e.scratch, false, wide{a.(*array.Uint64).Value(i)}, 0)
			return err
		}
	}
	if get := intGetters[t.ID()]; get != nil {
		return encNumericInt(func(a arrow.Array, i int) int64 { v, _ := get(a, i); return v }, 0)
	}
	return encNumericText(t)
}

func encDecimal128(scale int) encodeFunc {
	return func(e *encoder, a arrow.Array, i int) (err error) {
		v := a.(*array.Decimal128).Value(i)
		neg := v.Sign() < 0
		if neg {
			v = v.Negate()
		}
		w := wide{v.LowBits(), uint64(v.HighBits())}
		e.buf, e.scratch, err = appendNumericWide(e.buf, e.scratch, neg, w, scale)
		return err
	}
}

func encDecimal256(scale int) encodeFunc {
	return func(e *encoder, a arrow.Array, i int) (err error) {
		v := a.(*array.Decimal256).Value(i)
		neg := v.Sign() < 0
		if neg {
			v = v.Negate()
		}
		e.buf, e.scratch, err = appendNumericWide(e.buf, e.scratch, neg, wide(v.Array()), scale)
		return err
	}
}

// encNumericInt writes a signed integer scaled by 10^-scale.
func encNumericInt(get func(arrow.Array, int) int64, scale int) encodeFunc {
	return func(e *encoder, a arrow.Array, i int) (err error) {
		v := get(a, i)
		mag := uint64(v)
		if v < 0 {
			mag = -mag // two's complement: right for MinInt64 too
		}
		e.buf, e.scratch, err = appendNumericWide(e.buf, e.scratch, v < 0, wide{mag}, scale)
		return err
	}
}

// encNumericText parses decimal text (a bare numeric read as text) or
// formats a float exactly as its shortest decimal.
func encNumericText(t arrow.DataType) encodeFunc {
	if get := stringGetters[t.ID()]; get != nil {
		return func(e *encoder, a arrow.Array, i int) (err error) {
			e.buf, e.scratch, err = appendNumericParse(e.buf, e.scratch, get(a, i))
			return err
		}
	}
	get := floatGetters[t.ID()]
	if get == nil {
		return nil
	}
	return func(e *encoder, a arrow.Array, i int) (err error) {
		// Floats into numeric are no mapped pair, so this path may allocate.
		s := strconv.FormatFloat(get(a, i), 'e', -1, 64)
		if s == "+Inf" || s == "-Inf" {
			s = s[:1] + "Infinity"
		}
		e.buf, e.scratch, err = appendNumericParse(e.buf, e.scratch, s)
		return err
	}
}

func encDate(t arrow.DataType) encodeFunc {
	switch t.ID() {
	case arrow.DATE32:
		return func(e *encoder, a arrow.Array, i int) error {
			return e.appendDate(int64(a.(*array.Date32).Value(i)))
		}
	case arrow.DATE64:
		return func(e *encoder, a arrow.Array, i int) error {
			ms := int64(a.(*array.Date64).Value(i))
			switch ms {
			case math.MaxInt64:
				return e.appendDate(math.MaxInt32)
			case math.MinInt64:
				return e.appendDate(math.MinInt32)
			}
			return e.appendDate(floorDiv(ms, 86400000))
		}
	}
	return nil
}

func (e *encoder) appendDate(days int64) error {
	d, ok := dateToPG(days)
	if !ok {
		return errTimeRange
	}
	e.buf = be.AppendUint32(e.buf, uint32(d))
	return nil
}

func encTime(t arrow.DataType) encodeFunc {
	switch t := t.(type) {
	case *arrow.Time64Type:
		unit := t.Unit
		return func(e *encoder, a arrow.Array, i int) error {
			us, _ := toMicros(int64(a.(*array.Time64).Value(i)), unit)
			e.buf = be.AppendUint64(e.buf, uint64(us))
			return nil
		}
	case *arrow.Time32Type:
		unit := t.Unit
		return func(e *encoder, a arrow.Array, i int) error {
			us, _ := toMicros(int64(a.(*array.Time32).Value(i)), unit)
			e.buf = be.AppendUint64(e.buf, uint64(us))
			return nil
		}
	}
	return nil
}

func encTimestamp(t arrow.DataType) encodeFunc {
	tt, ok := t.(*arrow.TimestampType)
	if !ok {
		return nil
	}
	unit := tt.Unit
	return func(e *encoder, a arrow.Array, i int) error {
		us, ok := toMicros(int64(a.(*array.Timestamp).Value(i)), unit)
		if ok {
			us, ok = timestampToPG(us)
		}
		if !ok {
			return errTimeRange
		}
		e.buf = be.AppendUint64(e.buf, uint64(us))
		return nil
	}
}

// appendInterval writes interval's wire order: int64 µs, int32 days,
// int32 months.
func (e *encoder) appendInterval(us int64, days, months int32) {
	e.buf = be.AppendUint64(e.buf, uint64(us))
	e.buf = be.AppendUint32(e.buf, uint32(days))
	e.buf = be.AppendUint32(e.buf, uint32(months))
}

// encInterval: nanoseconds are truncated to PostgreSQL's microseconds.
func encInterval(t arrow.DataType) encodeFunc {
	switch t := t.(type) {
	case *arrow.MonthDayNanoIntervalType:
		return func(e *encoder, a arrow.Array, i int) error {
			v := a.(*array.MonthDayNanoInterval).Value(i)
			us := v.Nanoseconds / 1000
			if isInfinity64(v.Nanoseconds) {
				us = v.Nanoseconds
			}
			e.appendInterval(us, v.Days, v.Months)
			return nil
		}
	case *arrow.MonthIntervalType:
		return func(e *encoder, a arrow.Array, i int) error {
			e.appendInterval(0, 0, int32(a.(*array.MonthInterval).Value(i)))
			return nil
		}
	case *arrow.DayTimeIntervalType:
		return func(e *encoder, a arrow.Array, i int) error {
			v := a.(*array.DayTimeInterval).Value(i)
			e.appendInterval(int64(v.Milliseconds)*1000, v.Days, 0)
			return nil
		}
	case *arrow.DurationType:
		return encDuration(t.Unit)
	}
	return nil
}

func encDuration(unit arrow.TimeUnit) encodeFunc {
	return func(e *encoder, a arrow.Array, i int) error {
		us, ok := toMicros(int64(a.(*array.Duration).Value(i)), unit)
		if !ok {
			return errInterval
		}
		e.appendInterval(us, 0, 0)
		return nil
	}
}

// listEncoder writes a list as a one-dimensional array (lower bound 1) of
// the column's element type, whose OID array_recv checks.
func listEncoder(spec pgTypeSpec, t arrow.DataType) (encodeFunc, error) {
	lt, ok := t.(arrow.ListLikeType)
	if !ok || spec.kind == kindUnknown {
		return nil, errNoEncoding
	}
	elem, err := encoderFor(spec.elem(), lt.Elem())
	if err != nil {
		return nil, err
	}
	oid := kindOIDs[spec.kind]
	return func(e *encoder, a arrow.Array, i int) error {
		l := a.(array.ListLike)
		start, end := l.ValueOffsets(i)
		return e.appendArray(elem, oid, l.ListValues(), int(start), int(end))
	}, nil
}

func (e *encoder) appendArray(elem encodeFunc, oid uint32, vals arrow.Array, start, end int) error {
	if start == end {
		e.buf = be.AppendUint32(be.AppendUint64(e.buf, 0), oid) // ndim 0, no nulls
		return nil
	}
	hasNull := uint32(0)
	for j := start; j < end && vals.NullN() > 0; j++ {
		if vals.IsNull(j) {
			hasNull = 1
			break
		}
	}
	for _, v := range [...]uint32{1, hasNull, oid, uint32(end - start), 1} {
		e.buf = be.AppendUint32(e.buf, v)
	}
	for j := start; j < end; j++ {
		if err := e.field(elem, vals, j); err != nil {
			return err
		}
	}
	return nil
}
