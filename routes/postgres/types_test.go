package postgres

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/weirhq/weir/routes"
)

func TestArrowType(t *testing.T) {
	tests := []struct {
		native string
		want   string // arrow type String(); "" means not handled
	}{
		{"smallint", "int16"},
		{"integer", "int32"},
		{"bigint", "int64"},
		{"oid", "uint32"},
		{"real", "float32"},
		{"double precision", "float64"},
		{"boolean", "bool"},
		{"numeric(10,2)", "decimal(10, 2)"},
		{"numeric(38,10)", "decimal(38, 10)"},
		{"numeric(39,0)", "decimal256(39, 0)"},
		{"numeric(76,20)", "decimal256(76, 20)"},
		{"numeric(77,2)", "utf8"},
		{"numeric(5)", "decimal(5, 0)"},
		{"numeric(5,-2)", "decimal(7, 0)"},
		{"numeric(3,5)", "decimal(5, 5)"},
		{"numeric", "utf8"},
		{"text", "utf8"},
		{"character varying(20)", "utf8"},
		{"character varying", "utf8"},
		{"character(5)", "utf8"},
		{`"char"`, "utf8"},
		{"name", "utf8"},
		{"json", "utf8"},
		{"jsonb", "utf8"},
		{"bytea", "binary"},
		{"date", "date32"},
		{"time without time zone", "time64[us]"},
		{"time(3) without time zone", "time64[us]"},
		{"timestamp without time zone", "timestamp[us]"},
		{"timestamp(3) without time zone", "timestamp[us]"},
		{"timestamp with time zone", "timestamp[us, tz=UTC]"},
		{"timestamp(0) with time zone", "timestamp[us, tz=UTC]"},
		{"interval", "month_day_nano_interval"},
		{"interval year to month", "month_day_nano_interval"},
		{"uuid", "extension<arrow.uuid>"},
		{"integer[]", "list<item: int32, nullable>"},
		{"text[]", "list<item: utf8, nullable>"},
		{"numeric(10,2)[]", "list<item: decimal(10, 2), nullable>"},
		{"timestamp(3) with time zone[]", "list<item: timestamp[us, tz=UTC], nullable>"},
		{"uuid[]", "list<item: extension<arrow.uuid>, nullable>"},
		{"time with time zone", ""},
		{"inet", ""},
		{"money", ""},
		{"bit(3)", ""},
		{"mood", ""},
		{"inet[]", ""},
		{"point", ""},
	}
	for _, tt := range tests {
		t.Run(tt.native, func(t *testing.T) {
			got, ok := arrowType(tt.native)
			if tt.want == "" {
				if ok {
					t.Fatalf("arrowType(%q) = %s, want not handled", tt.native, got)
				}
				return
			}
			if !ok || got.String() != tt.want {
				t.Fatalf("arrowType(%q) = %v, %v; want %s", tt.native, got, ok, tt.want)
			}
		})
	}
}

func TestPGType(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	tests := []struct {
		name   string
		typ    arrow.DataType
		native string
		scheme string
		want   string
	}{
		{"postgres keeps native", arrow.PrimitiveTypes.Int32, "character varying(20)", "postgres", "character varying(20)"},
		{"int8", arrow.PrimitiveTypes.Int8, "", "mysql", "smallint"},
		{"int16", arrow.PrimitiveTypes.Int16, "", "mysql", "smallint"},
		{"int32", arrow.PrimitiveTypes.Int32, "", "mysql", "integer"},
		{"int64", arrow.PrimitiveTypes.Int64, "", "mysql", "bigint"},
		{"uint8", arrow.PrimitiveTypes.Uint8, "", "mysql", "smallint"},
		{"uint16", arrow.PrimitiveTypes.Uint16, "", "mysql", "integer"},
		{"uint32", arrow.PrimitiveTypes.Uint32, "", "mysql", "bigint"},
		{"uint64", arrow.PrimitiveTypes.Uint64, "", "mysql", "numeric(20,0)"},
		{"float32", arrow.PrimitiveTypes.Float32, "", "mysql", "real"},
		{"float64", arrow.PrimitiveTypes.Float64, "", "mysql", "double precision"},
		{"bool", arrow.FixedWidthTypes.Boolean, "tinyint(1)", "mysql", "boolean"},
		{"decimal128", dec(12, 2), "decimal(12,2)", "mysql", "numeric(12,2)"},
		{"decimal256", &arrow.Decimal256Type{Precision: 65, Scale: 30}, "decimal(65,30)", "mysql", "numeric(65,30)"},
		{"utf8", arrow.BinaryTypes.String, "varchar(10)", "mysql", "text"},
		{"large utf8", arrow.BinaryTypes.LargeString, "", "s3", "text"},
		{"json hint", arrow.BinaryTypes.String, "json", "mysql", "json"}, // jsonb would drop a duplicate key
		{"jsonb hint", arrow.BinaryTypes.String, "jsonb", "cockroach", "jsonb"},
		{"json ext", jsonExt(), "", "s3", "jsonb"},
		{"year hint", arrow.PrimitiveTypes.Uint16, "year", "mysql", "smallint"},
		{"binary", arrow.BinaryTypes.Binary, "", "s3", "bytea"},
		{"fixed binary", &arrow.FixedSizeBinaryType{ByteWidth: 4}, "", "s3", "bytea"},
		{"date32", arrow.FixedWidthTypes.Date32, "", "s3", "date"},
		{"time32", arrow.FixedWidthTypes.Time32ms, "", "s3", "time without time zone"},
		{"time64", arrow.FixedWidthTypes.Time64ns, "", "s3", "time without time zone"},
		{"timestamp", &arrow.TimestampType{Unit: arrow.Nanosecond}, "", "s3", "timestamp without time zone"},
		{"timestamptz", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, "", "s3", "timestamp with time zone"},
		{"interval", arrow.FixedWidthTypes.MonthDayNanoInterval, "", "s3", "interval"},
		{"duration", arrow.FixedWidthTypes.Duration_us, "", "s3", "interval"},
		{"uuid", extensions.NewUUIDType(), "", "s3", "uuid"},
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Int64), "", "s3", "bigint[]"},
		{"list of decimal", arrow.ListOf(dec(10, 2)), "", "s3", "numeric(10,2)[]"},
		{"list of list", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), "", "s3", "text"},
		{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), "", "s3", "text"},
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), "", "s3", "text"},
		{"null", arrow.Null, "", "s3", "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := routes.Column{Name: "c", Type: tt.typ, NativeType: tt.native}
			if got := pgType(c, tt.scheme); got != tt.want {
				t.Fatalf("pgType(%s, %q, %s) = %q, want %q", tt.typ, tt.native, tt.scheme, got, tt.want)
			}
		})
	}
}

// TestPGType_EncodersExist: every type pgType produces has an encoder for
// the Arrow type it came from.
func TestPGType_EncodersExist(t *testing.T) {
	for _, typ := range []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16,
		arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Float16,
		&arrow.Decimal128Type{Precision: 10, Scale: 2}, &arrow.Decimal256Type{Precision: 60, Scale: 2},
		arrow.BinaryTypes.LargeString, arrow.BinaryTypes.StringView, arrow.BinaryTypes.LargeBinary,
		&arrow.FixedSizeBinaryType{ByteWidth: 3}, arrow.FixedWidthTypes.Date64,
		arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time64ns,
		&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, arrow.FixedWidthTypes.MonthInterval,
		arrow.FixedWidthTypes.DayTimeInterval, arrow.FixedWidthTypes.Duration_ms, extensions.NewUUIDType(),
		jsonExt(), arrow.LargeListOf(arrow.BinaryTypes.String),
		arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int8)),
		arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), arrow.Null,
	} {
		ddl := pgType(routes.Column{Type: typ}, "s3")
		if _, err := encoderFor(parsePGType(ddl), typ); err != nil {
			t.Errorf("%s → %s: %v", typ, ddl, err)
		}
	}
}

func TestParsePGType(t *testing.T) {
	tests := []struct {
		in    string
		kind  pgKind
		mods  []int
		array bool
	}{
		{"timestamp(3) with time zone", kindTimestamptz, []int{3}, false},
		{"numeric(10,2)[]", kindNumeric, []int{10, 2}, true},
		{"pg_catalog.int4", kindInt4, nil, false},
		{"integer[][]", kindInt4, nil, true},
		{`"char"`, kindChar, nil, false},
		{"char(3)", kindBpchar, []int{3}, false},
		{"interval day to second(3)", kindInterval, []int{3}, false},
		{"mood", kindUnknown, nil, false},
	}
	for _, tt := range tests {
		got := parsePGType(tt.in)
		if got.kind != tt.kind || got.array != tt.array || len(got.mods) != len(tt.mods) {
			t.Errorf("parsePGType(%q) = %+v", tt.in, got)
		}
	}
}

func jsonExt() arrow.DataType {
	t, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		panic(err)
	}
	return t
}
