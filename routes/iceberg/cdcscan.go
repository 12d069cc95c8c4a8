package iceberg

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/cdc"
)

// cell is a value read back from the table: appended to a builder as it
// was scanned, never through text a source would send.
type cell struct {
	arr arrow.Array
	i   int
}

// appendCell appends a change value or a scanned cell.
func appendCell(b array.Builder, v any) error {
	c, ok := v.(cell)
	if !ok {
		return appendChange(b, v)
	}
	if c.arr.IsNull(c.i) {
		b.AppendNull()
		return nil
	}
	if sb, ok := b.(*array.StringBuilder); ok {
		if s, ok := c.arr.(*array.String); ok {
			sb.Append(s.Value(c.i))
			return nil
		}
	}
	return b.AppendValueFromString(c.arr.ValueStr(c.i))
}

// keyValues is the key of a full row of t.
func keyValues(t *cdc.Table, row []any) []any {
	key := make([]any, len(t.Key))
	for i, k := range t.Key {
		key[i] = row[k]
	}
	return key
}

// keyText renders key values as the table's key columns would hold them,
// so a source's key ("7" from pgoutput, int32 7 from the binlog) and a
// scanned one compare equal.
func (tt *tableTx) keyText(key []any) string {
	ks := keySchemaOf(tt.st.target, tt.t.KeyNames())
	idx := make([]int, len(key))
	for i := range idx {
		idx[i] = i
	}
	rec, err := buildBatch(ks, idx, [][]any{key})
	if err != nil {
		return "\x00invalid:" + fmt.Sprint(key...)
	}
	defer rec.Release()
	return rowKey(rec, allColumns(ks.NumFields()), 0)
}

func allColumns(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// rowKey joins the text of a row's key columns.
func rowKey(rec arrow.RecordBatch, cols []int, i int) string {
	var b strings.Builder
	for _, c := range cols {
		a := rec.Column(c)
		if a.IsNull(i) {
			b.WriteString("\x00null")
		} else {
			b.WriteString(a.ValueStr(i))
		}
		b.WriteByte(0)
	}
	return b.String()
}

// currentRows scans the transaction's current state (the committed table
// plus the run's staged snapshots) for the rows with the given keys and
// returns their cells, aligned with the capture's columns, by keyText.
// rank, when set, picks among several rows of one key (a changelog's
// versions): the row with the highest rank wins, ok false skips a row.
func (tt *tableTx) currentRows(ctx context.Context, keys [][]any, rank func(rec arrow.RecordBatch, i int) (string, bool)) (map[string][]any, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[tt.keyText(k)] = true
	}
	var opts []table.ScanOption
	if f := tt.keyFilter(keys); f != nil {
		opts = append(opts, table.WithRowFilter(f))
	}
	scan, err := tt.tx.Scan(opts...)
	if err != nil {
		return nil, err
	}
	if scan.Snapshot() == nil {
		return nil, nil
	}
	_, batches, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	found, ranks := map[string][]any{}, map[string]string{}
	for rec, err := range batches {
		if err != nil {
			return nil, err
		}
		kcols := columnsOf(rec.Schema(), tt.t.KeyNames())
		cols := columnsOf(rec.Schema(), tt.t.Columns)
		for i := 0; i < int(rec.NumRows()); i++ {
			k := rowKey(rec, kcols, i)
			if !want[k] {
				continue
			}
			if rank != nil {
				r, ok := rank(rec, i)
				if prev, seen := ranks[k]; !ok || (seen && r <= prev) {
					continue
				}
				ranks[k] = r
			}
			row := make([]any, len(cols))
			for j, c := range cols {
				row[j] = cell{arr: rec.Column(c), i: i}
			}
			found[k] = row
		}
	}
	return found, nil
}

// columnsOf is the index of each name in schema (-1 when absent).
func columnsOf(schema *arrow.Schema, names []string) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = -1
		if idx := schema.FieldIndices(n); len(idx) > 0 {
			out[i] = idx[0]
		}
	}
	return out
}

// keyFilter narrows the scan to the keys when the key is one integer or
// text column (the matching is exact in Go either way).
func (tt *tableTx) keyFilter(keys [][]any) iceberg.BooleanExpression {
	names := tt.t.KeyNames()
	if len(names) != 1 {
		return nil
	}
	ks := keySchemaOf(tt.st.target, names)
	rec, err := buildBatch(ks, []int{0}, keys)
	if err != nil {
		return nil
	}
	defer rec.Release()
	ref := iceberg.Reference(names[0])
	switch a := rec.Column(0).(type) {
	case *array.Int32:
		return iceberg.IsIn(ref, nonNull(a, a.Value)...)
	case *array.Int64:
		return iceberg.IsIn(ref, nonNull(a, a.Value)...)
	case *array.String:
		return iceberg.IsIn(ref, nonNull(a, a.Value)...)
	}
	return nil
}

func nonNull[T any](a arrow.Array, value func(int) T) []T {
	out := make([]T, 0, a.Len())
	for i := 0; i < a.Len(); i++ {
		if !a.IsNull(i) {
			out = append(out, value(i))
		}
	}
	return out
}

// keySchemaOf is the fields of target with the given names.
func keySchemaOf(target *arrow.Schema, names []string) *arrow.Schema {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = target.Field(target.FieldIndices(n)[0])
	}
	return arrow.NewSchema(fields, nil)
}
