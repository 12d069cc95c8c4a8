package postgres

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// foreignColumn is one column of a batch shaped like a non-Postgres
// source's, with its rows 1 and 2 (row 3 is all NULL) and the text
// PostgreSQL prints for them once loaded.
type foreignColumn struct {
	name, native string
	typ          arrow.DataType
	fill         func(b array.Builder) // appends rows 1 and 2
	want         [2]string
}

func mustDec128(s string, p, sc int32) decimal128.Num {
	n, err := decimal128.FromString(s, p, sc)
	if err != nil {
		panic(err)
	}
	return n
}

func mustDec256(s string, p, sc int32) decimal256.Num {
	n, err := decimal256.FromString(s, p, sc)
	if err != nil {
		panic(err)
	}
	return n
}

var foreignColumns = []foreignColumn{
	{"u64", "bigint unsigned", arrow.PrimitiveTypes.Uint64, func(b array.Builder) {
		b.(*array.Uint64Builder).AppendValues([]uint64{math.MaxUint64, 0}, nil)
	}, [2]string{"18446744073709551615", "0"}},
	{"u32", "int unsigned", arrow.PrimitiveTypes.Uint32, func(b array.Builder) {
		b.(*array.Uint32Builder).AppendValues([]uint32{math.MaxUint32, 1}, nil)
	}, [2]string{"4294967295", "1"}},
	{"i8", "tinyint", arrow.PrimitiveTypes.Int8, func(b array.Builder) {
		b.(*array.Int8Builder).AppendValues([]int8{-128, 127}, nil)
	}, [2]string{"-128", "127"}},
	{"yr", "year", arrow.PrimitiveTypes.Uint16, func(b array.Builder) {
		b.(*array.Uint16Builder).AppendValues([]uint16{2024, 1901}, nil)
	}, [2]string{"2024", "1901"}},
	{"dec", "decimal(20,4)", &arrow.Decimal128Type{Precision: 20, Scale: 4}, func(b array.Builder) {
		b.(*array.Decimal128Builder).AppendValues([]decimal128.Num{mustDec128("12345678901234.5678", 20, 4), mustDec128("-0.0001", 20, 4)}, nil)
	}, [2]string{"12345678901234.5678", "-0.0001"}},
	{"d256", "decimal(50,10)", &arrow.Decimal256Type{Precision: 50, Scale: 10}, func(b array.Builder) {
		b.(*array.Decimal256Builder).AppendValues([]decimal256.Num{mustDec256("1234567890123456789012345678901234567890.0123456789", 50, 10), mustDec256("-1", 50, 10)}, nil)
	}, [2]string{"1234567890123456789012345678901234567890.0123456789", "-1.0000000000"}},
	{"js", "json", arrow.BinaryTypes.String, func(b array.Builder) {
		b.(*array.StringBuilder).AppendValues([]string{`{"a":[1,2]}`, `[]`}, nil)
	}, [2]string{`{"a":[1,2]}`, "[]"}}, // MySQL json lands as json: the text exactly
	{"txt", "varchar(10)", arrow.BinaryTypes.String, func(b array.Builder) {
		b.(*array.StringBuilder).AppendValues([]string{"héllo", ""}, nil)
	}, [2]string{"héllo", ""}},
	{"li", "", arrow.ListOf(arrow.PrimitiveTypes.Int64), func(b array.Builder) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2, 0}, []bool{true, true, false})
		lb.Append(true)
	}, [2]string{"{1,2,NULL}", "{}"}},
	{"ls", "", arrow.ListOf(arrow.BinaryTypes.String), func(b array.Builder) {
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("x,y")
	}, [2]string{"{a,NULL}", `{"x,y"}`}},
	{"ts", "", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, func(b array.Builder) {
		ms := time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC).UnixMilli()
		b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(ms), math.MinInt64}, nil)
	}, [2]string{"2024-01-02 03:04:05.678+00", "-infinity"}},
	{"tns", "", &arrow.TimestampType{Unit: arrow.Nanosecond}, func(b array.Builder) {
		ns := time.Date(1969, 12, 31, 23, 59, 59, 123456789, time.UTC).UnixNano()
		b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{arrow.Timestamp(ns), math.MaxInt64}, nil)
	}, [2]string{"1969-12-31 23:59:59.123456", "infinity"}},
	{"d32", "", arrow.FixedWidthTypes.Date32, func(b array.Builder) {
		b.(*array.Date32Builder).AppendValues([]arrow.Date32{19782, 0}, nil)
	}, [2]string{"2024-02-29", "1970-01-01"}},
	{"t32", "", arrow.FixedWidthTypes.Time32ms, func(b array.Builder) {
		b.(*array.Time32Builder).AppendValues([]arrow.Time32{12*3600*1000 + 500, 0}, nil)
	}, [2]string{"12:00:00.5", "00:00:00"}},
	{"f32", "float", arrow.PrimitiveTypes.Float32, func(b array.Builder) {
		b.(*array.Float32Builder).AppendValues([]float32{1.25, float32(math.Copysign(0, -1))}, nil)
	}, [2]string{"1.25", "-0"}},
	{"f64", "double", arrow.PrimitiveTypes.Float64, func(b array.Builder) {
		b.(*array.Float64Builder).AppendValues([]float64{math.Pi, math.NaN()}, nil)
	}, [2]string{"3.141592653589793", "NaN"}},
	{"bl", "", arrow.FixedWidthTypes.Boolean, func(b array.Builder) {
		b.(*array.BooleanBuilder).AppendValues([]bool{true, false}, nil)
	}, [2]string{"true", "false"}},
	{"bin", "blob", arrow.BinaryTypes.Binary, func(b array.Builder) {
		b.(*array.BinaryBuilder).AppendValues([][]byte{{0, 1, 2}, {}}, nil)
	}, [2]string{`\x000102`, `\x`}},
	{"fsb", "binary(3)", &arrow.FixedSizeBinaryType{ByteWidth: 3}, func(b array.Builder) {
		b.(*array.FixedSizeBinaryBuilder).AppendValues([][]byte{{1, 2, 3}, {4, 5, 6}}, nil)
	}, [2]string{`\x010203`, `\x040506`}},
	{"uid", "", extensions.NewUUIDType(), func(b array.Builder) {
		b.(*extensions.UUIDBuilder).AppendBytes(uuidBytes)
		b.(*extensions.UUIDBuilder).AppendBytes([16]byte{})
	}, [2]string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000000"}},
	{"mdn", "", arrow.FixedWidthTypes.MonthDayNanoInterval, func(b array.Builder) {
		b.(*array.MonthDayNanoIntervalBuilder).AppendValues([]arrow.MonthDayNanoInterval{{Months: 1, Days: 2, Nanoseconds: 3000001999}, {Months: -1, Nanoseconds: -1000}}, nil)
	}, [2]string{"1 mon 2 days 00:00:03.000001", "-1 mons -00:00:00.000001"}},
	{"dur", "", arrow.FixedWidthTypes.Duration_s, func(b array.Builder) {
		b.(*array.DurationBuilder).AppendValues([]arrow.Duration{3600, -1}, nil)
	}, [2]string{"01:00:00", "-00:00:01"}},
	{"st", "", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), func(b array.Builder) {
		sb := b.(*array.StructBuilder)
		sb.AppendValues([]bool{true, true})
		sb.FieldBuilder(0).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	}, [2]string{`{"a":1}`, `{"a":2}`}},
}

// foreignBatch builds ids 1..3 and every foreign column (row 3 NULL).
func foreignBatch(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
	for _, c := range foreignColumns {
		md := arrow.NewMetadata([]string{routes.MetaNativeType}, []string{c.native})
		fields = append(fields, arrow.Field{Name: c.name, Type: c.typ, Nullable: true, Metadata: md})
	}
	rb := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer rb.Release()
	rb.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	for i, c := range foreignColumns {
		c.fill(rb.Field(i + 1))
		rb.Field(i + 1).AppendNull()
	}
	return rb.NewRecordBatch()
}

func checkForeignRows(t *testing.T, db *codecDB) {
	t.Helper()
	db.exec(t, "SET TimeZone = 'UTC'")
	for _, c := range foreignColumns {
		q := fmt.Sprintf("SELECT %s::text FROM %s.f ORDER BY id", c.name, db.schema)
		rows, err := db.conn.Query(db.ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []*string
		for rows.Next() {
			var s *string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if len(got) != 3 || got[0] == nil || got[1] == nil || got[2] != nil {
			t.Errorf("%s: rows %v", c.name, got)
			continue
		}
		if *got[0] != c.want[0] || *got[1] != c.want[1] {
			t.Errorf("%s (%s): got %q, %q; want %q, %q", c.name, pgType(routes.Column{Type: c.typ, NativeType: c.native}, "mysql"), *got[0], *got[1], c.want[0], c.want[1])
		}
	}
}
