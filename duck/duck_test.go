//go:build cgo

package duck

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// reader has n rows: id (0..n-1), amount decimal(12,2) (id + 1.00), s "x".
func reader(t *testing.T, mem memory.Allocator, n int) array.RecordReader {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i*100 + 100)))
		b.Field(2).(*array.StringBuilder).Append("x")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	r, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func open(t *testing.T) *DB {
	t.Helper()
	d, err := Open(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestOpen_Settings(t *testing.T) {
	d := open(t)
	for _, name := range []string{"autoinstall_known_extensions", "autoload_known_extensions"} {
		var v string
		if err := d.QueryRow(t.Context(), "SELECT current_setting('"+name+"')::VARCHAR", &v); err != nil {
			t.Fatal(err)
		}
		if v != "false" {
			t.Errorf("%s = %s, want false", name, v)
		}
	}
	s, err := d.Schema(t.Context(), "SELECT now() AS ts, 1.5::DECIMAL(12,2) AS d")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Field(0).Type.String(); got != "timestamp[us, tz=UTC]" {
		t.Errorf("zoned timestamp is %s", got)
	}
	if got := s.Field(1).Type.String(); got != "decimal(12, 2)" {
		t.Errorf("decimal is %s", got)
	}
}

// TestDB_Load: a loaded batch answers projections, filters, aggregates and
// self-joins correctly (a raw Arrow view does not), and is released.
func TestDB_Load(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	d := open(t)
	ctx := t.Context()
	n, err := d.Load(ctx, "input", reader(t, mem, 3000))
	if err != nil || n != 3000 {
		t.Fatalf("Load = %d, %v", n, err)
	}
	tests := []struct {
		query string
		want  string
	}{
		{"SELECT sum(amount)::VARCHAR FROM input WHERE id >= 2990", "29955.00"},
		{"SELECT amount::VARCHAR FROM input WHERE id = 7", "8.00"},
		{"SELECT count(*)::VARCHAR FROM input a JOIN input b USING (id)", "3000"},
		{"SELECT count(*)::VARCHAR FROM input WHERE id > 1", "2998"},
	}
	for _, tt := range tests {
		var got string
		if err := d.QueryRow(ctx, tt.query, &got); err != nil || got != tt.want {
			t.Errorf("%s = %s, %v; want %s", tt.query, got, err, tt.want)
		}
	}
	mem.AssertSize(t, 0)
}

func TestDB_QueryArrow(t *testing.T) {
	d := open(t)
	ctx := t.Context()
	if _, err := d.Load(ctx, "input", reader(t, memory.DefaultAllocator, 3000)); err != nil {
		t.Fatal(err)
	}
	r, err := d.Query(ctx, "SELECT id * 2 AS x, amount FROM input WHERE id < 2500")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var rows int64
	for r.Next() {
		rows += r.RecordBatch().NumRows()
	}
	if r.Err() != nil || rows != 2500 {
		t.Fatalf("rows = %d, err %v", rows, r.Err())
	}
}

func TestDB_Reset(t *testing.T) {
	d := open(t)
	ctx := t.Context()
	if _, err := d.Load(ctx, "input", reader(t, memory.DefaultAllocator, 10)); err != nil {
		t.Fatal(err)
	}
	if err := d.Exec(ctx, "CREATE TEMP TABLE _weir_out AS SELECT * FROM input"); err != nil {
		t.Fatal(err)
	}
	if err := d.Exec(ctx, "CREATE TEMP VIEW v AS SELECT * FROM input"); err != nil {
		t.Fatal(err)
	}
	if err := d.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := d.QueryRow(ctx, "SELECT (SELECT count(*) FROM duckdb_tables() WHERE temporary) + (SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal)", &n); err != nil || n != 0 {
		t.Fatalf("after Reset: %d temporary objects, %v", n, err)
	}
	if err := d.Exec(ctx, "CREATE TEMP TABLE _weir_out AS SELECT 1 AS x"); err != nil {
		t.Fatalf("a second run's tables: %v", err)
	}
}

func TestDB_TablesRead(t *testing.T) {
	d := open(t)
	tests := []struct {
		name, query string
		want        []string
	}{
		{"one", "SELECT * FROM input", []string{"input"}},
		{"join, subquery, schema, case", `WITH b AS (SELECT * FROM o JOIN C USING (id)) SELECT * FROM b LEFT JOIN main.This t USING (id) WHERE id IN (SELECT id FROM o)`,
			[]string{"b", "c", "o", "this"}},
		{"none", "SELECT 1", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.TablesRead(t.Context(), tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := d.TablesRead(t.Context(), "SELEC 1"); err == nil {
		t.Error("a syntax error passed")
	}
}
