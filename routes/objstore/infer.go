package objstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// InferRows is how many rows of a CSV file decide its column types.
const InferRows = 1000

// NativeCSV is the native type weir gives columns of CSV files it infers.
const NativeCSV = "csv"

// Inferred types, tried in this order; a column takes the first type every
// non-empty value of its first InferRows rows fits:
//
//	int64      optional sign and digits, no leading zero ("007" stays text), fits 64 bits
//	float64    a decimal or exponent number (1.5, -2, 3e8, 0.5) that a float64 holds
//	           exactly (its shortest text has the same value); not NaN, Inf or 007.5,
//	           nor 12345678901234567.5 or 18446744073709551615, which stay text
//	timestamp  2024-01-31, 2024-01-31 12:00:00[.frac], T or space, Z or ±hh[:mm] optional;
//	           timestamp[us, UTC] when every value names an offset, timestamp[us] when
//	           none does; mixed stays text
//	string     anything else, and a column with no value at all
//
// An empty unquoted field is NULL; "" is an empty string.
const (
	candInt = 1 << iota
	candFloat
	candTime
)

type colGuess struct {
	cand         int
	seen         bool
	zoned, naive bool
}

func (g *colGuess) observe(f csvField) {
	if len(f.b) == 0 {
		return // NULL (or "" in a string column): no vote
	}
	g.seen = true
	s := string(f.b)
	if g.cand&candInt != 0 && !isInt(s) {
		g.cand &^= candInt
	}
	if g.cand&candFloat != 0 && !isFloat(s) {
		g.cand &^= candFloat
	}
	if g.cand&candTime != 0 {
		_, zoned, ok := parseTime(s)
		switch {
		case !ok:
			g.cand &^= candTime
		case zoned:
			g.zoned = true
		default:
			g.naive = true
		}
	}
}

func (g *colGuess) typ() arrow.DataType {
	switch {
	case !g.seen:
		return arrow.BinaryTypes.String
	case g.cand&candInt != 0:
		return arrow.PrimitiveTypes.Int64
	case g.cand&candFloat != 0:
		return arrow.PrimitiveTypes.Float64
	case g.cand&candTime != 0 && g.zoned && !g.naive:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case g.cand&candTime != 0 && g.naive && !g.zoned:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	return arrow.BinaryTypes.String
}

func isInt(s string) bool {
	d := s
	if d[0] == '-' || d[0] == '+' {
		d = d[1:]
	}
	if d == "" || (len(d) > 1 && d[0] == '0') {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isFloat(s string) bool {
	if d := strings.TrimLeft(s, "+-"); len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9' {
		return false // a leading zero: a code, not a number
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+':
		default:
			return false // rejects NaN, Inf, hex, 1_000
		}
	}
	if !digits {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && floatExact(s, f)
}

// floatExact reports whether f, written back as its shortest text, has the
// decimal value s: a float64 column must never round a value it was given.
func floatExact(s string, f float64) bool {
	sig := 0
	for i := 0; i < len(s) && s[i] != 'e' && s[i] != 'E'; i++ {
		if c := s[i]; c >= '1' && c <= '9' || c == '0' && sig > 0 {
			sig++
		}
	}
	if sig <= 15 && (math.Abs(f) >= 0x1p-1022 || sig == 0) {
		return true // 15 significant digits survive any normal float64
	}
	want, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	got, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && want.Cmp(got) == 0
}

// inferSchema reads the header and up to InferRows records of p.
func inferSchema(p *csvParser) (*arrow.Schema, error) {
	names, err := p.header()
	if err != nil {
		return nil, err
	}
	if err := checkNames(names); err != nil {
		return nil, err
	}
	guesses := make([]colGuess, len(names))
	for i := range guesses {
		guesses[i].cand = candInt | candFloat | candTime
	}
	for range InferRows {
		rec, err := p.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range min(len(rec), len(guesses)) {
			guesses[i].observe(rec[i])
		}
	}
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: guesses[i].typ(), Nullable: true,
			Metadata: arrow.NewMetadata([]string{routes.MetaNativeType}, []string{NativeCSV})}
	}
	return arrow.NewSchema(fields, nil), nil
}

func checkNames(names []string) error {
	seen := map[string]bool{}
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("header column %d has no name", i+1)
		}
		if seen[n] {
			return fmt.Errorf("header names column %q twice", n)
		}
		seen[n] = true
	}
	return nil
}
