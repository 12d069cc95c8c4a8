package iceberg

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAppendChange: the text pgoutput sends and the binlog's typed values
// land in the table's Arrow types as the bulk routes would write them.
func TestAppendChange(t *testing.T) {
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tests := []struct {
		typ  arrow.DataType
		in   any
		want string
	}{
		{arrow.PrimitiveTypes.Int32, "42", "42"},
		{arrow.PrimitiveTypes.Int64, int32(-7), "-7"},
		{arrow.PrimitiveTypes.Int64, uint32(4000000000), "4000000000"},
		{arrow.FixedWidthTypes.Boolean, "t", "true"},
		{arrow.FixedWidthTypes.Boolean, int8(0), "false"},
		{arrow.PrimitiveTypes.Float64, "1.5", "1.5"},
		{&arrow.Decimal128Type{Precision: 12, Scale: 2}, "4.50", "4.5"},
		{arrow.BinaryTypes.Binary, `\x00ff`, "AP8="},
		{arrow.BinaryTypes.Binary, []byte{1}, "AQ=="},
		{arrow.BinaryTypes.String, []byte("text"), "text"},
		{utc, "2024-01-02 03:04:05.123456+00", "2024-01-02T03:04:05.123456Z"},
		{utc, "2024-01-02 08:34:05+05:30", "2024-01-02T03:04:05Z"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, "2024-01-02 03:04:05.5", "2024-01-02T03:04:05.5"},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05"},
		{arrow.FixedWidthTypes.Date32, "2024-01-02", "2024-01-02"},
		{arrow.FixedWidthTypes.Time64us, "03:04:05.25", "03:04:05.250000"},
		{extensions.NewUUIDType(), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{arrow.BinaryTypes.String, nil, "(null)"},
	}
	for _, tt := range tests {
		b := array.NewBuilder(memory.DefaultAllocator, tt.typ)
		if err := appendChange(b, tt.in); err != nil {
			t.Errorf("%s %#v: %v", tt.typ, tt.in, err)
			continue
		}
		a := b.NewArray()
		if got := a.ValueStr(0); got != tt.want {
			t.Errorf("%s %#v = %s, want %s", tt.typ, tt.in, got, tt.want)
		}
	}
	for _, bad := range []struct {
		typ arrow.DataType
		in  any
	}{{arrow.PrimitiveTypes.Int32, "x"}, {&arrow.Decimal128Type{Precision: 4, Scale: 2}, "NaN"}, {utc, "infinity"}} {
		if err := appendChange(array.NewBuilder(memory.DefaultAllocator, bad.typ), bad.in); err == nil {
			t.Errorf("%s %#v: no error", bad.typ, bad.in)
		}
	}
}
