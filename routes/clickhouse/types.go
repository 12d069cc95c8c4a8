package clickhouse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/weirhq/weir/routes"
)

// chType is a parsed ClickHouse type: Name plus its raw arguments; the
// wrappers (Nullable, Array, LowCardinality) also carry their Elem.
type chType struct {
	Name string
	Args []string
	Elem *chType
	raw  string
}

// parseType parses a type as the server spells it, e.g.
// "Array(Nullable(Decimal(12, 2)))" or "DateTime64(6, 'UTC')".
func parseType(s string) (chType, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return chType{Name: s, raw: s}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return chType{}, fmt.Errorf("type %q: unbalanced parentheses", s)
	}
	t := chType{Name: s[:i], raw: s}
	inner := s[i+1 : len(s)-1]
	t.Args = splitArgs(inner)
	switch t.Name {
	case "Nullable", "Array", "LowCardinality":
		e, err := parseType(inner)
		if err != nil {
			return chType{}, err
		}
		t.Elem = &e
	}
	return t, nil
}

// splitArgs splits at top-level commas, outside parentheses and quotes.
func splitArgs(s string) []string {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func (t chType) String() string { return t.raw }

// intArg returns argument i as an integer.
func (t chType) intArg(i int) (int, error) {
	if i >= len(t.Args) {
		return 0, fmt.Errorf("type %s: missing argument %d", t.raw, i+1)
	}
	return strconv.Atoi(t.Args[i])
}

// unquote strips the quotes of a string argument such as 'UTC'.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], `\'`, `'`)
	}
	return s
}

// normType removes the spaces a server may or may not put after commas.
func normType(s string) string { return strings.ReplaceAll(s, ", ", ",") }

// features are what a server version can store.
type features struct {
	major, minor int
	dateTime64   bool // DateTime64(p, tz): 20.1
	date32       bool // Date32: 21.9
	boolType     bool // Bool: 22.1 (21.12 experimental)
	decimal256   bool // Decimal(P > 38): 22.1 (20.8 experimental)
	uuid         bool // UUID: 18.1 and older
	wideDates    bool // Date to 2149-06-06, DateTime to 2106-02-07: 21.1 (older date functions stop at 2105)
}

// newFeatures reads a version() string such as "18.16.1" or "24.8.4.13".
func newFeatures(version string) features {
	parts := strings.SplitN(version, ".", 3)
	f := features{}
	if len(parts) >= 2 {
		f.major, _ = strconv.Atoi(parts[0])
		f.minor, _ = strconv.Atoi(parts[1])
	}
	at := func(maj, min int) bool { return f.major > maj || (f.major == maj && f.minor >= min) }
	f.dateTime64, f.date32 = at(20, 1), at(21, 9)
	f.boolType, f.decimal256, f.uuid, f.wideDates = at(22, 1), at(22, 1), at(1, 1), at(21, 1)
	return f
}

// destType is the ClickHouse type of a staging column for a source column.
// A ClickHouse source keeps its own type when this server stores it and
// the Arrow path reproduces it exactly (that is also what lets the Native
// relay insert its bytes untouched); everything else derives from Arrow.
func destType(c routes.Column, scheme string, f features) string {
	if isCHScheme(scheme) && c.NativeType != "" {
		if t, err := parseType(c.NativeType); err == nil && keepsNative(t, f) {
			return t.raw
		}
	}
	t := arrowToCH(c.Type, f)
	if c.Nullable && canBeNullable(t) {
		return "Nullable(" + t + ")"
	}
	return t
}

func isCHScheme(s string) bool {
	return s == Scheme || s == SchemeHTTP || s == SchemeHTTPS
}

func canBeNullable(t string) bool {
	return !strings.HasPrefix(t, "Array(") && !strings.HasPrefix(t, "Nullable(")
}

// keepsNative: ClickHouse types that decode to Arrow and encode back to the
// very same type on this server.
func keepsNative(t chType, f features) bool {
	switch t.Name {
	case "Nullable", "Array":
		return keepsNative(*t.Elem, f)
	case "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
		"Float32", "Float64", "String", "FixedString", "Date", "DateTime", "UUID":
		return true
	case "Decimal", "Decimal32", "Decimal64", "Decimal128":
		p, _ := decimalParams(t)
		return p <= 38 || f.decimal256
	case "Decimal256":
		return f.decimal256
	case "DateTime64":
		return f.dateTime64
	case "Date32":
		return f.date32
	case "Bool":
		return f.boolType
	}
	return false
}

// arrowScalar maps the Arrow types with one obvious ClickHouse type.
var arrowScalar = map[arrow.Type]string{
	arrow.INT8: "Int8", arrow.INT16: "Int16", arrow.INT32: "Int32", arrow.INT64: "Int64",
	arrow.UINT8: "UInt8", arrow.UINT16: "UInt16", arrow.UINT32: "UInt32", arrow.UINT64: "UInt64",
	arrow.FLOAT16: "Float32", arrow.FLOAT32: "Float32", arrow.FLOAT64: "Float64",
	arrow.STRING: "String", arrow.LARGE_STRING: "String", arrow.STRING_VIEW: "String",
	arrow.BINARY: "String", arrow.LARGE_BINARY: "String", arrow.BINARY_VIEW: "String",
	arrow.DURATION: "Int64",
}

// arrowToCH maps an Arrow type to the ClickHouse type weir creates for it
// (without Nullable); types with no faithful counterpart become String,
// written as their text.
func arrowToCH(t arrow.DataType, f features) string {
	if s, ok := arrowScalar[t.ID()]; ok {
		return s
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		return pick(f.boolType, "Bool", "UInt8")
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("FixedString(%d)", t.ByteWidth)
	case *arrow.Date32Type, *arrow.Date64Type:
		return pick(f.date32, "Date32", "Date")
	case *arrow.TimestampType:
		return timestampToCH(t, f)
	case arrow.DecimalType:
		return decimalToCH(t, f)
	case arrow.ExtensionType:
		return extensionToCH(t, f)
	case arrow.ListLikeType:
		return "Array(" + elemToCH(t.ElemField(), f) + ")"
	}
	return "String"
}

func elemToCH(e arrow.Field, f features) string {
	t := arrowToCH(e.Type, f)
	if e.Nullable && canBeNullable(t) {
		return "Nullable(" + t + ")"
	}
	return t
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// timestampToCH: DateTime64 keeps the unit where the server has it; old
// servers get DateTime (whole seconds; see the subseconds option). A
// zone-less timestamp is stored as UTC wall-clock time.
func timestampToCH(t *arrow.TimestampType, f features) string {
	tz := "UTC"
	if strings.Contains(t.TimeZone, "/") {
		tz = t.TimeZone
	}
	if !f.dateTime64 || t.Unit == arrow.Second {
		return fmt.Sprintf("DateTime('%s')", tz)
	}
	return fmt.Sprintf("DateTime64(%d, '%s')", unitDigits(t.Unit), tz)
}

func unitDigits(u arrow.TimeUnit) int {
	return [...]int{arrow.Second: 0, arrow.Millisecond: 3, arrow.Microsecond: 6, arrow.Nanosecond: 9}[u]
}

// decimalToCH keeps precision and scale; a precision the server cannot
// hold becomes String (the exact decimal text).
func decimalToCH(t arrow.DecimalType, f features) string {
	p, s := t.GetPrecision(), t.GetScale()
	if s < 0 || s > p || p > 76 || (p > 38 && !f.decimal256) {
		return "String"
	}
	return fmt.Sprintf("Decimal(%d, %d)", p, s)
}

func extensionToCH(t arrow.ExtensionType, f features) string {
	switch t.ExtensionName() {
	case "arrow.uuid":
		return pick(f.uuid, "UUID", "String")
	case "arrow.json":
		return "String"
	}
	return arrowToCH(t.StorageType(), f)
}

// decimalParams returns a Decimal type's precision and scale.
func decimalParams(t chType) (p, s int) {
	switch t.Name {
	case "Decimal32":
		p = 9
	case "Decimal64":
		p = 18
	case "Decimal128":
		p = 38
	case "Decimal256":
		p = 76
	default:
		p, _ = t.intArg(0)
		s, _ = t.intArg(1)
		return p, s
	}
	s, _ = t.intArg(0)
	return p, s
}

// uuidType is the Arrow UUID extension type.
var uuidType = extensions.NewUUIDType()
