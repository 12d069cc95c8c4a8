package weir_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
)

// Iceberg as a torture source: tables written by iceberg-go itself (not
// weir), holding Go values; Want is their canonical text.

type iceCase struct {
	name   string
	typ    iceberg.Type
	vals   []any
	want   []string
	refuse string
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

var iceCases = []iceCase{
	{"int", iceberg.PrimitiveTypes.Int32, []any{int32(math.MinInt32), int32(math.MaxInt32)}, []string{"-2147483648", "2147483647"}, ""},
	{"long", iceberg.PrimitiveTypes.Int64, []any{int64(math.MinInt64), int64(math.MaxInt64)}, []string{"-9223372036854775808", "9223372036854775807"}, ""},
	{"double", iceberg.PrimitiveTypes.Float64, []any{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), math.MaxFloat64, 5e-324},
		[]string{"NaN", "+Inf", "-Inf", "-0", "1.7976931348623157e+308", "5e-324"}, "mysql"},
	{"float", iceberg.PrimitiveTypes.Float32, []any{float32(math.NaN()), float32(math.Inf(1)), float32(math.MaxFloat32), float32(0.1)},
		[]string{"NaN", "+Inf", "3.4028235e+38", "0.1"}, "mysql"},
	{"dec", iceberg.DecimalTypeOf(38, 18), []any{"99999999999999999999.999999999999999999", "-0.000000000000000001"},
		[]string{"99999999999999999999.999999999999999999", "-0.000000000000000001"}, ""},
	{"str", iceberg.PrimitiveTypes.String, []any{"", "é", "😀🎉 𝄞", "a\tb\nc", `\N`, " "}, []string{"", "é", "😀🎉 𝄞", "a\tb\nc", `\N`, " "}, ""},
	{"bin", iceberg.PrimitiveTypes.Binary, []any{[]byte{}, []byte{0x41, 0x42, 0, 0}, []byte{0}}, []string{"", "41420000", "00"}, ""},
	{"fixed", iceberg.FixedTypeOf(4), []any{[]byte{0x41, 0x42, 0, 0}, []byte{0, 0, 0x41, 0x42}}, []string{"41420000", "00004142"}, ""},
	{"date", iceberg.PrimitiveTypes.Date, []any{day(1970, 1, 1), day(9999, 12, 31), day(1, 1, 1)}, []string{"1970-01-01", "9999-12-31", "0001-01-01"}, "clickhouse"},
	{"date10000", iceberg.PrimitiveTypes.Date, []any{day(10000, 1, 1)}, []string{"10000-01-01"}, "mysql,clickhouse"},
	{"datebc", iceberg.PrimitiveTypes.Date, []any{day(-43, 3, 15)}, []string{"-0043-03-15"}, "mysql,clickhouse"},
	{"ts", iceberg.PrimitiveTypes.Timestamp, []any{day(1970, 1, 1), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		[]string{"1970-01-01 00:00:00.000000", "9999-12-31 23:59:59.999999"}, "clickhouse"},
	{"tstz", iceberg.PrimitiveTypes.TimestampTz, []any{time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)}, []string{"2024-01-02 03:04:05.123456"}, "clickhouse"},
	{"time", iceberg.PrimitiveTypes.Time, []any{time.Duration(0), 24*time.Hour - time.Microsecond}, []string{"00:00:00.000000", "23:59:59.999999"}, ""},
	{"bool", iceberg.PrimitiveTypes.Bool, []any{true, false}, []string{"true", "false"}, ""},
}

var icebergTorture = func() []cdctest.Case {
	var out []cdctest.Case
	for _, c := range iceCases {
		cc := cdctest.Case{Name: c.name, Type: c.typ.String(), Refuse: c.refuse}
		for _, w := range c.want {
			cc.Values = append(cc.Values, cdctest.Value{Want: w})
		}
		out = append(out, cc)
	}
	return out
}()

func openIcebergTorture(t *testing.T, ctx context.Context, _ []cdctest.Case) *cdctest.DB {
	f := icebergtest.New(t)
	cat := f.Endpoint().Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range iceCases {
		sc := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "v", Type: c.typ})
		tbl, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, "t_" + c.name}, sc, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
		if err != nil {
			t.Fatalf("create t_%s: %v", c.name, err)
		}
		as, err := table.SchemaToArrowSchema(sc, nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for i, v := range append(c.vals, nil) {
			b.Field(0).(*array.Int64Builder).Append(int64(i + 1))
			appendIce(t, b.Field(1), v)
		}
		rec := b.NewRecordBatch()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Append(ctx, rdr, nil); err != nil {
			t.Fatalf("append t_%s: %v", c.name, err)
		}
		rdr.Release()
		rec.Release()
		b.Release()
	}
	return &cdctest.DB{Kind: "iceberg", URL: f.URL(), Schema: f.Namespace}
}

func appendIce(t *testing.T, b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		typ := b.Type().(*arrow.Decimal128Type)
		n, err := decimal128.FromString(v.(string), typ.Precision, typ.Scale)
		if err != nil {
			t.Fatal(err)
		}
		b.Append(n)
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		b.Append(v.([]byte))
	case *array.Date32Builder:
		b.Append(arrow.Date32FromTime(v.(time.Time)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(time.Duration).Microseconds()))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	default:
		t.Fatalf("no Iceberg torture value for %T", b)
	}
}
