package bigquery

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/weirhq/weir/routes"
)

func TestMapType(t *testing.T) {
	tests := []struct {
		name   string
		in     arrow.DataType
		native string
		want   string // the BigQuery type
		staged arrow.DataType
	}{
		{"bool", arrow.FixedWidthTypes.Boolean, "boolean", "BOOL", arrow.FixedWidthTypes.Boolean},
		{"int16", arrow.PrimitiveTypes.Int16, "smallint", "INT64", arrow.PrimitiveTypes.Int64},
		{"uint32", arrow.PrimitiveTypes.Uint32, "UInt32", "INT64", arrow.PrimitiveTypes.Int64},
		{"uint64", arrow.PrimitiveTypes.Uint64, "UInt64", "NUMERIC", &arrow.Decimal128Type{Precision: 20}},
		{"float32", arrow.PrimitiveTypes.Float32, "real", "FLOAT64", arrow.PrimitiveTypes.Float64},
		{"numeric_12_2", &arrow.Decimal128Type{Precision: 12, Scale: 2}, "numeric(12,2)", "NUMERIC", &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{"numeric_38_9", &arrow.Decimal128Type{Precision: 38, Scale: 9}, "", "NUMERIC", &arrow.Decimal128Type{Precision: 38, Scale: 9}},
		{"numeric_30_0_is_big", &arrow.Decimal128Type{Precision: 30, Scale: 0}, "", "BIGNUMERIC", &arrow.Decimal128Type{Precision: 30, Scale: 0}},
		{"numeric_20_10_is_big", &arrow.Decimal128Type{Precision: 20, Scale: 10}, "", "BIGNUMERIC", &arrow.Decimal128Type{Precision: 20, Scale: 10}},
		{"decimal256_76_38", &arrow.Decimal256Type{Precision: 76, Scale: 38}, "", "BIGNUMERIC", &arrow.Decimal256Type{Precision: 76, Scale: 38}},
		{"decimal256_too_wide", &arrow.Decimal256Type{Precision: 76, Scale: 0}, "", "STRING", arrow.BinaryTypes.String},
		{"negative_scale", &arrow.Decimal128Type{Precision: 5, Scale: -2}, "", "STRING", arrow.BinaryTypes.String},
		{"text", arrow.BinaryTypes.String, "text", "STRING", arrow.BinaryTypes.String},
		{"jsonb", arrow.BinaryTypes.String, "jsonb", "JSON", jsonType},
		{"mysql_json", arrow.BinaryTypes.LargeString, "JSON", "JSON", jsonType},
		{"bytea", arrow.BinaryTypes.Binary, "bytea", "BYTES", arrow.BinaryTypes.Binary},
		{"fixed_binary", &arrow.FixedSizeBinaryType{ByteWidth: 4}, "binary(4)", "BYTES", arrow.BinaryTypes.Binary},
		{"uuid", extensions.NewUUIDType(), "uuid", "STRING", arrow.BinaryTypes.String},
		{"date", arrow.FixedWidthTypes.Date32, "date", "DATE", arrow.FixedWidthTypes.Date32},
		{"date64", arrow.FixedWidthTypes.Date64, "", "DATE", arrow.FixedWidthTypes.Date32},
		{"time_ns", arrow.FixedWidthTypes.Time64ns, "", "TIME", arrow.FixedWidthTypes.Time64us},
		{"timestamptz", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "timestamptz", "TIMESTAMP", tsUTC},
		{"timestamptz_ns_zone", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, "", "TIMESTAMP", tsUTC},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Millisecond}, "timestamp", "DATETIME", tsLocal},
		{"int_array", arrow.ListOf(arrow.PrimitiveTypes.Int32), "integer[]", "ARRAY<INT64>", arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int64, Nullable: true})},
		{"nested_array", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), "", "STRING", arrow.BinaryTypes.String},
		{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String}), "", "STRUCT<a INT64, b STRING>",
			arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})},
		{"interval", arrow.FixedWidthTypes.MonthDayNanoInterval, "interval", "STRING", arrow.BinaryTypes.String},
		{"duration", arrow.FixedWidthTypes.Duration_us, "", "STRING", arrow.BinaryTypes.String},
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), "", "STRING", arrow.BinaryTypes.String},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			staged, fs := mapType(tt.in, tt.native)
			if got := typeName(fs); got != tt.want {
				t.Errorf("BigQuery type %s, want %s", got, tt.want)
			}
			if !arrow.TypeEqual(staged, tt.staged) {
				t.Errorf("staged as %s, want %s", staged, tt.staged)
			}
		})
	}
}

// TestNewLayout_ColumnNames: names BigQuery cannot hold as they are — two
// that differ only in case (it compares column names without case), an
// empty one, one past 300 characters — are refused as bad input naming
// the column, before anything is created; 300 multibyte characters fit.
func TestNewLayout_ColumnNames(t *testing.T) {
	for _, tt := range []struct {
		names []string
		bad   string // the column the refusal names; "" fits
	}{
		{[]string{"id", "Name", "name"}, "name"},
		{[]string{"Ü", "ü"}, "ü"},
		{[]string{"id", strings.Repeat("c", 301)}, strings.Repeat("c", 301)},
		{[]string{""}, ""},
		{[]string{"id", strings.Repeat("é", 300), "Name", "other"}, "-"},
	} {
		info := &routes.TableInfo{Ref: routes.TableRef{Name: "t"}}
		for _, n := range tt.names {
			info.Columns = append(info.Columns, routes.Column{Name: n, Type: arrow.BinaryTypes.String, Nullable: true})
		}
		_, err := newLayout(info)
		var pe *routes.ProbeError
		switch {
		case tt.bad == "-" && err != nil:
			t.Errorf("%q: %v, want it to fit", tt.names, err)
		case tt.bad != "-" && (!errors.As(err, &pe) || !errors.Is(err, routes.ErrBadInput) || pe.Column != tt.bad):
			t.Errorf("%q: %v, want bad input naming column %q", tt.names, err, tt.bad)
		}
	}
}
