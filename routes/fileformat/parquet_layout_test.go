package fileformat_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
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

// TestParquet_DictionaryOnlyWhereItHolds: a string column whose first row
// group fills a dictionary of DictionaryLimit bytes is written plain in
// every row group (arrow-go would hash a few thousand values of each into a
// dictionary and give it up); a column of few distinct values keeps its
// dictionary. Both read back exact: empty and multibyte strings and NULLs.
func TestParquet_DictionaryOnlyWhereItHolds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "unique", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "few", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "large", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "few2", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	few := []string{"", "R", "été", "日本語", "TRUCK"}
	few2 := few[1:] // no "": written as a dictionary array (see dictionaryArray)
	const n = 30000 // ~40 bytes of unique strings a row: over 1 MiB in all
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	var recs []arrow.RecordBatch // batches of 1,000 rows
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		u, f, l := b.Field(1).(*array.StringBuilder), b.Field(2).(*array.StringBuilder), b.Field(3).(*array.LargeStringBuilder)
		f2 := b.Field(4).(*array.StringBuilder)
		switch i % 7 {
		case 0:
			u.AppendNull()
			f.AppendNull()
			l.AppendNull()
			f2.AppendNull()
		case 1:
			u.Append("")
			f.Append(few[i%len(few)])
			l.Append("")
			f2.Append(few2[i%len(few2)])
		default:
			s := fmt.Sprintf("ünïque comment №%d, carefully furious deposits", i)
			u.Append(s)
			f.Append(few[i%len(few)])
			l.Append(s)
			f2.Append(few2[i%len(few2)])
		}
		if i%1000 == 999 {
			recs = append(recs, b.NewRecordBatch())
		}
	}
	var buf bytes.Buffer
	// 512 KiB row groups: several, each of several batches.
	enc, err := fileformat.NewEncoder(&buf, sc, fileformat.Parquet, fileformat.EncoderOptions{Allocator: mem, RowGroupBytes: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := enc.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRowGroups() < 3 {
		t.Fatalf("%d row groups, want several", pf.NumRowGroups())
	}
	want := map[string]bool{"id": false, "unique": false, "few": true, "large": false, "few2": true}
	for g := range pf.NumRowGroups() {
		rg := pf.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			name := pf.MetaData().Schema.Column(c).Name()
			if cc.HasDictionaryPage() != want[name] {
				t.Errorf("row group %d, column %s: dictionary %v, want %v", g, name, cc.HasDictionaryPage(), want[name])
			}
		}
	}
	// the statistics of the dictionary columns: min, max and NULLs in
	// each row group, as the values say
	for col, vals := range map[int][]string{2: few, 4: few2} {
		first := 0
		for g := range pf.NumRowGroups() {
			rg := pf.MetaData().RowGroup(g)
			cc, err := rg.ColumnChunk(col)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil || st == nil {
				t.Fatalf("row group %d: no statistics for column %d (%v)", g, col, err)
			}
			var lo, hi string
			nulls, set := int64(0), false
			for i := first; i < first+int(rg.NumRows()); i++ {
				if i%7 == 0 {
					nulls++
					continue
				}
				v := vals[i%len(vals)]
				if !set || v < lo {
					lo = v
				}
				if !set || v > hi {
					hi = v
				}
				set = true
			}
			bs := st.(*metadata.ByteArrayStatistics)
			if string(bs.Min()) != lo || string(bs.Max()) != hi || bs.NullCount() != nulls {
				t.Errorf("row group %d, column %d: min %q max %q nulls %d, want %q %q %d", g, col, bs.Min(), bs.Max(), bs.NullCount(), lo, hi, nulls)
			}
			first += int(rg.NumRows())
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	for c := range int(tbl.NumCols()) {
		got, err := array.Concatenate(tbl.Column(c).Data().Chunks(), mem)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]arrow.Array, len(recs))
		for i, r := range recs {
			src[i] = r.Column(c)
		}
		wantCol, err := array.Concatenate(src, mem)
		if err != nil {
			t.Fatal(err)
		}
		eq := array.Equal(got, wantCol)
		wantCol.Release()
		if !eq {
			t.Errorf("column %s does not read back equal", sc.Field(c).Name)
		}
		got.Release()
	}
}

// TestParquet_StringsNotHashedValueByValue: string values are not hashed
// one by one into arrow-go's memo table, which allocates on every value it
// hashes: neither a column of unique strings (its dictionary would be given
// up) nor one of few values (its dictionary is built by the encoder).
// Writing 16,000 rows of both, in three row groups, allocates fewer times
// than there are rows.
func TestParquet_StringsNotHashedValueByValue(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "comment", Type: arrow.BinaryTypes.String}, {Name: "mode", Type: arrow.BinaryTypes.String}}, nil)
	modes := []string{"AIR", "MAIL", "RAIL", "SHIP", "TRUCK", "REG AIR", "FOB"}
	var recs []arrow.RecordBatch
	for r := range 8 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range 2000 {
			b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("comment %d of batch %d: furiously final deposits", i, r))
			b.Field(1).(*array.StringBuilder).Append(modes[i%len(modes)])
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var row0 int
	allocs := testing.AllocsPerRun(1, func() {
		var buf bytes.Buffer
		enc, err := fileformat.NewEncoder(&buf, sc, fileformat.Parquet, fileformat.EncoderOptions{RowGroupBytes: 256 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := enc.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		row0 = buf.Len()
	})
	t.Logf("%.0f allocations for 16,000 rows, %d bytes", allocs, row0)
	if allocs >= 16000/4 {
		t.Errorf("%.0f allocations writing 16,000 rows of strings: values are hashed one by one", allocs)
	}
}
