package iceberg

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

var _ where.Pushdown = (*Endpoint)(nil)

// PushDown is the Iceberg row filter ReadWhere scans with for x ("" when
// none), as iceberg-go prints it.
func (e *Endpoint) PushDown(x where.Expr, schema *arrow.Schema) string {
	if f, ok := rowFilter(x, schema); ok {
		return f.String()
	}
	return ""
}

// ReadWhere is Read with the pushable part of x as the scan's row filter:
// iceberg-go skips the data files whose column bounds rule it out, and
// drops the rows it rejects in the files it reads.
func (e *Endpoint) ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, x where.Expr) (routes.Stream, error) {
	f, _ := rowFilter(x, r.Table.Schema())
	return e.read(ctx, r, opts, f)
}

// rowFilter renders the part of x that iceberg-go evaluates exactly as the
// client does: comparisons of int and long columns with integer literals
// in their range, of string columns with strings (both compare bytes),
// boolean equality and IS [NOT] NULL. Decimals, floats, dates and
// timestamps stay on the client.
func rowFilter(x where.Expr, schema *arrow.Schema) (iceberg.BooleanExpression, bool) {
	return where.Push(x, filterBuilder(schema))
}

// Residual is the part of x the client still applies: what rowFilter
// does not push.
func (e *Endpoint) Residual(x where.Expr, schema *arrow.Schema) where.Expr {
	return where.Residual(x, filterBuilder(schema))
}

func filterBuilder(schema *arrow.Schema) where.Builder[iceberg.BooleanExpression] {
	return where.Builder[iceberg.BooleanExpression]{
		Leaf: func(e where.Expr) (iceberg.BooleanExpression, bool, bool) {
			f, ok := filterLeaf(e, schema)
			return f, ok, ok
		},
		And: func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewAnd(l, r) },
		Or:  func(l, r iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewOr(l, r) },
		Not: func(x iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewNot(x) },
	}
}

func filterLeaf(e where.Expr, schema *arrow.Schema) (iceberg.BooleanExpression, bool) {
	var col string
	switch e := e.(type) {
	case *where.IsNull:
		col = e.Col
	case *where.Cmp:
		col = e.Col
	}
	idx := schema.FieldIndices(col)
	if len(idx) == 0 {
		return nil, false
	}
	ref := iceberg.Reference(col)
	switch e := e.(type) {
	case *where.IsNull:
		if e.Not {
			return iceberg.NotNull(ref), true
		}
		return iceberg.IsNull(ref), true
	case *where.Cmp:
		switch t := schema.Field(idx[0]).Type.ID(); {
		case t == arrow.INT64 && where.IsInt64(e.Lit):
			return compare(ref, e.Op, e.Lit.Num.Num().Int64()), true
		case t == arrow.INT32 && where.IsInt64(e.Lit) && fitsInt32(e.Lit.Num.Num().Int64()):
			return compare(ref, e.Op, int32(e.Lit.Num.Num().Int64())), true
		case t == arrow.STRING && e.Lit.Kind == where.LitString:
			return compare(ref, e.Op, e.Lit.Text), true
		case t == arrow.BOOL && e.Lit.Kind == where.LitBool && (e.Op == where.Eq || e.Op == where.NotEq):
			return compare(ref, e.Op, e.Lit.Bool), true
		}
	}
	return nil, false
}

func fitsInt32(n int64) bool { return n >= -1<<31 && n < 1<<31 }

func compare[T iceberg.LiteralType](ref iceberg.Reference, op where.Op, v T) iceberg.BooleanExpression {
	switch op {
	case where.Eq:
		return iceberg.EqualTo(ref, v)
	case where.NotEq:
		return iceberg.NotEqualTo(ref, v)
	case where.Lt:
		return iceberg.LessThan(ref, v)
	case where.LtEq:
		return iceberg.LessThanEqual(ref, v)
	case where.Gt:
		return iceberg.GreaterThan(ref, v)
	}
	return iceberg.GreaterThanEqual(ref, v)
}
