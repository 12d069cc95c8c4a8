package clickhouse

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// chScalar maps the ClickHouse types with one obvious Arrow type.
var chScalar = map[string]arrow.DataType{
	"Int8": arrow.PrimitiveTypes.Int8, "Int16": arrow.PrimitiveTypes.Int16,
	"Int32": arrow.PrimitiveTypes.Int32, "Int64": arrow.PrimitiveTypes.Int64,
	"UInt8": arrow.PrimitiveTypes.Uint8, "UInt16": arrow.PrimitiveTypes.Uint16,
	"UInt32": arrow.PrimitiveTypes.Uint32, "UInt64": arrow.PrimitiveTypes.Uint64,
	"Float32": arrow.PrimitiveTypes.Float32, "Float64": arrow.PrimitiveTypes.Float64,
	"Bool": arrow.FixedWidthTypes.Boolean, "String": arrow.BinaryTypes.String,
	"Date": arrow.FixedWidthTypes.Date32, "Date32": arrow.FixedWidthTypes.Date32,
	"UUID": uuidType,
}

// sourceColumn maps a column of a ClickHouse table to the Arrow type the
// reader produces. Enums are read as their names; types without an Arrow
// counterpart (IPv4/6, Int128/256, Map, Tuple, …) as their text (toString).
func sourceColumn(name, typ string) (routes.Column, error) {
	t, err := parseType(typ)
	if err != nil {
		return routes.Column{}, err
	}
	c := routes.Column{Name: name, NativeType: typ}
	var ok bool
	if c.Type, c.Nullable, ok = chToArrow(t); !ok {
		c.Type, c.Nullable = arrow.BinaryTypes.String, t.Name == "Nullable"
	}
	return c, nil
}

// selectExpr is how the Arrow reader selects a column: as it is, cast out
// of LowCardinality, or as text.
func selectExpr(c routes.Column) string {
	t, err := parseType(c.NativeType)
	id := quoteIdent(c.Name)
	if err != nil {
		return id
	}
	if _, _, ok := chToArrow(t); !ok {
		return "toString(" + id + ")"
	}
	if strings.Contains(t.raw, "LowCardinality(") {
		return fmt.Sprintf("CAST(%s AS %s)", id, stripLowCardinality(t))
	}
	return id
}

// chToArrow maps a ClickHouse type to Arrow and says whether it is
// Nullable; false when there is no direct mapping.
func chToArrow(t chType) (arrow.DataType, bool, bool) {
	if at, ok := chScalar[t.Name]; ok {
		return at, false, true
	}
	switch t.Name {
	case "Nullable":
		at, _, ok := chToArrow(*t.Elem)
		return at, true, ok
	case "LowCardinality":
		return chToArrow(*t.Elem)
	case "Array":
		et, en, ok := chToArrow(*t.Elem)
		return arrow.ListOfField(arrow.Field{Name: "item", Type: et, Nullable: en}), false, ok
	case "FixedString":
		n, err := t.intArg(0)
		return &arrow.FixedSizeBinaryType{ByteWidth: n}, false, err == nil
	case "Enum8", "Enum16":
		return arrow.BinaryTypes.String, false, true // decoded by name
	case "DateTime", "DateTime64":
		return dateTimeArrow(t), false, true
	case "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256":
		p, s := decimalParams(t)
		if p <= 38 {
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, false, true
		}
		return &arrow.Decimal256Type{Precision: int32(p), Scale: int32(s)}, false, p <= 76
	}
	return nil, false, false
}

// dateTimeArrow: DateTime is whole seconds; DateTime64(p) takes the unit
// that holds p digits. A time zone argument is kept.
func dateTimeArrow(t chType) *arrow.TimestampType {
	tz, p := "", 0
	if t.Name == "DateTime64" {
		p, _ = t.intArg(0)
		if len(t.Args) > 1 {
			tz = unquote(t.Args[1])
		}
	} else if len(t.Args) > 0 {
		tz = unquote(t.Args[0])
	}
	return &arrow.TimestampType{Unit: unitFor(p), TimeZone: tz}
}

func unitFor(digits int) arrow.TimeUnit {
	switch {
	case digits <= 0:
		return arrow.Second
	case digits <= 3:
		return arrow.Millisecond
	case digits <= 6:
		return arrow.Microsecond
	}
	return arrow.Nanosecond
}

// stripLowCardinality renders t without LowCardinality wrappers.
func stripLowCardinality(t chType) string {
	switch t.Name {
	case "LowCardinality":
		return stripLowCardinality(*t.Elem)
	case "Nullable", "Array":
		return t.Name + "(" + stripLowCardinality(*t.Elem) + ")"
	}
	return t.raw
}
