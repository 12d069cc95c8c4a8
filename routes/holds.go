package routes

import "fmt"

// The lossy-cast rule: between two append, merge or log_based runs a
// source column's type may change (an integer altered to a double). The
// rows are then written into the destination's existing column, whose
// server (or weir's encoder) converts each value to it — and some
// conversions round without an error (1.5 into an integer is 2, 1.255
// into a decimal(10,2) is 1.26, microseconds into a timestamp(3) lose
// digits). Holds is that rule, once, over ColumnType: every destination
// maps its own type names to a ColumnType and refuses what does not hold
// with LossyError.

// TypeKind is a column type's family as Holds compares it.
type TypeKind uint8

// The kinds Holds tells apart.
const (
	KindOther     TypeKind = iota // not compared: left to the destination's insert (arrays, enums, geometry, …)
	KindBool                      // true or false
	KindInt                       // an integer of Bits bits of magnitude
	KindFloat                     // a binary float of Bits (32 or 64) bits
	KindDecimal                   // an exact decimal of Precision digits, Scale of them after the point
	KindText                      // a string; its length is not compared by Holds (CheckLength)
	KindBinary                    // bytes
	KindDate                      // a calendar day
	KindTime                      // a time of day (or MySQL's TIME) with Digits fractional digits
	KindTimestamp                 // a date and time with Digits fractional digits, in Zone
	KindInterval                  // a duration of months, days and Digits fractional seconds
	KindJSON                      // a JSON document
	KindUUID                      // a 128-bit UUID
)

// ColumnType is a column's type as the lossy-cast rule sees it, in no
// destination's spelling. The zero value is KindOther.
type ColumnType struct {
	Kind TypeKind
	// Bits: KindInt, the bits of magnitude a value may use — 31 for a
	// signed 32-bit integer, 32 for an unsigned one (IntBits); KindFloat,
	// 32 or 64.
	Bits int
	// Precision and Scale: KindDecimal's digits in all and after the
	// point; Precision 0 is a decimal of any size (PostgreSQL's numeric).
	Precision, Scale int
	// Digits: KindTime, KindTimestamp and KindInterval, the fractional
	// second digits kept (6 for microseconds).
	Digits int
	// Zone: KindTime and KindTimestamp, "" for a wall-clock value (SQL's
	// timestamp without time zone), else the zone its instants are kept
	// in ("UTC" for timestamptz, BigQuery's TIMESTAMP).
	Zone string
	// Fields: KindInterval, a restriction to some fields ("day", "hour to
	// minute"), which drops the others; "" none.
	Fields string
	// Width: KindText or KindBinary of a fixed width, a shorter value
	// padded to it on write; 0 for one of any length. Trimmed: the padding
	// is cut on read, and with it the value's own trailing pad characters
	// (MySQL's char(n): 'a  ' reads back as 'a'); else the padding is kept
	// (MySQL's binary(n), ClickHouse's FixedString(n): 'ab' reads back as
	// 'ab\0\0\0').
	Width   int
	Trimmed bool
	// Length: KindText or KindBinary of a declared maximum length
	// (varchar(n), char(n), varbinary(n), BigQuery's STRING(n)), in
	// characters (bytes for KindBinary, or when Bytes: MySQL's TINYTEXT
	// and TEXT, 255 and 65535 bytes); 0 for none. Holds does not compare
	// it: CheckLength does, value by value.
	Length int
	Bytes  bool
}

// inBytes: Length counts bytes.
func (c ColumnType) inBytes() bool { return c.Bytes || c.Kind == KindBinary }

// IntBits is the bits of magnitude of an integer of width bits.
func IntBits(width int, signed bool) int {
	if signed {
		return width - 1
	}
	return width
}

// Casts are the conversions in which destinations differ: what the
// destination's server (or weir's encoder for it) does with a value of
// one kind written into a column of another.
type Casts struct {
	// FloatText: a float written into a text column keeps its shortest
	// exact digits (PostgreSQL's float8out, weir's encoders). MySQL and
	// MariaDB keep 15 digits: 0.30000000000000004 is stored as 0.3.
	FloatText bool
	// BoolNumber: a boolean written into a number is 0 or 1 (MySQL's
	// tinyint(1), ClickHouse). PostgreSQL and BigQuery have no such
	// assignment cast.
	BoolNumber bool
}

// Holds reports whether a destination column of type dest stores every
// value of a source column of type src exactly, or refuses one it cannot
// with an error (an integer out of range, a decimal of too many integer
// digits: each fails loudly, so it holds; a string too long for a
// varchar(n) is CheckLength's). It is asked after a destination widened
// what it can (a decimal's precision, a varchar's length, an integer's
// width). What does not hold:
//
//   - a float into an integer or a decimal (a double's digits are not a
//     decimal's: 0.1 + 0.2), a decimal with a scale into an integer, a
//     decimal of more scale into a decimal of less;
//   - an integer into a float whose mantissa is narrower (an int64 into a
//     double: 2^53 + 1), a decimal of more digits than the float keeps
//     (6 for a float, 15 for a double), a double into a float;
//   - a timestamp into a date, into fewer fractional digits, or into
//     another zone (a wall-clock value into one of instants, or back);
//     a date into a timestamp that is not a wall clock; the same for
//     times and intervals (an interval restricted to some fields);
//   - anything but a boolean into a boolean; bytes into text, text into
//     bytes; a float into text, or a boolean into a number, unless Casts
//     say the destination writes it exactly;
//   - one kind into another (text into an integer, JSON into a UUID);
//   - anything into a fixed-width type (Width) but its own kind of the
//     same padding and width, or of less width when the padding is
//     trimmed: MySQL's char(3) into char(5) holds, text into it does not.
//
// A KindOther source is left to the destination's insert, except into a
// boolean or a fixed-width type.
func Holds(dest, src ColumnType, c Casts) bool {
	switch {
	case dest == src:
		return true
	case dest.Kind == KindBool:
		return src.Kind == KindBool
	case dest.Width > 0:
		return src.Kind == dest.Kind && src.Trimmed == dest.Trimmed && src.Width > 0 &&
			(src.Width == dest.Width || dest.Trimmed && src.Width < dest.Width)
	case dest.Kind == KindOther || src.Kind == KindOther:
		return true
	case src.Kind == KindBool && (dest.Kind == KindInt || dest.Kind == KindDecimal || dest.Kind == KindFloat):
		return c.BoolNumber
	case dest.Kind == KindText:
		return src.Kind != KindBinary && (src.Kind != KindFloat || c.FloatText)
	case dest.Kind != src.Kind:
		return dest.Kind == KindTimestamp && src.Kind == KindDate && dest.Zone == "" ||
			dest.Kind == KindInt && src.Kind == KindDecimal && src.Precision > 0 && src.Scale <= 0 ||
			dest.Kind == KindDecimal && src.Kind == KindInt ||
			dest.Kind == KindFloat && floatHolds(dest, src)
	}
	switch dest.Kind { // one kind
	case KindDecimal:
		return dest.Precision == 0 || src.Precision > 0 && src.Scale <= dest.Scale
	case KindFloat:
		return src.Bits <= dest.Bits
	case KindTime, KindTimestamp:
		return src.Zone == dest.Zone && src.Digits <= dest.Digits
	case KindInterval:
		return dest.Fields == "" && src.Digits <= dest.Digits
	}
	return true // a wider integer, or one that fails loudly on overflow; text; bytes; date; JSON; UUID
}

// floatHolds is Holds for an integer or a decimal into a float.
func floatHolds(dest, src ColumnType) bool {
	mantissa, digits := 24, 6 // FLT_DIG: every 6-digit decimal round trips through a float
	if dest.Bits == 64 {
		mantissa, digits = 53, 15 // DBL_DIG
	}
	switch src.Kind {
	case KindInt:
		return src.Bits <= mantissa
	case KindDecimal:
		return src.Precision > 0 && src.Precision <= digits
	}
	return false
}

// CheckLength is the declared length every value written from a src
// column into dest must be checked against before it lands, or 0 when
// none need be: dest declares none, or src's own is no longer (a
// varchar(3) into a varchar(3); a length in characters does not bound
// one in bytes, a character may be 4). A type rule cannot refuse text into a
// varchar(n), the most common user table, and the server does not refuse
// each longer value: PostgreSQL cuts a varchar(n)'s or char(n)'s excess
// when it is spaces ('abc ' lands as 'abc'), MySQL too with only a note,
// strict mode or not. So a destination checks the staged values, in one
// query per table, inside its commit before the final insert, and refuses
// a longer one with TooLongError.
func CheckLength(dest, src ColumnType) int {
	if dest.Length == 0 || src.Kind == dest.Kind && src.inBytes() == dest.inBytes() && src.Length > 0 && src.Length <= dest.Length {
		return 0
	}
	return dest.Length
}

// TooLongError is the refusal of a staged value longer than its
// destination column's declared length (CheckLength): bad input naming
// the column, its type (typ), the value's length in characters (bytes
// when bytes), never the value (it may be a secret), and what to run
// (alter, the destination's statement that lengthens the column). cuts:
// the destination would cut such a value's excess trailing spaces
// without an error (PostgreSQL, MySQL text); else it cannot hold it
// (MySQL bytes, BigQuery's STRING(L), which fails the commit on it).
func TooLongError(table TableRef, column, typ string, got int, bytes, cuts bool, alter string) *ProbeError {
	unit, cut := "characters", "which cannot hold it"
	if bytes {
		unit = "bytes"
	}
	if cuts {
		cut = "which cuts such a value (excess trailing spaces without an error)"
	}
	return &ProbeError{Table: table.String(), Column: column,
		Problem: fmt.Sprintf("a source value of %d %s is longer than the destination's %s, %s; nothing was written", got, unit, typ, cut),
		Hint:    fmt.Sprintf("lengthen the destination's column first (%s), or start it over (--mode replace)", alter)}
}

// LossyError is the refusal of a column whose source type (src, in the
// destination's spelling) the destination's column (dest) does not hold:
// bad input naming the column, both types and what to run (alter, the
// destination's statement that changes the column to src).
func LossyError(table TableRef, column, src, dest, alter string) *ProbeError {
	return &ProbeError{Table: table.String(), Column: column,
		Problem: fmt.Sprintf("the source's column is now %s and the destination's is %s, which would round, cut or change its values without an error", src, dest),
		Hint:    fmt.Sprintf("change the destination first (%s), or start it over (--mode replace; weir reset for log_based)", alter)}
}
