package mysql

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// kind is how the decoder turns one MySQL text-protocol value into Arrow.
type kind uint8

const (
	kindString   kind = iota // char, varchar, *text, enum, set, json; anything unknown (as text)
	kindBinary               // binary, varbinary, *blob
	kindBool                 // tinyint(1): 0 or 1
	kindBitBool              // bit(1): one byte
	kindBits                 // bit(n): big-endian bytes → uint64
	kindInt8                 // tinyint
	kindInt16                // smallint, year
	kindInt32                // mediumint, int
	kindInt64                // bigint
	kindUint8                // tinyint unsigned
	kindUint16               // smallint unsigned
	kindUint32               // mediumint unsigned, int unsigned
	kindUint64               // bigint unsigned
	kindFloat32              // float
	kindFloat64              // double
	kindDecimal              // decimal(p,s): decimal128 for p ≤ 38, else decimal256
	kindDate                 // date
	kindDatetime             // datetime(n): timestamp[us]; timestamp(n): timestamp[us, UTC]
	kindTime                 // time(n): time64[us]
	kindDuration             // time(n) with time=duration: duration[us]
)

// Arrow types the decoder produces.
var (
	datetimeType  = &arrow.TimestampType{Unit: arrow.Microsecond}
	timestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

var kindArrow = [...]arrow.DataType{
	kindString: arrow.BinaryTypes.String, kindBinary: arrow.BinaryTypes.Binary,
	kindBool: arrow.FixedWidthTypes.Boolean, kindBitBool: arrow.FixedWidthTypes.Boolean,
	kindBits: arrow.PrimitiveTypes.Uint64, kindInt8: arrow.PrimitiveTypes.Int8,
	kindInt16: arrow.PrimitiveTypes.Int16, kindInt32: arrow.PrimitiveTypes.Int32,
	kindInt64: arrow.PrimitiveTypes.Int64, kindUint8: arrow.PrimitiveTypes.Uint8,
	kindUint16: arrow.PrimitiveTypes.Uint16, kindUint32: arrow.PrimitiveTypes.Uint32,
	kindUint64: arrow.PrimitiveTypes.Uint64, kindFloat32: arrow.PrimitiveTypes.Float32,
	kindFloat64: arrow.PrimitiveTypes.Float64, kindDate: arrow.FixedWidthTypes.Date32,
	kindDatetime: datetimeType, kindTime: arrow.FixedWidthTypes.Time64us,
	kindDuration: arrow.FixedWidthTypes.Duration_us,
}

// signedKinds and unsignedKinds map DATA_TYPE of the integer types.
var (
	signedKinds   = map[string]kind{"tinyint": kindInt8, "smallint": kindInt16, "mediumint": kindInt32, "int": kindInt32, "integer": kindInt32, "bigint": kindInt64, "year": kindInt16}
	unsignedKinds = map[string]kind{"tinyint": kindUint8, "smallint": kindUint16, "mediumint": kindUint32, "int": kindUint32, "integer": kindUint32, "bigint": kindUint64}
)

// simpleKinds map the DATA_TYPEs that need no look at COLUMN_TYPE.
var simpleKinds = map[string]kind{
	"float": kindFloat32, "double": kindFloat64, "real": kindFloat64,
	"date": kindDate, "datetime": kindDatetime, "timestamp": kindDatetime,
	"char": kindString, "varchar": kindString, "tinytext": kindString, "text": kindString,
	"mediumtext": kindString, "longtext": kindString, "enum": kindString, "set": kindString,
	"json":   kindString,
	"binary": kindBinary, "varbinary": kindBinary, "tinyblob": kindBinary, "blob": kindBinary,
	"mediumblob": kindBinary, "longblob": kindBinary,
}

// colType is a column's COLUMN_TYPE taken apart.
type colType struct {
	dataType   string // the base name, lower case: "bigint", "decimal", "enum"
	columnType string // as information_schema spells it: "bigint(20) unsigned"
	precision  int32  // decimal precision, bit width
	scale      int32  // decimal scale
}

// parseColumnType reads COLUMN_TYPE ("decimal(65,30)", "bit(5)",
// "int(10) unsigned zerofill", "enum('a','b')"), which Column.NativeType
// carries, so a Read can rebuild what Probe saw.
func parseColumnType(ct string) colType {
	c := colType{columnType: strings.ToLower(strings.TrimSpace(ct))}
	base, args, _ := strings.Cut(c.columnType, "(")
	c.dataType = strings.Fields(base + " x")[0]
	if c.dataType == "bit" || c.dataType == "decimal" || c.dataType == "numeric" {
		c.precision, c.scale = typeArgs(args)
	}
	switch {
	case c.dataType == "bit" && c.precision == 0:
		c.precision = 1
	case (c.dataType == "decimal" || c.dataType == "numeric") && c.precision == 0:
		c.precision = 10
	}
	return c
}

// typeArgs parses "65,30) unsigned" into 65 and 30.
func typeArgs(s string) (int32, int32) {
	s, _, _ = strings.Cut(s, ")")
	p, sc, _ := strings.Cut(s, ",")
	return atoi32(p), atoi32(sc)
}

func atoi32(s string) int32 {
	var n int32
	for _, r := range strings.TrimSpace(s) {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int32(r-'0')
	}
	return n
}

// columnKind maps a column to its decoder kind and Arrow type. Types weir
// has no decoder for (geometry, MariaDB's uuid and inet) read as text.
func columnKind(c colType, o options) (kind, arrow.DataType) {
	k := c.kind(o)
	switch {
	case k == kindDecimal:
		return k, decimalType(c.precision, c.scale)
	case k == kindDatetime && c.dataType == "timestamp":
		return k, timestampType
	}
	return k, kindArrow[k]
}

func (c colType) kind(o options) kind {
	unsigned := strings.Contains(c.columnType, "unsigned")
	switch {
	case c.columnType == "tinyint(1)" && !o.tinyint1Int:
		return kindBool
	case c.dataType == "bit" && c.precision == 1:
		return kindBitBool
	case c.dataType == "bit":
		return kindBits
	case c.dataType == "decimal" || c.dataType == "numeric":
		return kindDecimal
	case c.dataType == "time" && o.timeDuration:
		return kindDuration
	case c.dataType == "time":
		return kindTime
	case unsigned && unsignedKinds[c.dataType] != 0:
		return unsignedKinds[c.dataType]
	case signedKinds[c.dataType] != 0:
		return signedKinds[c.dataType]
	}
	return simpleKinds[c.dataType] // kindString for anything unknown
}

// decimalType: exact for MySQL's whole DECIMAL(65,30) range.
func decimalType(p, s int32) arrow.DataType {
	p = max(p, s, 1)
	if p <= 38 {
		return &arrow.Decimal128Type{Precision: p, Scale: s}
	}
	return &arrow.Decimal256Type{Precision: p, Scale: s}
}

// isGeometry reports the spatial types, read as WKT text (ST_AsText).
func isGeometry(dataType string) bool {
	switch dataType {
	case "geometry", "point", "linestring", "polygon", "multipoint",
		"multilinestring", "multipolygon", "geometrycollection", "geomcollection":
		return true
	}
	return false
}

// known reports whether the decoder reads the type natively.
func (c colType) known() bool {
	_, simple := simpleKinds[c.dataType]
	_, integer := signedKinds[c.dataType]
	switch c.dataType {
	case "bit", "decimal", "numeric", "time":
		return true
	}
	return simple || integer
}

// readExpr is the SELECT expression for a column: the column itself, or a
// conversion to text for types the decoder does not know.
func readExpr(name string, c colType) string {
	q := quoteIdent(name)
	switch {
	case isGeometry(c.dataType):
		return "ST_AsText(" + q + ")"
	case c.dataType == "float":
		// MariaDB prints FLOAT with 6 significant digits (16777216 comes
		// out as 16777200); as DOUBLE it prints every digit, and a float32
		// widened to a float64 is exact.
		return "CAST(" + q + " AS DOUBLE)"
	case !c.known():
		return "CAST(" + q + " AS CHAR CHARACTER SET utf8mb4)"
	}
	return q
}
