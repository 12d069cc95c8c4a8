package postgres

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// numericWireOf builds numeric_send output by hand.
func numericWireOf(weight int, sign uint16, dscale int, digits ...uint16) []byte {
	b := appendNumericHeader(nil, len(digits), weight, sign, dscale)
	for _, d := range digits {
		b = be.AppendUint16(b, d)
	}
	return b
}

func TestNumeric_TextRoundTrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"0.00", "0.00"},
		{"-0.0001", "-0.0001"},
		{"12345678.91", "12345678.91"},
		{"1e5", "100000"},
		{"1.5e-3", "0.0015"},
		{"123.4500", "123.4500"},
		{"  +7 ", "7"},
		{"NaN", "NaN"},
		{"-Infinity", "-Infinity"},
		{"infinity", "Infinity"},
		{".5", "0.5"},
		{"100000000", "100000000"},
		{"0.000000001", "0.000000001"},
		{strings.Repeat("9", 1000) + "." + strings.Repeat("1", 30), strings.Repeat("9", 1000) + "." + strings.Repeat("1", 30)},
	}
	for _, tt := range tests {
		wire, _, err := appendNumericParse(nil, nil, tt.in)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.in, err)
		}
		got, err := appendNumericText(nil, wire)
		if err != nil || string(got) != tt.want {
			t.Errorf("%q → %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "abc", "1e", "1e99999999", "--1"} {
		if _, _, err := appendNumericParse(nil, nil, bad); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
}

func TestNumeric_Decimal128(t *testing.T) {
	tests := []struct {
		wire  []byte
		scale int
		want  string
		err   error
	}{
		{numericWireOf(1, numericPos, 2, 1234, 5678, 9100), 2, "12345678.91", nil},
		{numericWireOf(-1, numericNeg, 4, 1), 4, "-0.0001", nil},
		{numericWireOf(0, numericPos, 0), 2, "0.00", nil},
		{numericWireOf(2, numericPos, 0, 1), 0, "100000000", nil},
		{numericWireOf(-1, numericPos, 2, 5000), 2, "0.50", nil},
		{numericWireOf(-1, numericPos, 4, 1), 2, "", errNumericScale},
		{numericWireOf(-3, numericPos, 12, 1), 2, "", errNumericScale},
		{numericWireOf(0, numericNaN, 0), 2, "", errNumericSpecial},
		{numericWireOf(10, numericPos, 0, 1), 0, "", errNumericRange},
	}
	for _, tt := range tests {
		got, err := numericToDecimal128(tt.wire, tt.scale)
		if !errors.Is(err, tt.err) {
			t.Errorf("%x: err %v, want %v", tt.wire, err, tt.err)
			continue
		}
		if err == nil && got.ToString(int32(tt.scale)) != tt.want {
			t.Errorf("%x: %s, want %s", tt.wire, got.ToString(int32(tt.scale)), tt.want)
		}
	}
}

// TestNumeric_DecimalRoundTrip: decimal → wire → decimal at the extremes
// of both widths.
func TestNumeric_DecimalRoundTrip(t *testing.T) {
	max38 := decimal128.GetMaxValue(38)
	for _, v := range []decimal128.Num{max38, max38.Negate(), decimal128.FromI64(-1), decimal128.FromI64(0), decimal128.FromU64(math.MaxUint64)} {
		for _, scale := range []int{0, 10, 38} {
			e := &encoder{buf: nil}
			enc := encDecimal128(scale)
			if err := enc(e, decimal128Array(t, v, scale), 0); err != nil {
				t.Fatal(err)
			}
			got, err := numericToDecimal128(e.buf, scale)
			if err != nil || got != v {
				t.Errorf("%s scale %d: got %s, %v", v.ToString(int32(scale)), scale, got.ToString(int32(scale)), err)
			}
		}
	}
	max76 := decimal256.GetMaxValue(76)
	for _, v := range []decimal256.Num{max76, max76.Negate(), decimal256.FromI64(-12345)} {
		w, neg := wideOf256(v)
		buf, _, err := appendNumericWide(nil, nil, neg, w, 20)
		if err != nil {
			t.Fatal(err)
		}
		got, err := numericToDecimal256(buf, 20)
		if err != nil || got != v {
			t.Errorf("%s: got %s, %v", v.ToString(20), got.ToString(20), err)
		}
	}
}

func wideOf256(v decimal256.Num) (wide, bool) {
	neg := v.Sign() < 0
	if neg {
		v = v.Negate()
	}
	return wide(v.Array()), neg
}

func decimal128Array(t *testing.T, v decimal128.Num, scale int) arrow.Array {
	t.Helper()
	typ := &arrow.Decimal128Type{Precision: 38, Scale: int32(scale)}
	b := array.NewDecimal128Builder(memory.DefaultAllocator, typ)
	defer b.Release()
	b.Append(v)
	a := b.NewArray()
	t.Cleanup(a.Release)
	return a
}

func TestNumeric_NegativeScaleWire(t *testing.T) {
	// 12300 written with scale -2: digits "123".
	buf, err := appendNumericDigits(nil, false, []byte("123"), -2)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := appendNumericText(nil, buf)
	if string(got) != "12300" {
		t.Fatalf("got %s", got)
	}
}
