package clickhouse

import (
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestCHColumnType: ClickHouse types mapped for routes.Holds, wrappers
// unwrapped; a DateTime in UTC or in no named zone is a wall clock.
func TestCHColumnType(t *testing.T) {
	tests := []struct {
		dest, src string
		want      bool
	}{
		{"Int32", "Float64", false}, {"Nullable(Decimal(10, 2))", "Float64", false}, {"Int32", "Decimal(10, 2)", false},
		{"Int64", "Decimal(18, 0)", true}, {"Decimal(12, 2)", "Int32", true}, {"Decimal(10, 2)", "Decimal(6, 1)", true},
		{"Decimal64(2)", "Decimal(10, 4)", false}, {"Float64", "Int64", false}, {"Float64", "UInt32", true},
		{"Float32", "Int16", true}, {"Float32", "Int32", false}, {"Float32", "Float64", false}, {"Float64", "Decimal(20, 2)", false},
		{"Bool", "UInt8", false}, {"Int32", "Bool", true}, {"LowCardinality(Nullable(String))", "Float64", true},
		{"Int32", "String", false}, {"Date", "DateTime64(6, 'UTC')", false}, {"DateTime('UTC')", "Date32", true},
		{"DateTime64(3, 'UTC')", "DateTime64(6, 'UTC')", false}, {"DateTime64(6)", "DateTime64(6, 'UTC')", true},
		{"DateTime64(6, 'Europe/Berlin')", "DateTime64(6, 'UTC')", false}, {"DateTime64(6, 'Europe/Berlin')", "Date", false},
		{"UUID", "String", true}, {"Array(Int32)", "Array(Int64)", true}, {"Bool", "UUID", false},
		// FixedString(n) pads with NUL bytes: it holds only a FixedString(n).
		{"Nullable(FixedString(5))", "Nullable(String)", false}, {"FixedString(5)", "FixedString(3)", false},
		{"FixedString(16)", "FixedString(16)", true}, {"String", "FixedString(16)", true},
	}
	for _, tt := range tests {
		if got := routes.Holds(chColumnType(tt.dest), chColumnType(tt.src), casts); got != tt.want {
			t.Errorf("%s into %s: %v, want %v", tt.src, tt.dest, got, tt.want)
		}
	}
	if d := chColumnType("Nullable(Decimal(10, 2))"); d.Precision != 10 || d.Scale != 2 {
		t.Errorf("Decimal(10, 2): %+v", d)
	}
}
