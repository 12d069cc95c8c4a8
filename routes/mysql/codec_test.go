package mysql

import (
	"database/sql/driver"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// limbsText renders parseDecimal's result through math/big.
func limbsText(l [4]uint64, scale int32) string {
	n := new(big.Int)
	for i := 3; i >= 0; i-- {
		n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(l[i]))
	}
	if l[3]>>63 == 1 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), 256))
	}
	return string(appendScaled(nil, n.Append(nil, 10), scale))
}

func TestParseDecimal(t *testing.T) {
	big65 := "99999999999999999999999999999999999.999999999999999999999999999999"
	tests := []struct {
		in    string
		scale int32
		want  string
		err   error
	}{
		{"0.00", 2, "0.00", nil},
		{"-0.01", 2, "-0.01", nil},
		{"12.3", 2, "12.30", nil},
		{"5", 3, "5.000", nil},
		{big65, 30, big65, nil},
		{"-" + big65, 30, "-" + big65, nil},
		{"18446744073709551616", 0, "18446744073709551616", nil},
		{"1.234", 2, "", errSyntax},
		{"1e5", 0, "", errSyntax},
		{"", 0, "", errSyntax},
		{strings.Repeat("9", 78), 0, "", errRange},
	}
	for _, tt := range tests {
		l, err := parseDecimal([]byte(tt.in), tt.scale)
		if !errors.Is(err, tt.err) {
			t.Errorf("%q: err %v, want %v", tt.in, err, tt.err)
			continue
		}
		if err == nil && limbsText(l, tt.scale) != tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, limbsText(l, tt.scale), tt.want)
		}
	}
}

func TestParseTemporal(t *testing.T) {
	tests := []struct {
		name string
		fn   func([]byte) (int64, error)
		in   string
		want int64
		err  error
	}{
		{"epoch", parseDate, "1970-01-01", 0, nil},
		{"before epoch", parseDate, "1969-12-31", -1, nil},
		{"year 0", parseDate, "0000-01-01", -719528, nil},
		{"zero", parseDate, "0000-00-00", 0, errZeroDate},
		{"zero day", parseDate, "2024-02-00", 0, errZeroDate},
		{"invalid day", parseDate, "2023-02-29", 0, errZeroDate},
		{"datetime", parseDatetime, "1970-01-02 00:00:01.5", 86401500000, nil},
		{"datetime us", parseDatetime, "1969-12-31 23:59:59.999999", -1, nil},
		{"zero datetime", parseDatetime, "0000-00-00 00:00:00", 0, errZeroDate},
		{"time", parseTime, "12:34:56.000001", 45296000001, nil},
		{"time max", parseTime, "838:59:59", 3020399000000, nil},
		{"time min", parseTime, "-838:59:59.5", -3020399500000, nil},
		{"time bad", parseTime, "12:3x:00", 0, errSyntax},
		{"fraction too long", parseTime, "00:00:00.1234567", 0, errSyntax},
	}
	for _, tt := range tests {
		got, err := tt.fn([]byte(tt.in))
		if !errors.Is(err, tt.err) || (err == nil && got != tt.want) {
			t.Errorf("%s %q: got %d, %v; want %d, %v", tt.name, tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestIntValues(t *testing.T) {
	if n, err := intValue([]byte("-9223372036854775808")); err != nil || n != -9223372036854775808 {
		t.Errorf("min int64: %d %v", n, err)
	}
	if _, err := intValue([]byte("9223372036854775808")); err == nil {
		t.Error("int64 overflow accepted")
	}
	if n, err := uintValue([]byte("18446744073709551615")); err != nil || n != 1<<64-1 {
		t.Errorf("max uint64: %d %v", n, err)
	}
	if n, err := bitsValue([]byte{0x01, 0x02}); err != nil || n != 258 {
		t.Errorf("bit: %d %v", n, err)
	}
}

func TestEscape(t *testing.T) {
	in := "a\tb\nc\\d\x00e\rf\\N"
	if got, want := string(escape(nil, in)), `a\tb\nc\\d\0e\rf\\N`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := string(escape([]byte("x"), []byte("plain"))); got != "xplain" {
		t.Errorf("got %q", got)
	}
}

func TestAppendDecimal(t *testing.T) {
	tests := []struct {
		n     decimal128.Num
		scale int32
		want  string
	}{
		{decimal128.FromI64(-1), 2, "-0.01"},
		{decimal128.FromI64(12345), 2, "123.45"},
		{decimal128.FromI64(5), 0, "5"},
		{decimal128.FromI64(0), 3, "0.000"},
		{decimal128.FromBigInt(mustBig("-99999999999999999999999999999999999999")), 10, "-9999999999999999999999999999.9999999999"},
	}
	for _, tt := range tests {
		if got := string(appendDecimal128(nil, tt.n, tt.scale)); got != tt.want {
			t.Errorf("%v scale %d: got %s, want %s", tt.n, tt.scale, got, tt.want)
		}
	}
	n := decimal256.FromBigInt(mustBig("-99999999999999999999999999999999999999999999999999999999999999999"))
	if got := string(appendDecimal256(nil, n, 30)); got != "-99999999999999999999999999999999999.999999999999999999999999999999" {
		t.Errorf("decimal256: %s", got)
	}
}

func mustBig(s string) *big.Int {
	n, _ := new(big.Int).SetString(s, 10)
	return n
}

func TestSplitInts(t *testing.T) {
	preds, err := splitInts("`id`", "1", "100", 4)
	if err != nil {
		t.Fatal(err)
	}
	want := "[`id` < 26 `id` >= 26 AND `id` < 51 `id` >= 51 AND `id` < 76 `id` >= 76]"
	if got := strings.Join(preds, " "); "["+got+"]" != want {
		t.Errorf("got %v", preds)
	}
	preds, _ = splitInts("k", "18446744073709551610", "18446744073709551615", 8)
	if len(preds) != 6 || preds[5] != "k >= 18446744073709551615" {
		t.Errorf("narrow unsigned range: %v", preds)
	}
}

func TestColumnDDL(t *testing.T) {
	tests := []struct {
		typ    arrow.DataType
		native string
		scheme string
		key    bool
		want   string
	}{
		{arrow.BinaryTypes.String, "numeric", "postgres", false, "DECIMAL(65,30)"},
		{arrow.BinaryTypes.String, "jsonb", "postgres", false, "JSON"},
		{arrow.BinaryTypes.String, "character(5)", "postgres", false, "CHAR(5)"},
		{arrow.BinaryTypes.String, "text", "postgres", true, "VARCHAR(768)"},
		{arrow.BinaryTypes.String, "character varying(40)", "postgres", true, "VARCHAR(40)"},
		{arrow.BinaryTypes.String, "text", "postgres", false, "LONGTEXT"},
		{arrow.BinaryTypes.Binary, "bytea", "postgres", false, "LONGBLOB"},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "timestamp with time zone", "postgres", false, "DATETIME(6)"},
		{&arrow.Decimal128Type{Precision: 12, Scale: 2}, "numeric(12,2)", "postgres", false, "DECIMAL(12,2)"},
		{&arrow.Decimal256Type{Precision: 70, Scale: 2}, "numeric(70,2)", "postgres", false, "LONGTEXT"},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), "integer[]", "postgres", false, "JSON"},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, "interval", "postgres", false, "VARCHAR(255)"},
		{arrow.PrimitiveTypes.Uint64, "bigint(20) unsigned", "mysql", false, "bigint(20) unsigned"},
		{arrow.BinaryTypes.String, "point", "mysql", false, "LONGTEXT"},
	}
	for _, tt := range tests {
		c := routes.Column{Name: "c", Type: tt.typ, NativeType: tt.native}
		if got := columnDDL(c, tt.scheme, tt.key); got != tt.want {
			t.Errorf("%s %q from %s: got %s, want %s", tt.typ, tt.native, tt.scheme, got, tt.want)
		}
	}
}

// BenchmarkDecoder: decoding a row the driver handed over allocates
// nothing in weir's code (only the builders grow).
func BenchmarkDecoder(b *testing.B) {
	info := &routes.TableInfo{Scheme: Scheme}
	for _, nt := range []string{"bigint(20)", "decimal(12,2)", "datetime(6)", "varchar(20)", "date", "int(11)"} {
		_, typ := columnKind(parseColumnType(nt), options{})
		info.Columns = append(info.Columns, routes.Column{Name: nt, Type: typ, NativeType: nt, Nullable: true})
	}
	row := []driver.Value{int64(123456789), []byte("12345.67"), []byte("2024-05-06 07:08:09.123456"), []byte("some text value"), []byte("2024-05-06"), nil}
	batches := 0
	dec := newDecoder("t", info.Columns, info.Schema(), memory.NewGoAllocator(), 4<<20, options{}, func(r arrow.RecordBatch) error {
		batches++
		r.Release()
		return nil
	})
	defer dec.Release()
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.appendRow(row); err != nil {
			b.Fatal(err)
		}
	}
	dec.Close()
}

// BenchmarkEncoder: the LOAD DATA text of typical rows.
func BenchmarkEncoder(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}}, {Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	for i := range 4096 {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		bld.Field(1).(*array.StringBuilder).Append("some\ttext")
		bld.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * 101))
		bld.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e9))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	enc := newEncoder(discard{})
	b.ReportAllocs()
	b.SetBytes(4096)
	for b.Loop() {
		if err := enc.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestEncoder_Infinity: PostgreSQL's ±infinity (the postgres route's
// sentinels) is refused naming infinity, in every timestamp unit and for
// dates; it was reported as a timestamp in year 294247.
func TestEncoder_Infinity(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, tt := range []struct {
		typ  arrow.DataType
		v    int64
		want string
	}{
		{&arrow.TimestampType{Unit: arrow.Microsecond}, math.MaxInt64, "infinity has no MySQL value"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, math.MinInt64, "-infinity has no MySQL value"},
		{arrow.FixedWidthTypes.Date32, math.MaxInt32, "infinity has no MySQL value"},
		{arrow.FixedWidthTypes.Date32, math.MinInt32, "-infinity has no MySQL value"},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: tt.typ, Nullable: true}}, nil)
		bld := array.NewRecordBuilder(mem, schema)
		switch b := bld.Field(0).(type) {
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(tt.v))
		case *array.Date32Builder:
			b.Append(arrow.Date32(tt.v))
		}
		rec := bld.NewRecordBatch()
		err := newEncoder(discard{}).Encode(rec)
		rec.Release()
		bld.Release()
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "column ts") {
			t.Errorf("%s %d: %v, want bad input in column ts saying %q", tt.typ, tt.v, err, tt.want)
		}
	}
}
