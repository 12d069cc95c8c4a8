package bigquery

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// TestConvert_ParquetRoundTrip converts source columns to their staged
// types, writes them with fileformat's Parquet encoder (what a load job
// receives) and reads the file back: values and Parquet logical types
// are the ones BigQuery's loader maps to the staging table's columns.
func TestConvert_ParquetRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	info := &routes.TableInfo{Ref: routes.TableRef{Name: "t"}, Columns: []routes.Column{
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, Nullable: true},
		{Name: "dt", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "tm", Type: arrow.FixedWidthTypes.Time64ns, Nullable: true},
		{Name: "wide", Type: &arrow.Decimal256Type{Precision: 76, Scale: 0}, Nullable: true},
		{Name: "doc", Type: arrow.BinaryTypes.String, NativeType: "jsonb", Nullable: true},
		{Name: "ints", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "iv", Type: arrow.FixedWidthTypes.MonthDayNanoInterval, Nullable: true},
	}}
	src, _, err := array.RecordFromJSON(mem, info.Schema(), strings.NewReader(`[
		{"u64": 18446744073709551615, "f32": 1.5, "ts": "2024-02-29T23:59:59.123456789Z", "dt": "2024-01-31T12:00:00.5",
		 "tm": 3723000001000, "wide": "1234567890123456789012345678901234567890", "doc": "{\"a\": [1, 2]}",
		 "ints": [1, 2, 3], "iv": {"months": 1, "days": 2, "nanoseconds": 3000}},
		{"u64": null, "f32": null, "ts": null, "dt": null, "tm": null, "wide": null, "doc": null, "ints": null, "iv": null}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Release()
	lay, err := newLayout(info)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := lay.convert(context.Background(), src, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Release()

	var buf bytes.Buffer
	enc, err := fileformat.NewEncoder(&buf, lay.arrow, fileformat.Parquet, fileformat.EncoderOptions{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(conv); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()

	want := map[string]struct {
		value   string // first row, as Arrow prints it
		logical string // the Parquet logical type BigQuery reads
	}{
		"u64":  {"18446744073709551615", "Decimal(precision=20, scale=0)"},
		"f32":  {"1.5", "None"},
		"ts":   {"2024-02-29T23:59:59.123456Z", "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)"},
		"dt":   {"2024-01-31T12:00:00.5", "Timestamp(isAdjustedToUTC=false, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)"},
		"tm":   {"01:02:03.000001", "Time(isAdjustedToUTC=false, timeUnit=microseconds)"},
		"wide": {"1234567890123456789012345678901234567890", "String"},
		"doc":  {`{"a": [1, 2]}`, "JSON"},
		"ints": {"[1,2,3]", "List"},
		"iv":   {`{"months":1,"days":2,"nanoseconds":3000}`, "String"},
	}
	for i, f := range tbl.Schema().Fields() {
		w := want[f.Name]
		col := tbl.Column(i).Data().Chunk(0)
		if got := valueText(col, 0); got != w.value {
			t.Errorf("%s: value %q, want %q", f.Name, got, w.value)
		}
		if !col.IsNull(1) {
			t.Errorf("%s: NULL became %q", f.Name, col.ValueStr(1))
		}
		if got := leafLogical(rdr.MetaData().Schema, f.Name); got != w.logical {
			t.Errorf("%s: Parquet logical type %s, want %s", f.Name, got, w.logical)
		}
	}
}

// valueText prints a value; JSON reads back as bytes.
func valueText(a arrow.Array, i int) string {
	if b, ok := a.(*array.Binary); ok {
		return string(b.Value(i))
	}
	return a.ValueStr(i)
}

// leafLogical is the logical type of a column's node (its group for lists).
func leafLogical(s *schema.Schema, name string) string {
	n := s.Root().Field(s.Root().FieldIndexByName(name))
	return n.LogicalType().String()
}
