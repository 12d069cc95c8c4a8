package mysql

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Parsers of MySQL's text-protocol values. They read the driver's buffer in
// place and never allocate.

var errSyntax = errors.New("malformed value")

func intValue(v driver.Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, errRange
		}
		return int64(x), nil
	case []byte:
		neg := len(x) > 0 && x[0] == '-'
		if neg {
			x = x[1:]
		}
		u, err := parseUint(x)
		if err != nil || u > math.MaxInt64+1 || (!neg && u > math.MaxInt64) {
			return 0, errRange
		}
		if neg {
			return -int64(u-1) - 1, nil
		}
		return int64(u), nil
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

func uintValue(v driver.Value) (uint64, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return 0, errRange
		}
		return uint64(x), nil
	case uint64:
		return x, nil
	case []byte:
		return parseUint(x)
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errSyntax
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errSyntax
		}
		hi, lo := bits.Mul64(n, 10)
		lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, errRange
		}
		n = lo
	}
	return n, nil
}

// bitsValue reads a BIT(n) value: up to 8 big-endian bytes.
func bitsValue(v driver.Value) (uint64, error) {
	b, ok := v.([]byte)
	if !ok {
		return uintValue(v)
	}
	if len(b) > 8 {
		return 0, errRange
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n, nil
}

func parseFloat(b []byte) (float64, error) {
	return strconv.ParseFloat(string(b), 64)
}

// parseDecimal reads "-123.4500" as the unscaled integer -1234500 (for
// scale 4), in 256-bit two's complement, little-endian limbs.
func parseDecimal(b []byte, scale int32) ([4]uint64, error) {
	var l [4]uint64
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	frac, seenDot, digits := int32(0), false, 0
	for _, c := range b {
		switch {
		case c == '.' && !seenDot:
			seenDot = true
			continue
		case c < '0' || c > '9':
			return l, errSyntax
		}
		if !mulAdd(&l, 10, uint64(c-'0')) {
			return l, errRange
		}
		digits++
		if seenDot {
			frac++
		}
	}
	if digits == 0 || frac > scale {
		return l, errSyntax
	}
	for ; frac < scale; frac++ {
		mulAdd(&l, 10, 0)
	}
	if neg {
		negate(&l)
	}
	return l, nil
}

// mulAdd sets l = l*m + a; false on overflow past 255 bits.
func mulAdd(l *[4]uint64, m, a uint64) bool {
	carry := a
	for i := range l {
		hi, lo := bits.Mul64(l[i], m)
		var c uint64
		l[i], c = bits.Add64(lo, carry, 0)
		carry = hi + c
	}
	return carry == 0 && l[3]>>63 == 0
}

func negate(l *[4]uint64) {
	var carry uint64 = 1
	for i := range l {
		l[i], carry = bits.Add64(^l[i], 0, carry)
	}
}

// digits reads n decimal digits at b[i:].
func digits(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseDate reads "YYYY-MM-DD" as days since 1970-01-01. A zero month or
// day, or a day the month does not have, is errZeroDate.
func parseDate(b []byte) (int64, error) {
	y, ok1 := digits(b, 0, 4)
	m, ok2 := digits(b, 5, 2)
	d, ok3 := digits(b, 8, 2)
	if !ok1 || !ok2 || !ok3 || b[4] != '-' || b[7] != '-' {
		return 0, errSyntax
	}
	if m < 1 || m > 12 || d < 1 {
		return 0, errZeroDate
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return 0, errZeroDate
	}
	return floorDiv(t.Unix(), 86400), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// parseDatetime reads "YYYY-MM-DD HH:MM:SS[.ffffff]" as microseconds since
// the epoch (the session's time zone is UTC, so TIMESTAMP values are UTC).
func parseDatetime(b []byte) (int64, error) {
	if len(b) < 19 || b[10] != ' ' {
		return 0, errSyntax
	}
	days, err := parseDate(b[:10])
	if err != nil {
		return 0, err
	}
	us, err := parseClock(b[11:], 2)
	if err != nil {
		return 0, err
	}
	return days*86400e6 + us, nil
}

// parseTime reads TIME, "[-]H…H:MM:SS[.ffffff]", as signed microseconds.
func parseTime(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	hourDigits := 0
	for hourDigits < len(b) && b[hourDigits] != ':' {
		hourDigits++
	}
	if hourDigits < 2 {
		return 0, errSyntax
	}
	us, err := parseClock(b, hourDigits)
	if neg {
		us = -us
	}
	return us, err
}

// parseClock reads "HH:MM:SS[.f…]" with hourDigits hour digits.
func parseClock(b []byte, hourDigits int) (int64, error) {
	h, ok1 := digits(b, 0, hourDigits)
	i := hourDigits
	m, ok2 := digits(b, i+1, 2)
	s, ok3 := digits(b, i+4, 2)
	if !ok1 || !ok2 || !ok3 || b[i] != ':' || b[i+3] != ':' || m > 59 || s > 59 {
		return 0, errSyntax
	}
	us := (int64(h)*3600 + int64(m)*60 + int64(s)) * 1e6
	frac, err := parseFraction(b[i+6:])
	return us + frac, err
}

// parseFraction reads ".ffffff" (up to 6 digits) as microseconds.
func parseFraction(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if b[0] != '.' || len(b) > 7 {
		return 0, errSyntax
	}
	f, ok := digits(b, 1, len(b)-1)
	if !ok {
		return 0, errSyntax
	}
	for n := len(b) - 1; n < 6; n++ {
		f *= 10
	}
	return int64(f), nil
}
