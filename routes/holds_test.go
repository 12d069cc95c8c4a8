package routes

import (
	"math/big"
	"strings"
	"testing"
)

func intType(width int, signed bool) ColumnType {
	return ColumnType{Kind: KindInt, Bits: IntBits(width, signed)}
}

func decType(p, s int) ColumnType   { return ColumnType{Kind: KindDecimal, Precision: p, Scale: s} }
func floatType(bits int) ColumnType { return ColumnType{Kind: KindFloat, Bits: bits} }
func charType(n int) ColumnType     { return ColumnType{Kind: KindText, Width: n, Trimmed: true} }
func binFixed(n int) ColumnType     { return ColumnType{Kind: KindBinary, Width: n} }
func tsType(digits int, zone string) ColumnType {
	return ColumnType{Kind: KindTimestamp, Digits: digits, Zone: zone}
}

var (
	boolType = ColumnType{Kind: KindBool}
	textType = ColumnType{Kind: KindText}
	binType  = ColumnType{Kind: KindBinary}
	dateType = ColumnType{Kind: KindDate}
	jsonType = ColumnType{Kind: KindJSON}
	uuidType = ColumnType{Kind: KindUUID}
	other    = ColumnType{}
	noCasts  = Casts{}
	allCasts = Casts{FloatText: true, BoolNumber: true}
)

// TestHolds_Integers: every integer width and signedness into every
// other holds (a value out of range fails loudly); into a float exactly
// when the largest value of the width survives the round trip; into a
// decimal always (too many digits fail loudly).
func TestHolds_Integers(t *testing.T) {
	widths := []int{8, 16, 24, 32, 64}
	for _, sw := range widths {
		for _, ss := range []bool{true, false} {
			src := intType(sw, ss)
			for _, dw := range widths {
				for _, ds := range []bool{true, false} {
					if !Holds(intType(dw, ds), src, noCasts) {
						t.Errorf("int%d (signed %v) into int%d (signed %v): false, want true", sw, ss, dw, ds)
					}
				}
			}
			largest := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(src.Bits)), big.NewInt(1))
			f, _ := new(big.Float).SetInt(largest).Float64()
			f32, _ := new(big.Float).SetInt(largest).Float32()
			exact64 := new(big.Float).SetFloat64(f).Cmp(new(big.Float).SetInt(largest)) == 0
			exact32 := new(big.Float).SetFloat64(float64(f32)).Cmp(new(big.Float).SetInt(largest)) == 0
			if got := Holds(floatType(64), src, noCasts); got != exact64 {
				t.Errorf("int%d (signed %v) into a double: %v, want %v", sw, ss, got, exact64)
			}
			if got := Holds(floatType(32), src, noCasts); got != exact32 {
				t.Errorf("int%d (signed %v) into a float: %v, want %v", sw, ss, got, exact32)
			}
			for _, d := range []ColumnType{decType(0, 0), decType(5, 0), decType(38, 9), decType(76, 38)} {
				if !Holds(d, src, noCasts) {
					t.Errorf("int%d into decimal(%d,%d): false, want true", sw, d.Precision, d.Scale)
				}
			}
			for _, d := range []ColumnType{boolType, dateType, tsType(6, ""), binType, jsonType, uuidType} {
				if Holds(d, src, allCasts) {
					t.Errorf("int%d into kind %d: true, want false", sw, d.Kind)
				}
			}
			if !Holds(textType, src, noCasts) {
				t.Errorf("int%d into text: false, want true", sw)
			}
		}
	}
}

// TestHolds_Decimals: by precision and scale, a decimal holds another
// when its scale is no smaller (integer digits fail loudly); an integer
// holds a decimal of scale 0 (or less); a float holds one of at most 6
// (float) or 15 (double) digits; an unbounded decimal (precision 0)
// holds every decimal and is held only by another.
func TestHolds_Decimals(t *testing.T) {
	for sp := 1; sp <= 76; sp += 5 {
		for ss := 0; ss <= sp && ss <= 38; ss += 3 {
			src := decType(sp, ss)
			for dp := 1; dp <= 76; dp += 7 {
				for ds := 0; ds <= dp && ds <= 38; ds += 2 {
					if got, want := Holds(decType(dp, ds), src, noCasts), ss <= ds; got != want {
						t.Errorf("decimal(%d,%d) into decimal(%d,%d): %v, want %v", sp, ss, dp, ds, got, want)
					}
				}
			}
			if !Holds(decType(0, 0), src, noCasts) {
				t.Errorf("decimal(%d,%d) into numeric: false, want true", sp, ss)
			}
			if Holds(src, decType(0, 0), noCasts) {
				t.Errorf("numeric into decimal(%d,%d): true, want false", sp, ss)
			}
			if got, want := Holds(intType(64, true), src, noCasts), ss == 0; got != want {
				t.Errorf("decimal(%d,%d) into bigint: %v, want %v", sp, ss, got, want)
			}
			if got, want := Holds(floatType(64), src, noCasts), sp <= 15; got != want {
				t.Errorf("decimal(%d,%d) into a double: %v, want %v", sp, ss, got, want)
			}
			if got, want := Holds(floatType(32), src, noCasts), sp <= 6; got != want {
				t.Errorf("decimal(%d,%d) into a float: %v, want %v", sp, ss, got, want)
			}
			if !Holds(textType, src, noCasts) {
				t.Errorf("decimal(%d,%d) into text: false, want true", sp, ss)
			}
		}
	}
	for _, d := range []ColumnType{intType(64, true), floatType(64), floatType(32)} {
		if Holds(d, decType(0, 0), noCasts) {
			t.Errorf("numeric into %+v: true, want false", d)
		}
	}
	if !Holds(intType(32, true), decType(3, -2), noCasts) {
		t.Error("decimal(3,-2) (integers) into an integer: false, want true")
	}
}

// TestHolds_Floats: a float into a float no narrower; never into an
// integer or a decimal; into text only where the destination writes its
// shortest exact digits.
func TestHolds_Floats(t *testing.T) {
	for _, sb := range []int{32, 64} {
		src := floatType(sb)
		for _, db := range []int{32, 64} {
			if got, want := Holds(floatType(db), src, noCasts), sb <= db; got != want {
				t.Errorf("float%d into float%d: %v, want %v", sb, db, got, want)
			}
		}
		for _, w := range []int{8, 16, 32, 64} {
			if Holds(intType(w, true), src, allCasts) || Holds(intType(w, false), src, allCasts) {
				t.Errorf("float%d into int%d: true, want false", sb, w)
			}
		}
		for _, d := range []ColumnType{decType(0, 0), decType(10, 2), decType(76, 38)} {
			if Holds(d, src, allCasts) {
				t.Errorf("float%d into decimal(%d,%d): true, want false", sb, d.Precision, d.Scale)
			}
		}
		if Holds(textType, src, noCasts) || !Holds(textType, src, Casts{FloatText: true}) {
			t.Errorf("float%d into text: want Casts.FloatText", sb)
		}
	}
}

// TestHolds_Times: timestamps and times by fractional digits (0–9) and
// zone; dates into wall-clock timestamps only; intervals by digits and
// field restriction.
func TestHolds_Times(t *testing.T) {
	zones := []string{"", "UTC", "Europe/Berlin"}
	for _, kind := range []TypeKind{KindTimestamp, KindTime} {
		for sd := 0; sd <= 9; sd++ {
			for _, sz := range zones {
				src := ColumnType{Kind: kind, Digits: sd, Zone: sz}
				for dd := 0; dd <= 9; dd++ {
					for _, dz := range zones {
						dest := ColumnType{Kind: kind, Digits: dd, Zone: dz}
						if got, want := Holds(dest, src, noCasts), sd <= dd && sz == dz; got != want {
							t.Errorf("kind %d (%d digits, zone %q) into (%d, %q): %v, want %v", kind, sd, sz, dd, dz, got, want)
						}
					}
				}
				if Holds(dateType, src, allCasts) {
					t.Errorf("kind %d into a date: true, want false", kind)
				}
				if !Holds(textType, src, noCasts) {
					t.Errorf("kind %d into text: false, want true", kind)
				}
			}
		}
	}
	for _, z := range zones {
		if got, want := Holds(tsType(0, z), dateType, noCasts), z == ""; got != want {
			t.Errorf("date into timestamp(0) zone %q: %v, want %v", z, got, want)
		}
		if Holds(ColumnType{Kind: KindTime, Digits: 6, Zone: z}, dateType, noCasts) {
			t.Errorf("date into a time: true, want false")
		}
	}
	if Holds(tsType(6, ""), ColumnType{Kind: KindTime, Digits: 6}, noCasts) || Holds(ColumnType{Kind: KindTime, Digits: 6}, tsType(6, ""), noCasts) {
		t.Error("a time and a timestamp: one holds the other, want neither")
	}
	iv := func(d int, f string) ColumnType { return ColumnType{Kind: KindInterval, Digits: d, Fields: f} }
	tests := []struct {
		dest, src ColumnType
		want      bool
	}{
		{iv(6, ""), iv(3, ""), true}, {iv(3, ""), iv(6, ""), false}, {iv(6, ""), iv(0, "second"), true},
		{iv(0, "second"), iv(6, ""), false}, {iv(6, "day"), iv(6, ""), false}, {iv(6, "day"), iv(6, "day"), true},
		{iv(6, ""), tsType(6, ""), false},
	}
	for _, tt := range tests {
		if got := Holds(tt.dest, tt.src, noCasts); got != tt.want {
			t.Errorf("interval %+v into %+v: %v, want %v", tt.src, tt.dest, got, tt.want)
		}
	}
}

// TestHolds_Others: booleans, text, bytes, JSON, UUID, and the types
// left to the insert.
func TestHolds_Others(t *testing.T) {
	tests := []struct {
		name      string
		dest, src ColumnType
		casts     Casts
		want      bool
	}{
		{"bool into bool", boolType, boolType, noCasts, true},
		{"int into bool", boolType, intType(8, true), allCasts, false},
		{"text into bool", boolType, textType, allCasts, false},
		{"other into bool", boolType, other, allCasts, false},
		{"bool into int, no cast", intType(32, true), boolType, noCasts, false},
		{"bool into int, 0 or 1", intType(32, true), boolType, Casts{BoolNumber: true}, true},
		{"bool into decimal, 0 or 1", decType(10, 2), boolType, Casts{BoolNumber: true}, true},
		{"bool into float, 0 or 1", floatType(32), boolType, Casts{BoolNumber: true}, true},
		{"bool into decimal, no cast", decType(10, 2), boolType, noCasts, false},
		{"bool into text", textType, boolType, noCasts, true},
		{"text into text (length fails loudly)", textType, textType, noCasts, true},
		{"json into text", textType, jsonType, noCasts, true},
		{"uuid into text", textType, uuidType, noCasts, true},
		{"date into text", textType, dateType, noCasts, true},
		{"bytes into text", textType, binType, allCasts, false},
		{"text into bytes", binType, textType, allCasts, false},
		{"bytes into bytes", binType, binType, noCasts, true},
		{"text into int", intType(64, true), textType, allCasts, false},
		{"text into decimal", decType(0, 0), textType, allCasts, false},
		{"text into date", dateType, textType, allCasts, false},
		{"text into json", jsonType, textType, allCasts, false},
		{"text into uuid", uuidType, textType, allCasts, false},
		{"json into json", jsonType, jsonType, noCasts, true},
		{"uuid into uuid", uuidType, uuidType, noCasts, true},
		{"date into date", dateType, dateType, noCasts, true},
		{"timestamp into date", dateType, tsType(0, ""), allCasts, false},
		{"other into other", other, other, noCasts, true},
		{"other into int", intType(32, true), other, noCasts, true},
		{"text into other", other, textType, noCasts, true},
		{"float into other", other, floatType(64), noCasts, true},
		{"text into char(5)", charType(5), textType, allCasts, false},
		{"char(3) into char(5)", charType(5), charType(3), noCasts, true},
		{"char(5) into char(3)", charType(3), charType(5), noCasts, false},
		{"char(3) into text", textType, charType(3), noCasts, true},
		{"other into char(5)", charType(5), other, noCasts, false},
		{"int into char(5)", charType(5), intType(32, true), allCasts, false},
		{"bytes into binary(4)", binFixed(4), binType, noCasts, false},
		{"binary(2) into binary(4)", binFixed(4), binFixed(2), noCasts, false},
		{"binary(4) into binary(4)", binFixed(4), binFixed(4), noCasts, true},
		{"char(4) into binary(4)", binFixed(4), charType(4), noCasts, false},
		{"NUL-padded text into char(5)", charType(5), ColumnType{Kind: KindText, Width: 5}, noCasts, false},
		{"binary(4) into bytes", binType, binFixed(4), noCasts, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Holds(tt.dest, tt.src, tt.casts); got != tt.want {
				t.Errorf("Holds(%+v, %+v, %+v) = %v, want %v", tt.dest, tt.src, tt.casts, got, tt.want)
			}
		})
	}
}

// TestLossyError: bad input naming the table, column, both types and the
// statement to run.
func TestLossyError(t *testing.T) {
	err := LossyError(TableRef{Schema: "s", Name: "t"}, "v", "double precision", "integer", "ALTER TABLE s.t ALTER COLUMN v TYPE double precision")
	msg := err.Error()
	for _, want := range []string{"s.t.v", "double precision", "integer", "ALTER TABLE s.t ALTER COLUMN v TYPE double precision", "--mode replace"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q: want %q in it", msg, want)
		}
	}
	if !err.Is(ErrBadInput) {
		t.Error("not bad input")
	}
}

// TestCheckLength: a destination's declared length is checked value by
// value unless the source's own is no longer; a column of no declared
// length is never checked.
func TestCheckLength(t *testing.T) {
	varchar := func(n int) ColumnType { return ColumnType{Kind: KindText, Length: n} }
	varbinary := func(n int) ColumnType { return ColumnType{Kind: KindBinary, Length: n} }
	tests := []struct {
		name      string
		dest, src ColumnType
		want      int
	}{
		{"text into varchar", varchar(3), textType, 3},
		{"varchar into varchar of its length", varchar(3), varchar(3), 0},
		{"shorter varchar", varchar(3), varchar(2), 0},
		{"longer varchar", varchar(3), varchar(5), 3},
		{"char into varchar", varchar(3), ColumnType{Kind: KindText, Width: 2, Trimmed: true, Length: 2}, 0},
		{"an integer into varchar", varchar(3), intType(32, true), 3},
		{"bytes into varbinary", varbinary(3), binType, 3},
		{"varbinary into varbinary", varbinary(3), varbinary(3), 0},
		{"varchar of as many characters into varbinary", varbinary(3), varchar(3), 3}, // a character may be 4 bytes
		{"text into text", textType, textType, 0},
		{"text into 255 bytes", ColumnType{Kind: KindText, Length: 255, Bytes: true}, textType, 255},
		{"255 characters into 255 bytes", ColumnType{Kind: KindText, Length: 255, Bytes: true}, varchar(255), 255},
		{"255 bytes into 255 bytes", ColumnType{Kind: KindText, Length: 255, Bytes: true}, ColumnType{Kind: KindText, Length: 255, Bytes: true}, 0},
		{"varchar into text", textType, varchar(3), 0},
	}
	for _, tt := range tests {
		if got := CheckLength(tt.dest, tt.src); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestTooLongError: bad input naming the table, column, its type, the
// value's length and unit, and the statement to run.
func TestTooLongError(t *testing.T) {
	err := TooLongError(TableRef{Schema: "s", Name: "t"}, "v", "varbinary(3)", 6, true, false, "ALTER TABLE s.t MODIFY COLUMN v varbinary(6)")
	msg := err.Error()
	for _, want := range []string{"s.t.v", "varbinary(3)", "6 bytes", "ALTER TABLE s.t MODIFY COLUMN v varbinary(6)", "nothing was written"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q: want %q in it", msg, want)
		}
	}
	if !err.Is(ErrBadInput) {
		t.Error("not bad input")
	}
}
