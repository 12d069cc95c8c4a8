package where

import (
	"context"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// Pushdown is an optional capability of a routes.Source whose reads can
// take a SQL condition. weir.Read asks SQL for the condition in the
// source's dialect and, when there is one, reads with ReadWhere; it always
// applies the whole filter again on the client, so a source may return more
// rows than asked (never fewer).
//
// This interface lives here until routes.ReadOptions grows a filter field.
type Pushdown interface {
	// Dialect says how the source quotes names and strings.
	Dialect() Dialect
	// ReadWhere is Read restricted to rows meeting cond, a condition
	// rendered by SQL for Dialect (to be ANDed with the range's own).
	ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, cond string) (routes.Stream, error)
}

// Dialect renders names and string literals for one SQL engine.
type Dialect struct {
	QuoteIdent  func(string) string
	QuoteString func(string) string
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

// SQL renders the part of e that a SQL engine evaluates with the client's
// meaning, or at most loosens (so the rows it returns are a superset of the
// rows e keeps); ok is false when nothing can be pushed. What is pushed:
//
//   - comparisons of integer and decimal columns with number literals, and
//     IS [NOT] NULL on any column: exact in every SQL engine;
//   - boolean columns compared with TRUE/FALSE: exact;
//   - string columns with = only: a case- or accent-insensitive collation
//     (MySQL's default) or PAD SPACE can only match more rows, never fewer;
//     <, > and != depend on the collation and stay on the client;
//   - AND of pushable parts (an unpushable side is dropped, which loosens),
//     OR when both sides push, NOT only over an exact part.
//
// Floats (NaN ordering), timestamps (session time zones) and dates are not
// pushed.
func SQL(e Expr, schema *arrow.Schema, d Dialect) (cond string, ok bool) {
	s, _, ok := render(e, schema, d)
	return s, ok
}

// render returns the SQL, whether it is exact (not merely a superset), and
// whether anything could be rendered.
func render(e Expr, schema *arrow.Schema, d Dialect) (string, bool, bool) {
	switch e := e.(type) {
	case *And:
		return renderAnd(e, schema, d)
	case *Or:
		l, lx, lok := render(e.L, schema, d)
		r, rx, rok := render(e.R, schema, d)
		if !lok || !rok {
			return "", false, false
		}
		return "(" + l + " OR " + r + ")", lx && rx, true
	case *Not:
		x, exact, ok := render(e.X, schema, d)
		if !ok || !exact {
			return "", false, false
		}
		return "(NOT " + x + ")", true, true
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

func renderAnd(e *And, schema *arrow.Schema, d Dialect) (string, bool, bool) {
	l, lx, lok := render(e.L, schema, d)
	r, rx, rok := render(e.R, schema, d)
	switch {
	case lok && rok:
		return "(" + l + " AND " + r + ")", lx && rx, true
	case lok:
		return l, false, true
	case rok:
		return r, false, true
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
		return col + decimalText(e.Lit.Num), true, true
	case id == arrow.BOOL && e.Lit.Kind == LitBool:
		return col + e.Lit.Text, true, true
	case (id == arrow.STRING || id == arrow.LARGE_STRING) && e.Lit.Kind == LitString && e.Op == Eq:
		return col + d.QuoteString(e.Lit.Text), false, true
	}
	return "", false, false
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
