package where

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// tri is SQL's three-valued truth, ordered so that Kleene AND is min and
// OR is max.
type tri uint8

const (
	false3 tri = iota
	unknown
	true3
)

func triOf(b bool) tri {
	if b {
		return true3
	}
	return false3
}

// rowFunc evaluates a node on row i of the batch it was bound to.
type rowFunc func(i int) tri

// node is a compiled Expr: bind fixes it to one batch's arrays.
type node interface {
	bind(rec arrow.RecordBatch) (rowFunc, error)
}

// Filter is an Expr compiled against a schema.
type Filter struct {
	expr Expr
	root node
}

// Compile checks e against the schema (every column exists, every literal
// fits its column's type) and returns the filter. Errors are bad input.
func Compile(e Expr, schema *arrow.Schema) (*Filter, error) {
	root, err := compile(e, schema)
	if err != nil {
		return nil, routes.BadInput("where %s: %v", e, err)
	}
	return &Filter{expr: e, root: root}, nil
}

// Expr returns the filter's expression.
func (f *Filter) Expr() Expr { return f.expr }

// Columns lists the columns the filter reads.
func (f *Filter) Columns() []string { return f.expr.Columns(nil) }

func compile(e Expr, schema *arrow.Schema) (node, error) {
	switch e := e.(type) {
	case *And:
		return compileBoth(e.L, e.R, schema, andOf)
	case *Or:
		return compileBoth(e.L, e.R, schema, orOf)
	case *Not:
		x, err := compile(e.X, schema)
		return notNode{x}, err
	case *IsNull:
		if _, err := field(schema, e.Col); err != nil {
			return nil, err
		}
		return isNullNode{col: e.Col, not: e.Not}, nil
	case *Cmp:
		f, err := field(schema, e.Col)
		if err != nil {
			return nil, err
		}
		return compileCmp(e, f.Type)
	}
	return nil, fmt.Errorf("unknown node %T", e)
}

func compileBoth(l, r Expr, schema *arrow.Schema, join func(l, r node) node) (node, error) {
	ln, err := compile(l, schema)
	if err != nil {
		return nil, err
	}
	rn, err := compile(r, schema)
	if err != nil {
		return nil, err
	}
	return join(ln, rn), nil
}

func field(schema *arrow.Schema, name string) (arrow.Field, error) {
	idx := schema.FieldIndices(name)
	if len(idx) == 0 {
		return arrow.Field{}, fmt.Errorf("no column %q", name)
	}
	return schema.Field(idx[0]), nil
}

// column finds a bound column by name.
func column(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("batch has no column %q", name)
	}
	return rec.Column(idx[0]), nil
}

type binNode struct {
	l, r node
	or   bool
}

func andOf(l, r node) node { return binNode{l: l, r: r} }
func orOf(l, r node) node  { return binNode{l: l, r: r, or: true} }

func (n binNode) bind(rec arrow.RecordBatch) (rowFunc, error) {
	l, err := n.l.bind(rec)
	if err != nil {
		return nil, err
	}
	r, err := n.r.bind(rec)
	if err != nil {
		return nil, err
	}
	if n.or {
		return func(i int) tri { return max(l(i), r(i)) }, nil
	}
	return func(i int) tri { return min(l(i), r(i)) }, nil
}

type notNode struct{ x node }

func (n notNode) bind(rec arrow.RecordBatch) (rowFunc, error) {
	x, err := n.x.bind(rec)
	if err != nil {
		return nil, err
	}
	return func(i int) tri {
		switch x(i) {
		case true3:
			return false3
		case false3:
			return true3
		}
		return unknown
	}, nil
}

type isNullNode struct {
	col string
	not bool
}

func (n isNullNode) bind(rec arrow.RecordBatch) (rowFunc, error) {
	a, err := column(rec, n.col)
	if err != nil {
		return nil, err
	}
	return func(i int) tri { return triOf(a.IsNull(i) != n.not) }, nil
}

// Apply returns the rows of rec for which the filter is true, as a new
// batch the caller releases, or nil when no row is kept. rec itself is not
// released. Allocations come from mem.
func (f *Filter) Apply(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	eval, err := f.root.bind(rec)
	if err != nil {
		return nil, err
	}
	mask, kept := buildMask(eval, int(rec.NumRows()), mem)
	defer mask.Release()
	switch kept {
	case 0:
		return nil, nil
	case int(rec.NumRows()):
		rec.Retain()
		return rec, nil
	}
	out, err := compute.FilterRecordBatch(exec.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("filter rows: %w", err)
	}
	return out, nil
}

func buildMask(eval rowFunc, n int, mem memory.Allocator) (arrow.Array, int) {
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	kept := 0
	for i := range n {
		ok := eval(i) == true3
		if ok {
			kept++
		}
		b.UnsafeAppend(ok)
	}
	return b.NewArray(), kept
}
