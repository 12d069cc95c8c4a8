package postgres

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

// NUMERIC's binary form (numeric_send): int16 ndigits, int16 weight,
// uint16 sign, int16 dscale, then ndigits base-10000 digits, most
// significant first; the value is Σ digit[i] × 10000^(weight−i), printed
// with dscale fractional digits. PostgreSQL strips leading and trailing
// zero digits, so ndigits is small.
const (
	numericPos       = 0x0000
	numericNeg       = 0x4000
	numericNaN       = 0xC000
	numericPInf      = 0xD000
	numericNInf      = 0xF000
	numericMaxDscale = 0x3FFF
)

var (
	errNumericSpecial = errors.New("numeric NaN or infinity has no Arrow decimal form; declare the column as bare numeric or cast it to text (col::text)")
	errNumericScale   = errors.New("numeric value has more fractional digits than the column's scale")
	errNumericRange   = errors.New("numeric value out of range of the column's Arrow decimal")
	errNumericWire    = errors.New("malformed binary numeric")
	errNumericText    = errors.New("invalid decimal text")
	errNumericWeight  = errors.New("numeric value out of range of PostgreSQL numeric")
)

// pow10 holds 10^0 … 10^19, every power of ten a uint64 holds.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// numericWire is a view of one binary NUMERIC value; it copies nothing.
type numericWire struct {
	weight, dscale int
	sign           uint16
	digits         []byte // big-endian uint16 per base-10000 digit
}

func readNumeric(b []byte) (numericWire, error) {
	if len(b) < 8 {
		return numericWire{}, errNumericWire
	}
	nd := int(binary.BigEndian.Uint16(b))
	n := numericWire{
		weight: int(int16(binary.BigEndian.Uint16(b[2:]))),
		sign:   binary.BigEndian.Uint16(b[4:]),
		dscale: int(binary.BigEndian.Uint16(b[6:])),
		digits: b[8:],
	}
	if len(n.digits) != 2*nd {
		return n, errNumericWire
	}
	return n, nil
}

func (n numericWire) ndigits() int { return len(n.digits) / 2 }

func (n numericWire) digit(i int) uint64 {
	return uint64(binary.BigEndian.Uint16(n.digits[2*i:]))
}

// digitAt is digit(i), zero outside the stored digits.
func (n numericWire) digitAt(i int) uint64 {
	if i < 0 || i >= n.ndigits() {
		return 0
	}
	return n.digit(i)
}

func (n numericWire) special() bool { return n.sign&0xC000 == 0xC000 }

// wide is a 256-bit unsigned magnitude, least significant word first: the
// unscaled value of a decimal128 or decimal256.
type wide [4]uint64

// mulAdd sets w = w×m + a and reports whether it fit.
func (w *wide) mulAdd(m, a uint64) bool {
	carry := a
	for i := range w {
		hi, lo := bits.Mul64(w[i], m)
		var c uint64
		w[i], c = bits.Add64(lo, carry, 0)
		carry = hi + c
	}
	return carry == 0
}

func (w *wide) mulPow10(k int) bool {
	for ; k > 0; k -= 19 {
		if !w.mulAdd(pow10[min(k, 19)], 0) {
			return false
		}
	}
	return true
}

// divmod sets w = w/d and returns the remainder.
func (w *wide) divmod(d uint64) uint64 {
	var r uint64
	for i := 3; i >= 0; i-- {
		w[i], r = bits.Div64(r, w[i], d)
	}
	return r
}

func (w *wide) isZero() bool { return w[0]|w[1]|w[2]|w[3] == 0 }

// unscaled returns |value| × 10^scale, exactly: digits below the scale
// must be zero.
func (n numericWire) unscaled(scale int) (wide, error) {
	if 4*n.weight+scale+4 <= 19 { // |value| × 10^scale < 10^19: uint64 arithmetic
		v, err := n.unscaled64(scale)
		return wide{v}, err
	}
	var w wide
	nd, i := n.ndigits(), 0
	for ; i < nd && 4*(n.weight-i)+scale >= 0; i++ {
		if !w.mulAdd(10000, n.digit(i)) {
			return w, errNumericRange
		}
	}
	// Groups so far are integers at 10^(4(weight−i+1)+scale) and up.
	if i > 0 && !w.mulPow10(4*(n.weight-i+1)+scale) {
		return w, errNumericRange
	}
	for ; i < nd; i++ {
		k, d := -(4*(n.weight-i) + scale), n.digit(i)
		if k >= 4 || d%pow10[k] != 0 {
			if d != 0 {
				return w, errNumericScale
			}
			continue
		}
		if !w.mulAdd(1, d/pow10[k]) {
			return w, errNumericRange
		}
	}
	return w, nil
}

// unscaled64 is unscaled for values below 10^19, the common case.
func (n numericWire) unscaled64(scale int) (uint64, error) {
	var v uint64
	for i := range n.ndigits() {
		e, d := 4*(n.weight-i)+scale, n.digit(i)
		switch {
		case e >= 0:
			v += d * pow10[e]
		case e > -4 && d%pow10[-e] == 0:
			v += d / pow10[-e]
		case d != 0:
			return 0, errNumericScale
		}
	}
	return v, nil
}

func numericToDecimal128(b []byte, scale int) (decimal128.Num, error) {
	if v, neg, ok, err := numericToUint64(b, scale); ok || err != nil {
		n := decimal128.New(0, v)
		if neg {
			n = n.Negate()
		}
		return n, err
	}
	w, neg, err := numericToWide(b, scale)
	if err != nil {
		return decimal128.Num{}, err
	}
	if w[2]|w[3] != 0 || w[1] >= 1<<63 {
		return decimal128.Num{}, errNumericRange
	}
	v := decimal128.New(int64(w[1]), w[0])
	if neg {
		v = v.Negate()
	}
	return v, nil
}

func numericToDecimal256(b []byte, scale int) (decimal256.Num, error) {
	w, neg, err := numericToWide(b, scale)
	if err != nil {
		return decimal256.Num{}, err
	}
	if w[3] >= 1<<63 {
		return decimal256.Num{}, errNumericRange
	}
	v := decimal256.New(w[3], w[2], w[1], w[0])
	if neg {
		v = v.Negate()
	}
	return v, nil
}

// numericToUint64 is the fast path of numericToDecimal128: ok is false
// when the value may not fit a uint64.
func numericToUint64(b []byte, scale int) (v uint64, neg, ok bool, err error) {
	n, err := readNumeric(b)
	switch {
	case err != nil:
		return 0, false, false, err
	case n.special():
		return 0, false, false, errNumericSpecial
	case 4*n.weight+scale+4 > 19:
		return 0, false, false, nil
	}
	v, err = n.unscaled64(scale)
	return v, n.sign == numericNeg, true, err
}

func numericToWide(b []byte, scale int) (wide, bool, error) {
	n, err := readNumeric(b)
	if err != nil {
		return wide{}, false, err
	}
	if n.special() {
		return wide{}, false, errNumericSpecial
	}
	w, err := n.unscaled(scale)
	return w, n.sign == numericNeg, err
}

// appendNumericText appends the value as numeric_out prints it: exact,
// with dscale fractional digits; NaN, Infinity and -Infinity by name.
func appendNumericText(dst, b []byte) ([]byte, error) {
	n, err := readNumeric(b)
	if err != nil {
		return dst, err
	}
	switch n.sign {
	case numericNaN:
		return append(dst, "NaN"...), nil
	case numericPInf:
		return append(dst, "Infinity"...), nil
	case numericNInf:
		return append(dst, "-Infinity"...), nil
	case numericNeg:
		dst = append(dst, '-')
	}
	dst = n.appendInteger(dst)
	if n.dscale == 0 {
		return dst, nil
	}
	dst = append(dst, '.')
	end := len(dst) + n.dscale
	for i := n.weight + 1; len(dst) < end; i++ {
		dst = appendDigits(dst, n.digitAt(i), 4)
	}
	return dst[:end], nil
}

func (n numericWire) appendInteger(dst []byte) []byte {
	if n.weight < 0 {
		return append(dst, '0')
	}
	dst = strconv.AppendUint(dst, n.digitAt(0), 10)
	for i := 1; i <= n.weight; i++ {
		dst = appendDigits(dst, n.digitAt(i), 4)
	}
	return dst
}

// appendDigits appends v zero-padded to width decimal digits.
func appendDigits(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, buf[:width]...)
}

// appendDecimal appends w in decimal, without leading zeros.
func (w wide) appendDecimal(dst []byte) []byte {
	var chunks [5]uint64 // 2^256 < 10^78 ≤ 10^(5×19)
	n := 0
	for n == 0 || !w.isZero() {
		chunks[n] = w.divmod(pow10[19])
		n++
	}
	dst = strconv.AppendUint(dst, chunks[n-1], 10)
	for i := n - 2; i >= 0; i-- {
		dst = appendDigits(dst, chunks[i], 19)
	}
	return dst
}

func floorDiv4(x int) int {
	if x >= 0 {
		return x / 4
	}
	return -((-x + 3) / 4)
}

func appendNumericHeader(dst []byte, ndigits, weight int, sign uint16, dscale int) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(ndigits))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	return binary.BigEndian.AppendUint16(dst, uint16(dscale))
}

// appendNumericDigits appends the binary NUMERIC of ±digits × 10^−scale,
// digits being ASCII decimal digits. A negative scale appends zeros.
func appendNumericDigits(dst []byte, neg bool, digits []byte, scale int) ([]byte, error) {
	dscale := max(scale, 0)
	if dscale > numericMaxDscale {
		return dst, errNumericWeight
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits, scale = digits[:len(digits)-1], scale-1
	}
	if len(digits) == 0 {
		return appendNumericHeader(dst, 0, 0, numericPos, dscale), nil
	}
	point := len(digits) - scale // digits before the decimal point
	weight, last := floorDiv4(point-1), floorDiv4(point-len(digits))
	if weight > 32767 || last < -32768 {
		return dst, errNumericWeight
	}
	sign := uint16(numericPos)
	if neg {
		sign = numericNeg
	}
	dst = appendNumericHeader(dst, weight-last+1, weight, sign, dscale)
	return appendGroups(dst, digits, point, weight), nil
}

// appendGroups packs decimal digits into base-10000 digits aligned on the
// decimal point; digit j has the decimal exponent point−1−j.
func appendGroups(dst, digits []byte, point, weight int) []byte {
	g, acc := weight, uint64(0)
	for j, c := range digits {
		x := point - 1 - j
		if floorDiv4(x) < g {
			dst = binary.BigEndian.AppendUint16(dst, uint16(acc))
			g, acc = g-1, 0
		}
		acc += uint64(c-'0') * pow10[x-4*g]
	}
	return binary.BigEndian.AppendUint16(dst, uint16(acc))
}

// appendNumericWide appends ±w × 10^−scale; scratch is reused for the
// digits and returned.
func appendNumericWide(dst, scratch []byte, neg bool, w wide, scale int) ([]byte, []byte, error) {
	scratch = w.appendDecimal(scratch[:0])
	dst, err := appendNumericDigits(dst, neg, scratch, scale)
	return dst, scratch, err
}

func appendNumericSpecial(dst []byte, sign uint16) []byte {
	return appendNumericHeader(dst, 0, 0, sign, 0)
}

// appendNumericParse appends the binary NUMERIC of decimal text such as
// "-12.50", "1e-3", "NaN" or "Infinity" (numeric_in's syntax, without
// underscores). scratch is reused for the digits and returned.
func appendNumericParse(dst, scratch []byte, s string) ([]byte, []byte, error) {
	s = strings.TrimSpace(s)
	if sign, ok := numericSpecialName(s); ok {
		return appendNumericSpecial(dst, sign), scratch, nil
	}
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	digits, scale, rest := scanDecimal(scratch[:0], s)
	if len(digits) == 0 {
		return dst, digits, errNumericText
	}
	if rest != "" {
		exp, err := parseExponent(rest)
		if err != nil {
			return dst, digits, err
		}
		scale -= exp
	}
	dst, err := appendNumericDigits(dst, neg, digits, scale)
	return dst, digits, err
}

func numericSpecialName(s string) (uint16, bool) {
	switch {
	case strings.EqualFold(s, "nan"):
		return numericNaN, true
	case strings.EqualFold(s, "infinity"), strings.EqualFold(s, "+infinity"),
		strings.EqualFold(s, "inf"), strings.EqualFold(s, "+inf"):
		return numericPInf, true
	case strings.EqualFold(s, "-infinity"), strings.EqualFold(s, "-inf"):
		return numericNInf, true
	}
	return 0, false
}

// scanDecimal appends the digits of "123.45…" to digits and returns how
// many followed the point and the unscanned rest.
func scanDecimal(digits []byte, s string) ([]byte, int, string) {
	scale, point := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if point {
				scale++
			}
		case c == '.' && !point:
			point = true
		default:
			return digits, scale, s[i:]
		}
	}
	return digits, scale, ""
}

func parseExponent(s string) (int, error) {
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0, errNumericText
	}
	exp, err := strconv.Atoi(s[1:])
	if err != nil || exp > 1<<20 || exp < -(1<<20) {
		return 0, errNumericText
	}
	return exp, nil
}
