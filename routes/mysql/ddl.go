package mysql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// MySQL's limits that shape the DDL of a staged column.
const (
	maxDecimalPrecision = 65
	maxDecimalScale     = 30
	// maxKeyChars keeps a text key column inside InnoDB's 3072-byte index
	// limit at 4 bytes a character.
	maxKeyChars = 768
)

// isMySQLScheme reports sources whose native types MySQL understands as is.
func isMySQLScheme(s string) bool { return s == Scheme || s == SchemeMariaDB }

// columnDDL is the DDL type of a staged column. A MySQL source keeps its
// COLUMN_TYPE (geometry, read as WKT, lands as LONGTEXT); other sources get
// the type their Arrow type maps to, with the native type as a hint
// (Postgres numeric without precision → DECIMAL(65,30), json/jsonb → JSON,
// uuid → CHAR(36), character(n) → CHAR(n)). Key columns get bounded types,
// since InnoDB cannot index LONGTEXT.
func columnDDL(c routes.Column, sourceScheme string, key bool) string {
	if isMySQLScheme(sourceScheme) && c.NativeType != "" {
		if isGeometry(parseColumnType(c.NativeType).dataType) {
			return "LONGTEXT"
		}
		return c.NativeType
	}
	if t := nativeHint(c, key); t != "" {
		return t
	}
	return ddlType(c.Type, key)
}

var (
	pgVarchar = regexp.MustCompile(`^(?:character varying|varchar)\((\d+)\)$`)
	pgChar    = regexp.MustCompile(`^(?:character|char|bpchar)\((\d+)\)$`)
)

func nativeHint(c routes.Column, key bool) string {
	native := strings.ToLower(strings.TrimSpace(c.NativeType))
	if c.Type == nil || !isStringish(c.Type) {
		return ""
	}
	switch {
	case native == "numeric" || native == "decimal":
		return fmt.Sprintf("DECIMAL(%d,%d)", maxDecimalPrecision, maxDecimalScale)
	case native == "json" || native == "jsonb":
		return "JSON"
	case native == "uuid":
		return "CHAR(36)"
	}
	if m := pgChar.FindStringSubmatch(native); m != nil {
		if n, _ := strconv.Atoi(m[1]); n <= 255 {
			return "CHAR(" + m[1] + ")"
		}
	}
	if m := pgVarchar.FindStringSubmatch(native); m != nil && key {
		if n, _ := strconv.Atoi(m[1]); n <= maxKeyChars {
			return "VARCHAR(" + m[1] + ")"
		}
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

// ddlScalar maps the Arrow types with one obvious MySQL type.
var ddlScalar = map[arrow.Type]string{
	arrow.BOOL: "TINYINT(1)", arrow.INT8: "TINYINT", arrow.INT16: "SMALLINT",
	arrow.INT32: "INT", arrow.INT64: "BIGINT", arrow.UINT8: "TINYINT UNSIGNED",
	arrow.UINT16: "SMALLINT UNSIGNED", arrow.UINT32: "INT UNSIGNED",
	arrow.UINT64: "BIGINT UNSIGNED", arrow.FLOAT16: "FLOAT", arrow.FLOAT32: "FLOAT",
	arrow.FLOAT64: "DOUBLE", arrow.DATE32: "DATE", arrow.DATE64: "DATE",
	arrow.TIME32: "TIME(6)", arrow.TIME64: "TIME(6)", arrow.TIMESTAMP: "DATETIME(6)",
	arrow.DURATION: "TIME(6)", arrow.INTERVAL_MONTHS: "VARCHAR(255)",
	arrow.INTERVAL_DAY_TIME: "VARCHAR(255)", arrow.INTERVAL_MONTH_DAY_NANO: "VARCHAR(255)",
	arrow.LIST: "JSON", arrow.LARGE_LIST: "JSON", arrow.FIXED_SIZE_LIST: "JSON",
	arrow.LIST_VIEW: "JSON", arrow.LARGE_LIST_VIEW: "JSON", arrow.STRUCT: "JSON", arrow.MAP: "JSON",
}

// ddlType derives a MySQL type from an Arrow type: timestamps with a zone
// become DATETIME(6) holding UTC; anything without a faithful counterpart
// becomes LONGTEXT (the encoder then writes its text form).
func ddlType(t arrow.DataType, key bool) string {
	if t == nil {
		return "LONGTEXT"
	}
	if s, ok := ddlScalar[t.ID()]; ok {
		return s
	}
	switch t := t.(type) {
	case arrow.DecimalType:
		p, s := t.GetPrecision(), t.GetScale()
		if p <= maxDecimalPrecision && s <= maxDecimalScale && s >= 0 {
			return fmt.Sprintf("DECIMAL(%d,%d)", max(p, s, 1), s)
		}
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth <= 255 {
			return fmt.Sprintf("BINARY(%d)", t.ByteWidth)
		}
		return blobType(key)
	case arrow.ExtensionType:
		return ddlExtension(t, key)
	}
	switch t.ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return blobType(key)
	}
	return textType(key)
}

func ddlExtension(t arrow.ExtensionType, key bool) string {
	switch t.ExtensionName() {
	case "arrow.uuid":
		return "CHAR(36)"
	case "arrow.json":
		return "JSON"
	}
	return ddlType(t.StorageType(), key)
}

func textType(key bool) string {
	if key {
		return fmt.Sprintf("VARCHAR(%d)", maxKeyChars)
	}
	return "LONGTEXT"
}

func blobType(key bool) string {
	if key {
		return "VARBINARY(3072)"
	}
	return "LONGBLOB"
}

// stagedColumn is a staged column as created: name, DDL type, and how
// LOAD DATA must assign it.
type stagedColumn struct {
	routes.Column
	ddl string
}

// loadTarget is the LOAD DATA column-list entry and, for BIT, JSON and
// YEAR columns, the SET clause that converts the user variable holding the
// text.
func (c stagedColumn) loadTarget(i int) (target, set string) {
	ct := parseColumnType(c.ddl)
	v := fmt.Sprintf("@v%d", i)
	switch ct.dataType {
	case "bit":
		return v, fmt.Sprintf("%s = CAST(%s AS UNSIGNED)", quoteIdent(c.Name), v)
	case "json":
		return v, fmt.Sprintf("%s = CONVERT(%s USING utf8mb4)", quoteIdent(c.Name), v)
	case "year": // LOAD DATA reads "0" into YEAR as 2000, "0000" as 0000
		return v, fmt.Sprintf("%s = LPAD(%s, 4, '0')", quoteIdent(c.Name), v)
	}
	return quoteIdent(c.Name), ""
}

// stagedColumns maps the source's columns to the staging table's.
func stagedColumns(info *routes.TableInfo, key []string) []stagedColumn {
	cols := make([]stagedColumn, len(info.Columns))
	for i, c := range info.Columns {
		cols[i] = stagedColumn{Column: c, ddl: columnDDL(c, info.Scheme, contains(key, c.Name))}
	}
	fitKey(cols, key)
	return cols
}

// keyIndexBytes is InnoDB's limit on one index: a key's columns together,
// a character counted at utf8mb4's 4 bytes.
const keyIndexBytes = 3072

// fitKey shares the index's bytes between the key columns weir sized
// itself (text as VARCHAR, bytes as VARBINARY): each alone takes all of it,
// so a composite key with one of them (bigint, text) failed with MySQL's
// error 1071 "key too long". A value longer than its share fails the load
// (LOAD DATA's warnings are errors), it is never cut.
func fitKey(cols []stagedColumn, key []string) {
	var open []int
	used := 0
	for i, c := range cols {
		switch {
		case !contains(key, c.Name):
		case c.ddl == textType(true) || c.ddl == blobType(true):
			open = append(open, i)
		default:
			used += keyBytes(c.ddl)
		}
	}
	if len(open) == 0 || used == 0 && len(open) == 1 {
		return
	}
	share := (keyIndexBytes - used) / len(open)
	if share < 4 {
		return // nothing fits: the server's own error says so
	}
	for _, i := range open {
		if cols[i].ddl == textType(true) {
			cols[i].ddl = fmt.Sprintf("VARCHAR(%d)", share/4)
		} else {
			cols[i].ddl = fmt.Sprintf("VARBINARY(%d)", share)
		}
	}
}

// keyBytes is what a key column of DDL type ddl takes in an index, at
// most: characters at 4 bytes, numbers and times at their storage size.
func keyBytes(ddl string) int {
	ct := parseColumnType(ddl)
	_, args, _ := strings.Cut(ct.columnType, "(")
	n, _ := typeArgs(args)
	switch ct.dataType {
	case "char", "varchar":
		return 4 * int(n)
	case "binary", "varbinary":
		return int(n)
	case "tinyint", "year":
		return 1
	case "smallint":
		return 2
	case "mediumint", "date":
		return 3
	case "int", "float":
		return 4
	case "time":
		return 6
	case "bigint", "double", "datetime", "timestamp":
		return 8
	case "decimal", "numeric":
		return int(ct.precision)/2 + 1
	case "bit":
		return (int(ct.precision) + 7) / 8
	}
	return 255 // enum, set and the rest: a generous bound
}

// columnDefs renders the CREATE TABLE body: columns, then the key.
func columnDefs(cols []stagedColumn, key []string) string {
	defs := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		null := " NULL"
		if !c.Nullable || contains(key, c.Name) {
			null = " NOT NULL"
		}
		defs = append(defs, quoteIdent(c.Name)+" "+c.ddl+null)
	}
	if len(key) > 0 {
		defs = append(defs, "PRIMARY KEY ("+joinIdents(key)+")")
	}
	return strings.Join(defs, ",\n  ")
}
