package clickhouse_test

import (
	"context"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// readArrow reads a whole table through the route's source, one pipe,
// and returns its rows ordered by the int64 column id, each as the text
// arrow-go gives its values (decimals exact).
func readArrow(t *testing.T, ctx context.Context, url, table string) (*arrow.Schema, map[int64][]*string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	src, err := routes.OpenSource(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ref, _ := routes.ParseTableRef(table)
	info, err := src.Probe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]*string{}
	for _, r := range ranges {
		s, err := src.Read(ctx, r, routes.ReadOptions{Allocator: mem, ChunkBytes: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			collect(s.RecordBatch(), out)
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	return info.Schema(), out
}

func collect(b arrow.RecordBatch, out map[int64][]*string) {
	ids := b.Column(int(b.Schema().FieldIndices("id")[0])).(*array.Int64)
	for i := 0; i < int(b.NumRows()); i++ {
		row := make([]*string, b.NumCols())
		for c := range row {
			if col := b.Column(c); col.IsValid(i) {
				v := text(col, i)
				row[c] = &v
			}
		}
		out[ids.Value(i)] = row
	}
}

func text(col arrow.Array, i int) string {
	switch a := col.(type) {
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale)
	}
	return col.ValueStr(i)
}

// readColumnText returns one column's values ordered by id.
func readColumnText(t *testing.T, ctx context.Context, url, table, col string) []*string {
	schema, rows := readArrow(t, ctx, url, table)
	idx := schema.FieldIndices(col)[0]
	ids := make([]int64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]*string, len(ids))
	for i, id := range ids {
		out[i] = rows[id][idx]
	}
	return out
}
