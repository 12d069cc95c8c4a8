package where

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

// comparer returns, for one bound array, the three-way comparison of row i
// with the literal.
type comparer func(a arrow.Array) (func(i int) int, error)

type cmpNode struct {
	col string
	op  Op
	at  comparer
}

func (n cmpNode) bind(rec arrow.RecordBatch) (rowFunc, error) {
	a, err := column(rec, n.col)
	if err != nil {
		return nil, err
	}
	c, err := n.at(a)
	if err != nil {
		return nil, fmt.Errorf("column %q: %w", n.col, err)
	}
	return func(i int) tri {
		if a.IsNull(i) {
			return unknown
		}
		return triOf(n.op.holds(c(i)))
	}, nil
}

func compileCmp(e *Cmp, t arrow.DataType) (node, error) {
	at, err := comparerFor(e.Lit, t)
	if err != nil {
		return nil, fmt.Errorf("column %q (%s) %s %s: %w", e.Col, t, e.Op, e.Lit, err)
	}
	return cmpNode{col: e.Col, op: e.Op, at: at}, nil
}

func comparerFor(lit Literal, t arrow.DataType) (comparer, error) {
	switch {
	case arrow.IsInteger(t.ID()):
		return numeric(lit, intComparer)
	case arrow.IsFloating(t.ID()):
		return numeric(lit, floatComparer)
	case t.ID() == arrow.DECIMAL128 || t.ID() == arrow.DECIMAL256:
		return numeric(lit, func(r *big.Rat) comparer { return decimalComparer(r, t.(arrow.DecimalType).GetScale()) })
	}
	switch t := t.(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return stringComparer(lit)
	case *arrow.BooleanType:
		return boolComparer(lit)
	case *arrow.TimestampType:
		return timestampComparer(lit, t)
	case *arrow.Date32Type, *arrow.Date64Type:
		return dateComparer(lit)
	}
	return nil, fmt.Errorf("this type can only be tested with IS [NOT] NULL")
}

// numeric takes a number literal, or a string literal holding a number
// (the form watermarks arrive in).
func numeric(lit Literal, mk func(*big.Rat) comparer) (comparer, error) {
	switch lit.Kind {
	case LitNumber:
		return mk(lit.Num), nil
	case LitString:
		if n, ok := Number(strings.TrimSpace(lit.Text)); ok {
			return mk(n.Num), nil
		}
	}
	return nil, fmt.Errorf("want a number")
}

// intBound compares integers with an exact rational r without allocating:
// k is floor(r); side is +1 when r is above every int64, -1 below.
type intBound struct {
	k     int64
	exact bool
	side  int
}

func newIntBound(r *big.Rat) intBound {
	fl := new(big.Int).Div(r.Num(), r.Denom()) // Euclidean: floor for a positive denominator
	if !fl.IsInt64() {
		return intBound{side: fl.Sign()}
	}
	return intBound{k: fl.Int64(), exact: r.IsInt()}
}

func (b intBound) cmp(x int64) int {
	switch {
	case b.side != 0:
		return -b.side
	case x < b.k:
		return -1
	case x > b.k:
		return 1
	case b.exact:
		return 0
	}
	return -1 // x == floor(r) < r
}

func intComparer(r *big.Rat) comparer {
	b := newIntBound(r)
	return func(a arrow.Array) (func(i int) int, error) {
		switch a := a.(type) {
		case *array.Int64:
			return func(i int) int { return b.cmp(a.Value(i)) }, nil
		case *array.Int32:
			return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
		case *array.Int16:
			return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
		case *array.Int8:
			return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
		}
		return unsignedComparer(a, r, b)
	}
}

func unsignedComparer(a arrow.Array, r *big.Rat, b intBound) (func(i int) int, error) {
	switch a := a.(type) {
	case *array.Uint64:
		return func(i int) int {
			if v := a.Value(i); v <= math.MaxInt64 {
				return b.cmp(int64(v))
			}
			return new(big.Rat).SetUint64(a.Value(i)).Cmp(r)
		}, nil
	case *array.Uint32:
		return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
	case *array.Uint16:
		return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
	case *array.Uint8:
		return func(i int) int { return b.cmp(int64(a.Value(i))) }, nil
	}
	return nil, fmt.Errorf("unexpected array %T", a)
}

// floatComparer orders NaN above every number and equal to itself, as
// PostgreSQL and DuckDB do (a literal is never NaN). Sources that compare
// floats themselves (SQL sources: where.SQL) are not re-checked with it.
func floatComparer(r *big.Rat) comparer {
	f, _ := r.Float64()
	return func(a arrow.Array) (func(i int) int, error) {
		switch a := a.(type) {
		case *array.Float64:
			return func(i int) int { return nanHigh(a.Value(i), f) }, nil
		case *array.Float32:
			return func(i int) int { return nanHigh(float64(a.Value(i)), f) }, nil
		}
		return nil, fmt.Errorf("unexpected array %T", a)
	}
}

func nanHigh(x, lit float64) int {
	if x != x {
		return 1
	}
	return cmp.Compare(x, lit)
}

// decimalComparer compares unscaled decimal integers with r·10^scale,
// exactly, using the floor trick of intBound.
func decimalComparer(r *big.Rat, scale int32) comparer {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(scale, 0))), nil)))
	fl := new(big.Int).Div(scaled.Num(), scaled.Denom())
	exact := scaled.IsInt()
	return func(a arrow.Array) (func(i int) int, error) {
		switch a := a.(type) {
		case *array.Decimal128:
			if fl.BitLen() > 126 {
				return constant(fl.Sign()), nil
			}
			k := decimal128.FromBigInt(fl)
			return func(i int) int { return floorCmp(a.Value(i).Cmp(k), exact) }, nil
		case *array.Decimal256:
			if fl.BitLen() > 254 {
				return constant(fl.Sign()), nil
			}
			k := decimal256.FromBigInt(fl)
			return func(i int) int { return floorCmp(a.Value(i).Cmp(k), exact) }, nil
		}
		return nil, fmt.Errorf("unexpected array %T", a)
	}
}

// floorCmp turns x compared with floor(r) into x compared with r.
func floorCmp(c int, exact bool) int {
	if c == 0 && !exact {
		return -1
	}
	return c
}

// constant: the literal lies beyond the type's range (side +1 above it).
func constant(side int) func(i int) int { return func(int) int { return -side } }

func stringComparer(lit Literal) (comparer, error) {
	if lit.Kind != LitString {
		return nil, fmt.Errorf("want a 'quoted string'")
	}
	s := lit.Text
	return func(a arrow.Array) (func(i int) int, error) {
		switch a := a.(type) {
		case *array.String:
			return func(i int) int { return strings.Compare(a.Value(i), s) }, nil
		case *array.LargeString:
			return func(i int) int { return strings.Compare(a.Value(i), s) }, nil
		case *array.StringView:
			return func(i int) int { return strings.Compare(a.Value(i), s) }, nil
		}
		return nil, fmt.Errorf("unexpected array %T", a)
	}, nil
}

func boolComparer(lit Literal) (comparer, error) {
	v := lit.Bool
	if lit.Kind == LitString {
		b, err := strconv.ParseBool(lit.Text)
		if err != nil {
			return nil, fmt.Errorf("want TRUE or FALSE")
		}
		v = b
	} else if lit.Kind != LitBool {
		return nil, fmt.Errorf("want TRUE or FALSE")
	}
	want := 0
	if v {
		want = 1
	}
	return func(a arrow.Array) (func(i int) int, error) {
		b, ok := a.(*array.Boolean)
		if !ok {
			return nil, fmt.Errorf("unexpected array %T", a)
		}
		return func(i int) int {
			if b.Value(i) {
				return cmp.Compare(1, want)
			}
			return cmp.Compare(0, want)
		}, nil
	}, nil
}

// timestampComparer parses the literal in the column's zone (UTC when the
// column has none, or when the literal names its own offset).
func timestampComparer(lit Literal, t *arrow.TimestampType) (comparer, error) {
	if lit.Kind != LitString {
		return nil, fmt.Errorf("want a 'quoted timestamp'")
	}
	loc, err := t.GetZone()
	if err != nil || loc == nil {
		loc = time.UTC
	}
	ts, _, err := arrow.TimestampFromStringInLocation(strings.TrimSpace(lit.Text), t.Unit, loc)
	if err != nil {
		return nil, fmt.Errorf("not a timestamp: %v", err)
	}
	return func(a arrow.Array) (func(i int) int, error) {
		arr, ok := a.(*array.Timestamp)
		if !ok {
			return nil, fmt.Errorf("unexpected array %T", a)
		}
		return func(i int) int { return cmp.Compare(arr.Value(i), ts) }, nil
	}, nil
}

func dateComparer(lit Literal) (comparer, error) {
	if lit.Kind != LitString {
		return nil, fmt.Errorf("want a 'YYYY-MM-DD' date")
	}
	d, err := time.Parse("2006-01-02", strings.TrimSpace(lit.Text))
	if err != nil {
		return nil, fmt.Errorf("not a date: %v", err)
	}
	return func(a arrow.Array) (func(i int) int, error) {
		switch a := a.(type) {
		case *array.Date32:
			k := arrow.Date32FromTime(d)
			return func(i int) int { return cmp.Compare(a.Value(i), k) }, nil
		case *array.Date64:
			k := arrow.Date64FromTime(d)
			return func(i int) int { return cmp.Compare(a.Value(i), k) }, nil
		}
		return nil, fmt.Errorf("unexpected array %T", a)
	}, nil
}
