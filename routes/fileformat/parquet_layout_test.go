package fileformat_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/weirhq/weir/routes/fileformat"
	"github.com/weirhq/weir/routes/routestest"
)

// TestParquet_DecimalsAsIntegers: a decimal is stored in the narrowest
// physical type the Parquet spec allows for its precision (INT32 ≤ 9,
// INT64 ≤ 18, else FIXED_LEN_BYTE_ARRAY) and reads back exact at the
// limits of each. (This file sorts after fileformat_test.go: the lean zstd
// test must be the first of this binary to write.)
func TestParquet_DecimalsAsIntegers(t *testing.T) {
	cases := []struct {
		precision, scale int32
		physical         parquet.Type
		values           []string
	}{
		{9, 2, parquet.Types.Int32, []string{"9999999.99", "-9999999.99", "0.01", "0.00"}},
		{9, 0, parquet.Types.Int32, []string{"999999999", "-999999999"}},
		{10, 2, parquet.Types.Int64, []string{"99999999.99", "-99999999.99"}},
		{18, 4, parquet.Types.Int64, []string{"99999999999999.9999", "-99999999999999.9999", "-0.0001"}},
		{18, 18, parquet.Types.Int64, []string{"0.999999999999999999", "-0.999999999999999999"}},
		{19, 0, parquet.Types.FixedLenByteArray, []string{"9999999999999999999", "-9999999999999999999"}},
		{38, 18, parquet.Types.FixedLenByteArray, []string{"99999999999999999999.999999999999999999", "-0.000000000000000001"}},
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var fields []arrow.Field
	for _, c := range cases {
		fields = append(fields, arrow.Field{Name: "d", Type: &arrow.Decimal128Type{Precision: c.precision, Scale: c.scale}, Nullable: true})
	}
	for i, c := range cases {
		t.Run(fields[i].Type.String(), func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{fields[i]}, nil)
			b := array.NewDecimal128Builder(mem, fields[i].Type.(*arrow.Decimal128Type))
			defer b.Release()
			for _, v := range c.values {
				n, err := decimal128.FromString(v, c.precision, c.scale)
				if err != nil {
					t.Fatal(err)
				}
				b.Append(n)
			}
			b.AppendNull()
			col := b.NewArray()
			defer col.Release()
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
			defer rec.Release()

			var buf bytes.Buffer
			enc, err := fileformat.NewEncoder(&buf, schema, fileformat.Parquet, fileformat.EncoderOptions{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if err := enc.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if got := pf.MetaData().Schema.Column(0).PhysicalType(); got != c.physical {
				t.Errorf("decimal(%d,%d) stored as %s, want %s", c.precision, c.scale, got, c.physical)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := fr.ReadTable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Release()
			if !arrow.TypeEqual(tbl.Schema().Field(0).Type, fields[i].Type) {
				t.Fatalf("read back as %s, want %s", tbl.Schema().Field(0).Type, fields[i].Type)
			}
			got := tbl.Column(0).Data().Chunk(0).(*array.Decimal128)
			for r, want := range c.values {
				if s := got.Value(r).ToString(c.scale); s != want {
					t.Errorf("row %d: read back %s, want %s", r, s, want)
				}
			}
			if !got.IsNull(len(c.values)) {
				t.Errorf("the NULL read back as %s", got.ValueStr(len(c.values)))
			}
		})
	}
}

// TestParquet_DictionaryOnlyOnStrings: only string columns are written
// with a dictionary (DictionaryColumns); the Iceberg route sets the same
// rule on the tables it creates.
func TestParquet_DictionaryOnlyOnStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := routestest.Batch(mem, routestest.Rows(1, 3000))
	defer rec.Release()
	var buf bytes.Buffer
	enc, err := fileformat.NewEncoder(&buf, rec.Schema(), fileformat.Parquet, fileformat.EncoderOptions{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	strings := 0
	sc := pf.MetaData().Schema
	rg := pf.MetaData().RowGroup(0)
	for c := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		isString := sc.Column(c).LogicalType().Equals(schema.StringLogicalType{})
		if isString {
			strings++
		}
		if cc.HasDictionaryPage() != isString {
			t.Errorf("column %s: dictionary %v, want %v", sc.Column(c).Name(), cc.HasDictionaryPage(), isString)
		}
	}
	if strings == 0 || strings == rg.NumColumns() {
		t.Fatalf("%d of %d columns are strings: the fixture must have both kinds", strings, rg.NumColumns())
	}
}
