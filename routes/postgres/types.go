package postgres

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/weirhq/weir/routes"
)

// pgKind is a built-in PostgreSQL type the binary COPY codec reads and
// writes. Every other type reaches the codec cast to text.
type pgKind uint8

const (
	kindUnknown pgKind = iota
	kindBool
	kindInt2
	kindInt4
	kindInt8
	kindOID
	kindFloat4
	kindFloat8
	kindNumeric
	kindText
	kindVarchar
	kindBpchar
	kindChar // "char", the one-byte internal type
	kindName
	kindJSON
	kindJSONB
	kindBytea
	kindDate
	kindTime
	kindTimestamp
	kindTimestamptz
	kindInterval
	kindUUID
)

// kindOIDs are the element type OIDs array_recv checks an array against.
var kindOIDs = [...]uint32{
	kindBool: 16, kindInt2: 21, kindInt4: 23, kindInt8: 20, kindOID: 26,
	kindFloat4: 700, kindFloat8: 701, kindNumeric: 1700, kindText: 25,
	kindVarchar: 1043, kindBpchar: 1042, kindChar: 18, kindName: 19,
	kindJSON: 114, kindJSONB: 3802, kindBytea: 17, kindDate: 1082,
	kindTime: 1083, kindTimestamp: 1114, kindTimestamptz: 1184,
	kindInterval: 1186, kindUUID: 2950,
}

// kindNames maps format_type spellings, and the common aliases a DDL may
// use, to kinds. `"char"` (quoted) is the one-byte type; bare char is
// character(1).
var kindNames = map[string]pgKind{
	"boolean": kindBool, "bool": kindBool,
	"smallint": kindInt2, "int2": kindInt2,
	"integer": kindInt4, "int": kindInt4, "int4": kindInt4,
	"bigint": kindInt8, "int8": kindInt8,
	"oid":  kindOID,
	"real": kindFloat4, "float4": kindFloat4,
	"double precision": kindFloat8, "float8": kindFloat8,
	"numeric": kindNumeric, "decimal": kindNumeric,
	"text":              kindText,
	"character varying": kindVarchar, "varchar": kindVarchar,
	"character": kindBpchar, "char": kindBpchar, "bpchar": kindBpchar,
	`"char"`:                 kindChar,
	"name":                   kindName,
	"json":                   kindJSON,
	"jsonb":                  kindJSONB,
	"bytea":                  kindBytea,
	"date":                   kindDate,
	"time without time zone": kindTime, "time": kindTime,
	"timestamp without time zone": kindTimestamp, "timestamp": kindTimestamp,
	"timestamp with time zone": kindTimestamptz, "timestamptz": kindTimestamptz,
	"interval": kindInterval,
	"uuid":     kindUUID,
}

// pgTypeSpec is a parsed type name such as "numeric(10,2)[]".
type pgTypeSpec struct {
	kind  pgKind
	mods  []int // typmod arguments: numeric(10,2) → [10 2]
	array bool
}

// parsePGType parses format_type output (and plain DDL spellings). The
// typmod may sit mid-name: "timestamp(3) with time zone".
func parsePGType(s string) pgTypeSpec {
	var spec pgTypeSpec
	s = strings.TrimSpace(s)
	for strings.HasSuffix(s, "[]") {
		spec.array = true
		s = strings.TrimSpace(strings.TrimSuffix(s, "[]"))
	}
	s = strings.TrimPrefix(s, "pg_catalog.")
	if i := strings.IndexByte(s, '('); i >= 0 {
		j := strings.IndexByte(s[i:], ')')
		if j < 0 {
			return pgTypeSpec{}
		}
		spec.mods = parseTypmods(s[i+1 : i+j])
		s = s[:i] + " " + s[i+j+1:]
	}
	base := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	spec.kind = kindNames[base]
	if strings.HasPrefix(base, "interval ") { // interval day to second, …
		spec.kind = kindInterval
	}
	return spec
}

func parseTypmods(s string) []int {
	var mods []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil
		}
		mods = append(mods, n)
	}
	return mods
}

// elem is the spec of an array's element.
func (s pgTypeSpec) elem() pgTypeSpec { s.array = false; return s }

// Arrow types of the kinds that need no parameters.
var (
	tsType   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tstzType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

var kindArrow = map[pgKind]arrow.DataType{
	kindBool: arrow.FixedWidthTypes.Boolean, kindInt2: arrow.PrimitiveTypes.Int16,
	kindInt4: arrow.PrimitiveTypes.Int32, kindInt8: arrow.PrimitiveTypes.Int64,
	kindOID: arrow.PrimitiveTypes.Uint32, kindFloat4: arrow.PrimitiveTypes.Float32,
	kindFloat8: arrow.PrimitiveTypes.Float64, kindText: arrow.BinaryTypes.String,
	kindVarchar: arrow.BinaryTypes.String, kindBpchar: arrow.BinaryTypes.String,
	kindChar: arrow.BinaryTypes.String, kindName: arrow.BinaryTypes.String,
	kindJSON: arrow.BinaryTypes.String, kindJSONB: arrow.BinaryTypes.String,
	kindBytea: arrow.BinaryTypes.Binary, kindDate: arrow.FixedWidthTypes.Date32,
	kindTime: arrow.FixedWidthTypes.Time64us, kindTimestamp: tsType,
	kindTimestamptz: tstzType, kindInterval: arrow.FixedWidthTypes.MonthDayNanoInterval,
}

// arrowType maps PostgreSQL's format_type text of a built-in type to the
// Arrow type the decoder produces; false for types read as text instead.
// One-dimensional arrays of a mapped type become list<elem>.
func arrowType(nativeType string) (arrow.DataType, bool) {
	spec := parsePGType(nativeType)
	t, ok := spec.elemArrowType()
	if !ok {
		return nil, false
	}
	if spec.array {
		return arrow.ListOf(t), true
	}
	return t, true
}

func (s pgTypeSpec) elemArrowType() (arrow.DataType, bool) {
	switch s.kind {
	case kindUnknown:
		return nil, false
	case kindUUID:
		return extensions.NewUUIDType(), true
	case kindNumeric:
		return numericArrowType(s.mods), true
	}
	return kindArrow[s.kind], true
}

// numericArrowType: numeric(p,s) is an exact decimal; bare numeric (and
// numeric wider than decimal256 holds) is its exact decimal text. PG 15
// allows s < 0 and s > p, which Arrow decimals do not: numeric(3,-2) holds
// integers of 5 digits, numeric(2,5) fractions of 5 digits.
func numericArrowType(mods []int) arrow.DataType {
	if len(mods) == 0 || len(mods) > 2 {
		return arrow.BinaryTypes.String
	}
	p, s := int32(mods[0]), int32(0)
	if len(mods) == 2 {
		s = int32(mods[1])
	}
	p, s = decimalBounds(p, s)
	switch {
	case p <= 38:
		return &arrow.Decimal128Type{Precision: p, Scale: s}
	case p <= 76:
		return &arrow.Decimal256Type{Precision: p, Scale: s}
	}
	return arrow.BinaryTypes.String
}

// decimalBounds folds a negative scale into the precision and widens the
// precision to the scale, so every value keeps its digits.
func decimalBounds(p, s int32) (int32, int32) {
	if s < 0 {
		p, s = p-s, 0
	}
	return max(p, s), s
}

// pgType is the DDL type of a Postgres destination column. A Postgres
// source keeps its own type, so binary COPY passes through unchanged;
// other sources get the type their Arrow type maps to, with the native
// type as a hint (MySQL json → json, year → smallint).
func pgType(c routes.Column, sourceScheme string) string {
	if (sourceScheme == Scheme || sourceScheme == "postgresql") && c.NativeType != "" {
		return c.NativeType
	}
	if t := nativeHint(c); t != "" {
		return t
	}
	return ddlType(c.Type)
}

func nativeHint(c routes.Column) string {
	native := strings.ToLower(strings.TrimSpace(c.NativeType))
	switch {
	case c.Type == nil:
		return ""
	case native == "jsonb" && isStringish(c.Type):
		return "jsonb"
	case native == "json" && isStringish(c.Type):
		// json keeps the text exactly; jsonb would drop a duplicate
		// object key (keeping the last), reorder keys and respace
		return "json"
	case native == "year" && arrow.IsInteger(c.Type.ID()):
		return "smallint"
	}
	return ""
}

func isStringish(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// ddlScalar maps the Arrow types with one obvious Postgres type.
var ddlScalar = map[arrow.Type]string{
	arrow.BOOL: "boolean", arrow.INT8: "smallint", arrow.INT16: "smallint",
	arrow.UINT8: "smallint", arrow.INT32: "integer", arrow.UINT16: "integer",
	arrow.INT64: "bigint", arrow.UINT32: "bigint", arrow.UINT64: "numeric(20,0)",
	arrow.FLOAT16: "real", arrow.FLOAT32: "real", arrow.FLOAT64: "double precision",
	arrow.STRING: "text", arrow.LARGE_STRING: "text", arrow.STRING_VIEW: "text",
	arrow.BINARY: "bytea", arrow.LARGE_BINARY: "bytea", arrow.BINARY_VIEW: "bytea",
	arrow.FIXED_SIZE_BINARY: "bytea", arrow.DATE32: "date", arrow.DATE64: "date",
	arrow.TIME32: "time without time zone", arrow.TIME64: "time without time zone",
	arrow.INTERVAL_MONTHS: "interval", arrow.INTERVAL_DAY_TIME: "interval",
	arrow.INTERVAL_MONTH_DAY_NANO: "interval", arrow.DURATION: "interval",
}

// ddlType derives a Postgres type from an Arrow type; "text" for anything
// without a faithful counterpart (the encoder then writes its text form).
func ddlType(t arrow.DataType) string {
	if t == nil {
		return "text"
	}
	if s, ok := ddlScalar[t.ID()]; ok {
		return s
	}
	switch t := t.(type) {
	case arrow.DecimalType:
		p, s := decimalBounds(t.GetPrecision(), t.GetScale())
		return "numeric(" + strconv.Itoa(int(p)) + "," + strconv.Itoa(int(s)) + ")"
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "timestamp with time zone"
		}
		return "timestamp without time zone"
	case arrow.ExtensionType:
		return ddlExtension(t)
	case *arrow.MapType:
		return "text"
	case arrow.ListLikeType:
		return ddlList(t.Elem())
	}
	return "text"
}

func ddlExtension(t arrow.ExtensionType) string {
	switch t.ExtensionName() {
	case "arrow.uuid":
		return "uuid"
	case "arrow.json":
		return "jsonb"
	}
	return ddlType(t.StorageType())
}

// ddlList: Postgres arrays of arrays are multi-dimensional, not lists of
// lists, so a nested list becomes text.
func ddlList(elem arrow.DataType) string {
	e := ddlType(elem)
	if strings.HasSuffix(e, "[]") {
		return "text"
	}
	return e + "[]"
}
