package where

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/weirhq/weir/routes"
)

// MaxDepth bounds nesting so a hostile filter cannot exhaust the stack.
const MaxDepth = 64

// Parse parses a filter. Errors are bad input (routes.ErrBadInput) and give
// the byte offset of the problem.
func Parse(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, routes.BadInput("where %q: %v", s, err)
	}
	p := &parser{toks: toks}
	e, err := p.or(0)
	if err == nil && p.peek().kind != tEOF {
		err = p.errf("unexpected %q", p.peek().text)
	}
	if err != nil {
		return nil, routes.BadInput("where %q: %v", s, err)
	}
	return e, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tQuoted // "column"
	tString // 'literal'
	tNumber
	tOp
	tLParen
	tRParen
	tMinus
)

type token struct {
	kind tokKind
	text string
	pos  int
}

var keywords = map[string]bool{"AND": true, "OR": true, "NOT": true, "IS": true, "NULL": true, "TRUE": true, "FALSE": true}

func isKeyword(s string) bool { return keywords[strings.ToUpper(s)] }

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		t, n, err := lexOne(s[i:])
		if err != nil {
			return nil, fmt.Errorf("at %d: %w", i, err)
		}
		t.pos = i
		toks = append(toks, t)
		i += n
	}
	return append(toks, token{kind: tEOF, pos: len(s)}), nil
}

// lexOne reads the token at the start of s and returns its length.
func lexOne(s string) (token, int, error) {
	c := s[0]
	switch {
	case c == '(':
		return token{kind: tLParen, text: "("}, 1, nil
	case c == ')':
		return token{kind: tRParen, text: ")"}, 1, nil
	case c == '-':
		return token{kind: tMinus, text: "-"}, 1, nil
	case c == '\'':
		return lexQuoted(s, '\'', tString)
	case c == '"':
		return lexQuoted(s, '"', tQuoted)
	case c >= '0' && c <= '9' || c == '.':
		return lexNumber(s)
	case strings.ContainsRune("=!<>", rune(c)):
		return lexOp(s)
	case c == '_' || unicode.IsLetter(rune(c)) || c >= 0x80:
		n := identLen(s)
		return token{kind: tIdent, text: s[:n]}, n, nil
	}
	return token{}, 0, fmt.Errorf("unexpected character %q", c)
}

func identLen(s string) int {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return i
		}
	}
	return len(s)
}

// lexQuoted reads a quoted string or name; a doubled quote is one quote.
func lexQuoted(s string, q byte, kind tokKind) (token, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return token{kind: kind, text: b.String()}, i + 1, nil
	}
	return token{}, 0, fmt.Errorf("unterminated %c quote", q)
}

func lexNumber(s string) (token, int, error) {
	n := 0
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] == '.') {
		n++
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && s[m] >= '0' && s[m] <= '9' {
			for n = m; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
			}
		}
	}
	if _, ok := Number(s[:n]); !ok {
		return token{}, 0, fmt.Errorf("bad number %q", s[:n])
	}
	return token{kind: tNumber, text: s[:n]}, n, nil
}

func lexOp(s string) (token, int, error) {
	for _, op := range []string{"<=", ">=", "!=", "<>", "=", "<", ">"} {
		if strings.HasPrefix(s, op) {
			return token{kind: tOp, text: op}, len(op), nil
		}
	}
	return token{}, 0, fmt.Errorf("unexpected %q", s[:1])
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i = min(p.i+1, len(p.toks)-1); return t }

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("at %d: %s", p.peek().pos, fmt.Sprintf(format, args...))
}

// keyword consumes the keyword kw if it is next.
func (p *parser) keyword(kw string) bool {
	if t := p.peek(); t.kind == tIdent && strings.EqualFold(t.text, kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) or(depth int) (Expr, error) {
	return p.binary(depth, "OR", p.and, func(l, r Expr) Expr { return &Or{l, r} })
}

func (p *parser) and(depth int) (Expr, error) {
	return p.binary(depth, "AND", p.not, func(l, r Expr) Expr { return &And{l, r} })
}

// binary parses operand (kw operand)*, left-associative.
func (p *parser) binary(depth int, kw string, operand func(int) (Expr, error), join func(l, r Expr) Expr) (Expr, error) {
	l, err := operand(depth)
	for err == nil && p.keyword(kw) {
		var r Expr
		if r, err = operand(depth); err == nil {
			l = join(l, r)
		}
	}
	return l, err
}

func (p *parser) not(depth int) (Expr, error) {
	if depth > MaxDepth {
		return nil, p.errf("nested deeper than %d", MaxDepth)
	}
	if p.keyword("NOT") {
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{x}, nil
	}
	if p.peek().kind == tLParen {
		p.next()
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.next().kind != tRParen {
			return nil, p.errf("missing )")
		}
		return e, nil
	}
	return p.comparison()
}

// operand is a column name or a literal.
type operand struct {
	col   string
	lit   Literal
	isCol bool
}

func (p *parser) comparison() (Expr, error) {
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.keyword("IS") {
		return p.isNull(l)
	}
	t := p.next()
	if t.kind != tOp {
		return nil, fmt.Errorf("at %d: want a comparison operator (=, !=, <, <=, >, >=) or IS [NOT] NULL", t.pos)
	}
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	return makeCmp(l, Op(strings.Replace(t.text, "<>", "!=", 1)), r, t.pos)
}

func makeCmp(l operand, op Op, r operand, pos int) (Expr, error) {
	switch {
	case l.isCol && !r.isCol:
		return &Cmp{Col: l.col, Op: op, Lit: r.lit}, nil
	case !l.isCol && r.isCol:
		return &Cmp{Col: r.col, Op: op.flip(), Lit: l.lit}, nil
	case l.isCol:
		return nil, fmt.Errorf("at %d: compare a column with a literal, not with column %q", pos, r.col)
	}
	return nil, fmt.Errorf("at %d: a comparison needs a column", pos)
}

func (p *parser) isNull(l operand) (Expr, error) {
	if !l.isCol {
		return nil, p.errf("IS NULL applies to a column")
	}
	not := p.keyword("NOT")
	if !p.keyword("NULL") {
		return nil, p.errf("want NULL after IS")
	}
	return &IsNull{Col: l.col, Not: not}, nil
}

func (p *parser) operand() (operand, error) {
	t := p.next()
	switch t.kind {
	case tQuoted:
		return operand{col: t.text, isCol: true}, nil
	case tString:
		return operand{lit: String(t.text)}, nil
	case tNumber:
		lit, _ := Number(t.text)
		return operand{lit: lit}, nil
	case tMinus:
		if n := p.next(); n.kind == tNumber {
			lit, _ := Number("-" + n.text)
			return operand{lit: lit}, nil
		}
		return operand{}, fmt.Errorf("at %d: want a number after -", t.pos)
	case tIdent:
		return identOperand(t)
	}
	return operand{}, fmt.Errorf("at %d: want a column or a literal, got %q", t.pos, t.text)
}

func identOperand(t token) (operand, error) {
	switch strings.ToUpper(t.text) {
	case "TRUE":
		return operand{lit: Bool(true)}, nil
	case "FALSE":
		return operand{lit: Bool(false)}, nil
	case "NULL":
		return operand{}, fmt.Errorf("at %d: compare with NULL using IS NULL or IS NOT NULL", t.pos)
	}
	if isKeyword(t.text) {
		return operand{}, fmt.Errorf("at %d: unexpected %s", t.pos, strings.ToUpper(t.text))
	}
	return operand{col: t.text, isCol: true}, nil
}
