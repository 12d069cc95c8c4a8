package clickhouse

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

// build makes a one-column array with fill, on a checked allocator.
func build(t *testing.T, mem memory.Allocator, typ arrow.DataType, fill func(b array.Builder)) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	fill(b)
	return b.NewArray()
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

var testUUID = uuid.MustParse("61f0c404-5cb3-11e7-907b-a6006ad3dba0")

// encoderCases pin the Native column bytes (and RowBinary bytes) of the
// types weir writes, including modern-only ones 18.16 cannot store.
var encoderCases = []struct {
	name    string
	arrow   arrow.DataType
	chType  string
	fill    func(b array.Builder)
	native  string // hex
	rowBin  string // hex, all rows
	opts    Options
	wantErr string
}{
	{name: "DateTime64_ms", arrow: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, chType: "DateTime64(3, 'UTC')",
		fill:   func(b array.Builder) { b.(*array.TimestampBuilder).Append(1700000000123) },
		native: "7b 68 e5 cf 8b 01 00 00", rowBin: "7b 68 e5 cf 8b 01 00 00"},
	{name: "DateTime64_scale_up", arrow: &arrow.TimestampType{Unit: arrow.Second}, chType: "DateTime64(6, 'UTC')",
		fill:   func(b array.Builder) { b.(*array.TimestampBuilder).Append(1) },
		native: "40 42 0f 00 00 00 00 00", rowBin: "40 42 0f 00 00 00 00 00"},
	{name: "Nullable_Bool", arrow: arrow.FixedWidthTypes.Boolean, chType: "Nullable(Bool)",
		fill: func(b array.Builder) {
			bb := b.(*array.BooleanBuilder)
			bb.Append(true)
			bb.Append(false)
			bb.AppendNull()
		},
		native: "00 00 01 01 00 00", rowBin: "00 01 00 00 01"},
	{name: "Date32_negative", arrow: arrow.FixedWidthTypes.Date32, chType: "Date32",
		fill:   func(b array.Builder) { b.(*array.Date32Builder).Append(-1) },
		native: "ff ff ff ff", rowBin: "ff ff ff ff"},
	{name: "Date_out_of_range", arrow: arrow.FixedWidthTypes.Date32, chType: "Date",
		fill:    func(b array.Builder) { b.(*array.Date32Builder).Append(-1) },
		wantErr: "date 1969-12-31 is outside the ClickHouse Date range"},
	{name: "UUID", arrow: extensions.NewUUIDType(), chType: "UUID",
		fill:   func(b array.Builder) { b.(*extensions.UUIDBuilder).Append(testUUID) },
		native: "e7 11 b3 5c 04 c4 f0 61 a0 db d3 6a 00 a6 7b 90", rowBin: "e7 11 b3 5c 04 c4 f0 61 a0 db d3 6a 00 a6 7b 90"},
	{name: "UUID_as_String", arrow: extensions.NewUUIDType(), chType: "String",
		fill:   func(b array.Builder) { b.(*extensions.UUIDBuilder).Append(testUUID) },
		native: "24" + hex.EncodeToString([]byte(testUUID.String())), rowBin: "24" + hex.EncodeToString([]byte(testUUID.String()))},
	{name: "Decimal256_negative", arrow: &arrow.Decimal256Type{Precision: 40, Scale: 2}, chType: "Decimal(40, 2)",
		fill:   func(b array.Builder) { b.(*array.Decimal256Builder).Append(decimal256.FromI64(-1)) },
		native: strings.Repeat("ff", 32), rowBin: strings.Repeat("ff", 32)},
	{name: "Decimal64_from_decimal128", arrow: &arrow.Decimal128Type{Precision: 12, Scale: 2}, chType: "Decimal(12, 2)",
		fill:   func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(12345)) },
		native: "39 30 00 00 00 00 00 00", rowBin: "39 30 00 00 00 00 00 00"},
	{name: "Decimal128_negative", arrow: &arrow.Decimal128Type{Precision: 38, Scale: 10}, chType: "Decimal(38, 10)",
		fill:   func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-2)) },
		native: "fe" + strings.Repeat("ff", 15), rowBin: "fe" + strings.Repeat("ff", 15)},
	{name: "Array_Nullable_Int32", arrow: arrow.ListOf(arrow.PrimitiveTypes.Int32), chType: "Array(Nullable(Int32))",
		fill: func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			vb := lb.ValueBuilder().(*array.Int32Builder)
			lb.Append(true)
			vb.Append(1)
			vb.AppendNull()
			lb.Append(true)
			lb.Append(true)
			vb.Append(3)
		},
		native: "0200000000000000 0200000000000000 0300000000000000 00 01 00 01000000 00000000 03000000",
		rowBin: "02 00 01000000 01   00   01 00 03000000"},
	{name: "String_unicode_empty", arrow: arrow.BinaryTypes.String, chType: "Nullable(String)",
		fill: func(b array.Builder) {
			sb := b.(*array.StringBuilder)
			sb.Append("日本")
			sb.Append("")
			sb.AppendNull()
		},
		native: "00 00 01 06 e697a5e69cac 00 00", rowBin: "00 06 e697a5e69cac 00 00 01"},
	{name: "FixedString_padded", arrow: arrow.BinaryTypes.String, chType: "FixedString(4)",
		fill:   func(b array.Builder) { b.(*array.StringBuilder).Append("ab") },
		native: "61 62 00 00", rowBin: "61 62 00 00"},
	{name: "DateTime_subseconds_refused", arrow: &arrow.TimestampType{Unit: arrow.Microsecond}, chType: "DateTime('UTC')",
		fill:    func(b array.Builder) { b.(*array.TimestampBuilder).Append(1_500_000) },
		wantErr: "timestamp 1970-01-01 00:00:01.5 has more fractional digits than ClickHouse DateTime holds"},
	{name: "DateTime_subseconds_truncated", arrow: &arrow.TimestampType{Unit: arrow.Microsecond}, chType: "DateTime('UTC')",
		fill: func(b array.Builder) { b.(*array.TimestampBuilder).Append(1_500_000) }, opts: Options{Subseconds: "truncate"},
		native: "01 00 00 00", rowBin: "01 00 00 00"},
	{name: "Int_widening", arrow: arrow.PrimitiveTypes.Int16, chType: "Int64",
		fill:   func(b array.Builder) { b.(*array.Int16Builder).Append(-2) },
		native: "fe" + strings.Repeat("ff", 7), rowBin: "fe" + strings.Repeat("ff", 7)},
	{name: "Int_narrowing_overflow", arrow: arrow.PrimitiveTypes.Int64, chType: "UInt8",
		fill:    func(b array.Builder) { b.(*array.Int64Builder).Append(300) },
		wantErr: "integer 300 does not fit 8 bits"},
}

func TestEncoder_Bytes(t *testing.T) {
	for _, tc := range encoderCases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			arr := build(t, mem, tc.arrow, tc.fill)
			defer arr.Release()
			enc, err := newEncoder(tc.arrow, tc.chType, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var b proto.Buffer
			err = enc.column(&b, arr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Buf, hexBytes(tc.native)) {
				t.Errorf("native = % x\nwant     % x", b.Buf, hexBytes(tc.native))
			}
			if row := rowBinary(t, enc, arr); !bytes.Equal(row, hexBytes(tc.rowBin)) {
				t.Errorf("rowbinary = % x\nwant        % x", row, hexBytes(tc.rowBin))
			}
		})
	}
}

func rowBinary(t *testing.T, enc encoder, arr arrow.Array) []byte {
	f := enc.bind(arr)
	var out []byte
	var err error
	for i := 0; i < arr.Len(); i++ {
		if out, err = f(out, i); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestDecoder_RoundTrip decodes what the encoders wrote back into Arrow,
// which checks the decoders of modern-only types without a modern server.
func TestDecoder_RoundTrip(t *testing.T) {
	for _, tc := range encoderCases {
		if tc.wantErr != "" || tc.opts.Subseconds != "" || tc.name == "Int_widening" || tc.name == "DateTime64_scale_up" || tc.name == "FixedString_padded" || tc.name == "UUID_as_String" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			arr := build(t, mem, tc.arrow, tc.fill)
			defer arr.Release()
			enc, _ := newEncoder(tc.arrow, tc.chType, Options{})
			var b proto.Buffer
			if err := enc.column(&b, arr); err != nil {
				t.Fatal(err)
			}
			got := decodeColumn(t, mem, tc.chType, tc.arrow, b.Buf, arr.Len())
			defer got.Release()
			if !array.Equal(got, arr) {
				t.Errorf("decoded %v, want %v", got, arr)
			}
		})
	}
}

func decodeColumn(t *testing.T, mem memory.Allocator, chType string, at arrow.DataType, data []byte, rows int) arrow.Array {
	t.Helper()
	ct, err := parseType(chType)
	if err != nil {
		t.Fatal(err)
	}
	ab := array.NewBuilder(mem, at)
	defer ab.Release()
	var size int64
	dec, err := newDecoder(ct, ab, &size)
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.decode(proto.NewReader(bytes.NewReader(data)), rows, nil); err != nil {
		t.Fatal(err)
	}
	return ab.NewArray()
}

func TestParseType(t *testing.T) {
	tests := []struct{ in, name, elem string }{
		{"Array(Nullable(Decimal(12, 2)))", "Array", "Nullable(Decimal(12, 2))"},
		{"DateTime64(6, 'Europe/Paris')", "DateTime64", ""},
		{"LowCardinality(Nullable(String))", "LowCardinality", "Nullable(String)"},
		{"Int64", "Int64", ""},
	}
	for _, tc := range tests {
		got, err := parseType(tc.in)
		if err != nil || got.Name != tc.name || (tc.elem != "" && got.Elem.String() != tc.elem) {
			t.Errorf("parseType(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if args := splitArgs(`'a,b' = 1, 'c\'d' = 2`); len(args) != 2 {
		t.Errorf("splitArgs kept quotes apart badly: %q", args)
	}
}
