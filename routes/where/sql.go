package where

import (
	"context"
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// Pushdown is an optional capability of a routes.Source whose reads can
// apply a filter themselves: SQL sources put it in their WHERE clause,
// Iceberg in its scan's row filter (which skips data files). weir.Read
// hands the parsed filter to ReadWhere and always applies the whole filter
// again on the client, so a source may return more rows than asked (never
// fewer): it pushes only what it applies with the client's meaning, or
// loosens (see Push).
type Pushdown interface {
	// PushDown returns the condition ReadWhere applies for e, as the
	// source states it (its SQL, its row filter), for the read report;
	// "" when it applies none.
	PushDown(e Expr, schema *arrow.Schema) string
	// ReadWhere is Read restricted to rows meeting e, or to a superset.
	ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, e Expr) (routes.Stream, error)
}

// Residualer is the optional companion of Pushdown: the part of a filter
// the client must still apply after ReadWhere (nil: none). A source that
// evaluates a comparison itself is the judge of it: its collation decides
// string comparisons, its order NaN; the client re-checking it with its own
// rules would drop rows the source's own SELECT returns. A Pushdown without
// it has the whole filter applied again on the client.
type Residualer interface {
	Residual(e Expr, schema *arrow.Schema) Expr
}

// Residual is the part of e that a source pushing with b leaves to the
// client: the conjuncts b does not apply exactly (nil when none).
func Residual[T any](e Expr, b Builder[T]) Expr {
	if a, ok := e.(*And); ok {
		l, r := Residual(a.L, b), Residual(a.R, b)
		switch {
		case l == nil:
			return r
		case r == nil:
			return l
		}
		return &And{L: l, R: r}
	}
	if _, exact, ok := push(e, b); ok && exact {
		return nil
	}
	return e
}

// Builder turns a filter into a source's own condition of type T (SQL
// text, an Iceberg expression). Leaf renders one *Cmp or *IsNull: ok false
// when the source cannot apply it, exact false when what it applies keeps
// more rows than the leaf (a superset).
type Builder[T any] struct {
	Leaf    func(e Expr) (cond T, exact, ok bool)
	And, Or func(l, r T) T
	Not     func(x T) T
}

// Push renders the part of e that b can apply without ever dropping a row
// e keeps; ok is false when nothing can be pushed. An AND with one side
// that cannot be pushed keeps the other (a looser condition), an OR needs
// both sides, a NOT only an exact part.
func Push[T any](e Expr, b Builder[T]) (cond T, ok bool) {
	cond, _, ok = push(e, b)
	return cond, ok
}

func push[T any](e Expr, b Builder[T]) (T, bool, bool) {
	var zero T
	switch e := e.(type) {
	case *And:
		l, lx, lok := push(e.L, b)
		r, rx, rok := push(e.R, b)
		switch {
		case lok && rok:
			return b.And(l, r), lx && rx, true
		case lok:
			return l, false, true
		case rok:
			return r, false, true
		}
	case *Or:
		l, lx, lok := push(e.L, b)
		r, rx, rok := push(e.R, b)
		if lok && rok {
			return b.Or(l, r), lx && rx, true
		}
	case *Not:
		if x, exact, ok := push(e.X, b); ok && exact {
			return b.Not(x), true, true
		}
	case *Cmp, *IsNull:
		return b.Leaf(e)
	}
	return zero, false, false
}

// Dialect renders names and string literals for one SQL engine.
type Dialect struct {
	QuoteIdent  func(string) string
	QuoteString func(string) string
	// IntegerLiterals: only integer literals in the int64 range are
	// exact (ClickHouse reads 1.5 as a Float64, and wider integers as
	// types of its own choosing).
	IntegerLiterals bool
}

// Postgres quotes like PostgreSQL with standard_conforming_strings on.
var Postgres = Dialect{
	QuoteIdent:  func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` },
	QuoteString: func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" },
}

// MySQL quotes like MySQL/MariaDB in their default sql_mode (where a
// backslash escapes inside a string).
var MySQL = Dialect{
	QuoteIdent: func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" },
	QuoteString: func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
	},
}

// SQL renders the part of e that a SQL engine evaluates itself; ok is
// false when nothing can be pushed. What is pushed, each evaluated by the
// engine's own rules (SQLResidual leaves it off the client's re-check, so
// weir read returns what the server's own SELECT … WHERE returns):
//
//   - comparisons of integer and decimal columns with number literals
//     (with Dialect.IntegerLiterals, integers in the int64 range only), and
//     IS [NOT] NULL on any column;
//   - boolean columns compared with TRUE/FALSE;
//   - string columns compared with a string: the column's collation decides
//     (MySQL's default is case-insensitive and pads with spaces);
//   - float columns compared with a number a double holds finitely: the
//     engine orders NaN (PostgreSQL above every number and equal to itself;
//     ClickHouse as IEEE 754, where every comparison with NaN but != is
//     false);
//   - AND, OR and NOT as Push says.
//
// Timestamps (session time zones) and dates stay on the client.
func SQL(e Expr, schema *arrow.Schema, d Dialect) (cond string, ok bool) {
	return Push(e, sqlBuilder(schema, d))
}

// SQLResidual is what the client applies after SQL's condition.
func SQLResidual(e Expr, schema *arrow.Schema, d Dialect) Expr {
	return Residual(e, sqlBuilder(schema, d))
}

func sqlBuilder(schema *arrow.Schema, d Dialect) Builder[string] {
	return Builder[string]{
		Leaf: func(e Expr) (string, bool, bool) { return sqlLeaf(e, schema, d) },
		And:  func(l, r string) string { return "(" + l + " AND " + r + ")" },
		Or:   func(l, r string) string { return "(" + l + " OR " + r + ")" },
		Not:  func(x string) string { return "(NOT (" + x + "))" }, // no engine's precedence to rely on
	}
}

func sqlLeaf(e Expr, schema *arrow.Schema, d Dialect) (string, bool, bool) {
	switch e := e.(type) {
	case *IsNull:
		if _, err := field(schema, e.Col); err != nil {
			return "", false, false
		}
		return d.QuoteIdent(e.Col) + map[bool]string{false: " IS NULL", true: " IS NOT NULL"}[e.Not], true, true
	case *Cmp:
		return renderCmp(e, schema, d)
	}
	return "", false, false
}

func renderCmp(e *Cmp, schema *arrow.Schema, d Dialect) (string, bool, bool) {
	f, err := field(schema, e.Col)
	if err != nil {
		return "", false, false
	}
	col := d.QuoteIdent(e.Col) + " " + string(e.Op) + " "
	id := f.Type.ID()
	switch {
	case (arrow.IsInteger(id) || id == arrow.DECIMAL128 || id == arrow.DECIMAL256) && e.Lit.Kind == LitNumber:
		if d.IntegerLiterals && !IsInt64(e.Lit) {
			return "", false, false
		}
		return col + decimalText(e.Lit.Num), true, true
	case id == arrow.BOOL && e.Lit.Kind == LitBool:
		return col + e.Lit.Text, true, true
	case (id == arrow.STRING || id == arrow.LARGE_STRING) && e.Lit.Kind == LitString:
		return col + d.QuoteString(e.Lit.Text), true, true
	case arrow.IsFloating(id) && e.Lit.Kind == LitNumber:
		if f, _ := e.Lit.Num.Float64(); math.IsInf(f, 0) {
			return "", false, false // 1e400: an engine's overflow, the client's +Inf
		}
		return col + decimalText(e.Lit.Num), true, true
	}
	return "", false, false
}

// IsInt64 reports whether a number literal is an integer in the int64 range.
func IsInt64(l Literal) bool {
	return l.Kind == LitNumber && l.Num.IsInt() && l.Num.Num().IsInt64()
}

// decimalText writes r as an exact decimal (never 1e3, which MySQL reads
// as a double). Literals come from decimal text, so the expansion is finite.
func decimalText(r *big.Rat) string {
	d := new(big.Int).Set(r.Denom())
	places := 0
	for _, p := range []int64{2, 5} {
		n, m := 0, new(big.Int)
		for {
			q, rem := new(big.Int).QuoRem(d, big.NewInt(p), m)
			if rem.Sign() != 0 {
				break
			}
			d, n = q, n+1
		}
		places = max(places, n)
	}
	return r.FloatString(places)
}
