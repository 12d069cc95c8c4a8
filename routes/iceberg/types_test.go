package iceberg

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestConvert_ArrowTypes maps the Arrow types the MySQL and Postgres
// routes decode to (beyond those the Postgres tests load) to Iceberg and
// converts a value of each to the table's Arrow type.
func TestConvert_ArrowTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tests := []struct {
		name    string
		typ     arrow.DataType
		build   func(b array.Builder)
		iceberg string
		want    string
	}{
		{"uint64", arrow.PrimitiveTypes.Uint64, func(b array.Builder) { b.(*array.Uint64Builder).Append(18446744073709551615) }, "decimal(20, 0)", "18446744073709551615"},
		{"uint32", arrow.PrimitiveTypes.Uint32, func(b array.Builder) { b.(*array.Uint32Builder).Append(4294967295) }, "long", "4294967295"},
		{"int8", arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(-128) }, "int", "-128"},
		{"uint16", arrow.PrimitiveTypes.Uint16, func(b array.Builder) { b.(*array.Uint16Builder).Append(65535) }, "int", "65535"},
		{"duration", arrow.FixedWidthTypes.Duration_us, func(b array.Builder) { b.(*array.DurationBuilder).Append(-3020399000000) }, "string", "-838:59:59"},
		{"interval", arrow.FixedWidthTypes.MonthDayNanoInterval, func(b array.Builder) {
			b.(*array.MonthDayNanoIntervalBuilder).Append(arrow.MonthDayNanoInterval{Months: -1, Days: -2, Nanoseconds: -1000})
		}, "string", "-1 mons -2 days -00:00:00.000001"},
		{"decimal256", &arrow.Decimal256Type{Precision: 60, Scale: 2}, func(b array.Builder) {
			v, _ := decimal256.FromString("-1234567890123456789012345678901234567890.55", 60, 2)
			b.(*array.Decimal256Builder).Append(v)
		}, "string", "-1234567890123456789012345678901234567890.55"},
		{"json", jsonType(), func(b array.Builder) { b.AppendValueFromString(`{"a":1}`) }, "string", `{"a":1}`},
		{"date64", arrow.FixedWidthTypes.Date64, func(b array.Builder) { b.(*array.Date64Builder).Append(86400000) }, "date", "1970-01-02"},
		{"time32", arrow.FixedWidthTypes.Time32s, func(b array.Builder) { b.(*array.Time32Builder).Append(3661) }, "time", "01:01:01.000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := icebergType(tc.typ, &idGen{next: 1})
			if err != nil || it.String() != tc.iceberg {
				t.Fatalf("Iceberg type %v (%v), want %s", it, err, tc.iceberg)
			}
			sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: it})
			as, err := table.SchemaToArrowSchema(sc, nil, true, false)
			if err != nil {
				t.Fatal(err)
			}
			b := array.NewBuilder(mem, tc.typ)
			defer b.Release()
			tc.build(b)
			arr := b.NewArray()
			defer arr.Release()
			out, err := convertArray(context.Background(), arr, as.Field(0).Type, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			if got := out.ValueStr(0); got != tc.want {
				t.Fatalf("converted %s to %q, want %q", tc.typ, got, tc.want)
			}
		})
	}
}

func jsonType() arrow.DataType {
	t, _ := extensions.NewJSONType(arrow.BinaryTypes.String)
	return t
}
