package where

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Expr is a node of a parsed filter: *And, *Or, *Not, *Cmp or *IsNull.
type Expr interface {
	// String renders the node back in the filter language.
	String() string
	// Columns appends the columns the node reads to dst.
	Columns(dst []string) []string
}

// And is true when both sides are.
type And struct{ L, R Expr }

// Or is true when either side is.
type Or struct{ L, R Expr }

// Not negates X (NOT unknown is unknown).
type Not struct{ X Expr }

// Op is a comparison operator.
type Op string

// The comparison operators; "<>" parses as NotEq.
const (
	Eq    Op = "="
	NotEq Op = "!="
	Lt    Op = "<"
	LtEq  Op = "<="
	Gt    Op = ">"
	GtEq  Op = ">="
)

// Cmp compares a column with a literal: Col Op Lit. A filter written
// literal-first (100 < amount) is stored column-first (amount > 100).
type Cmp struct {
	Col string
	Op  Op
	Lit Literal
}

// IsNull is "Col IS NULL", or "Col IS NOT NULL" when Not is set.
type IsNull struct {
	Col string
	Not bool
}

// LitKind says what a literal is.
type LitKind uint8

// The literal kinds.
const (
	LitNumber LitKind = iota + 1 // integer or decimal, exact
	LitString
	LitBool
)

// Literal is a constant of a comparison.
type Literal struct {
	Kind LitKind
	Text string   // the number's digits, the string's value
	Num  *big.Rat // LitNumber: the exact value
	Bool bool     // LitBool
}

// Number returns a number literal; false if s is not a number.
func Number(s string) (Literal, bool) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/xXpP") || strings.Contains(strings.ToLower(s), "inf") || strings.Contains(strings.ToLower(s), "nan") {
		return Literal{}, false
	}
	return Literal{Kind: LitNumber, Text: s, Num: r}, true
}

// String returns a string literal.
func String(s string) Literal { return Literal{Kind: LitString, Text: s} }

// Bool returns a boolean literal.
func Bool(b bool) Literal {
	return Literal{Kind: LitBool, Bool: b, Text: strings.ToUpper(strconv.FormatBool(b))}
}

func (l Literal) String() string {
	if l.Kind == LitString {
		return "'" + strings.ReplaceAll(l.Text, "'", "''") + "'"
	}
	return l.Text
}

func (e *And) String() string { return "(" + e.L.String() + " AND " + e.R.String() + ")" }
func (e *Or) String() string  { return "(" + e.L.String() + " OR " + e.R.String() + ")" }
func (e *Not) String() string { return "NOT " + e.X.String() }
func (e *Cmp) String() string { return fmt.Sprintf("%s %s %s", quoteName(e.Col), e.Op, e.Lit) }
func (e *IsNull) String() string {
	return quoteName(e.Col) + map[bool]string{false: " IS NULL", true: " IS NOT NULL"}[e.Not]
}

func (e *And) Columns(dst []string) []string    { return e.R.Columns(e.L.Columns(dst)) }
func (e *Or) Columns(dst []string) []string     { return e.R.Columns(e.L.Columns(dst)) }
func (e *Not) Columns(dst []string) []string    { return e.X.Columns(dst) }
func (e *Cmp) Columns(dst []string) []string    { return appendNew(dst, e.Col) }
func (e *IsNull) Columns(dst []string) []string { return appendNew(dst, e.Col) }

func appendNew(dst []string, name string) []string {
	for _, d := range dst {
		if d == name {
			return dst
		}
	}
	return append(dst, name)
}

// quoteName renders a column name, quoted when it is not a plain identifier.
func quoteName(s string) string {
	if isPlainIdent(s) && !isKeyword(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// flip mirrors an operator for "literal op column".
func (o Op) flip() Op {
	switch o {
	case Lt:
		return Gt
	case LtEq:
		return GtEq
	case Gt:
		return Lt
	case GtEq:
		return LtEq
	}
	return o
}

// holds reports whether a three-way comparison result c satisfies o.
func (o Op) holds(c int) bool {
	switch o {
	case Eq:
		return c == 0
	case NotEq:
		return c != 0
	case Lt:
		return c < 0
	case LtEq:
		return c <= 0
	case Gt:
		return c > 0
	}
	return c >= 0
}
