package where

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// WindowFilter turns a read's cursor window (opts.After, opts.Until) into
// a filter, for sources that filter rows as they read them (files, sheets),
// and returns the columns to read: the output's plus the cursor. hint
// says how to name a cursor that does not exist.
func WindowFilter(info *routes.TableInfo, out *arrow.Schema, opts routes.ReadOptions, hint string) (*Filter, []string, error) {
	var need []string
	for _, f := range out.Fields() {
		need = append(need, f.Name)
	}
	if opts.After == "" && opts.Until == "" {
		return nil, need, nil
	}
	col, ok := info.Column(opts.Cursor)
	if !ok {
		return nil, nil, &routes.ProbeError{Table: info.Ref.String(), Column: opts.Cursor, Problem: "cursor column does not exist", Hint: hint}
	}
	var e Expr
	if opts.After != "" {
		e = &Cmp{Col: col.Name, Op: Gt, Lit: String(opts.After)}
	}
	if opts.Until != "" {
		var u Expr = &Cmp{Col: col.Name, Op: LtEq, Lit: String(opts.Until)}
		if e != nil {
			u = &And{L: e, R: u}
		}
		e = u
	}
	if out.FieldIndices(col.Name) == nil {
		need = append(need, col.Name)
	}
	f, err := Compile(e, (&routes.TableInfo{Columns: []routes.Column{col}}).Schema())
	return f, need, err
}
