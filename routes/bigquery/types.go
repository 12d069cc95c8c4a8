package bigquery

import (
	"strings"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/weirhq/weir/routes"
)

// BigQuery's exact numeric types: NUMERIC holds 29 integer and 9
// fractional digits, BIGNUMERIC 38 and 38.
const (
	numericInt, numericScale       = 29, 9
	bigNumericInt, bigNumericScale = 38, 38
)

// Staged types every Arrow column is converted to before it is written to
// Parquet: the forms BigQuery's Parquet loader reads into the column's type.
var (
	tsUTC    = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tsLocal  = &arrow.TimestampType{Unit: arrow.Microsecond}
	jsonType = mustJSON()
)

func mustJSON() arrow.ExtensionType {
	t, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		panic(err)
	}
	return t
}

// layout is how a source table is staged: the Arrow schema of the Parquet
// files and the BigQuery schema of the staging table, column by column.
type layout struct {
	arrow  *arrow.Schema
	schema bq.Schema
}

// columnRule: BigQuery column names are 300 characters at most and are
// compared without case.
var columnRule = routes.ColumnRule{Server: "BigQuery", Fits: routes.Runes(300), Limit: "300 characters", Fold: strings.ToLower, Folds: "compares column names without case"}

// newLayout maps every column of a probed table.
func newLayout(info *routes.TableInfo) (layout, error) {
	if err := routes.CheckColumnNames(info, columnRule); err != nil {
		return layout{}, err
	}
	fields := make([]arrow.Field, len(info.Columns))
	schema := make(bq.Schema, len(info.Columns))
	for i, c := range info.Columns {
		t, fs := mapType(c.Type, c.NativeType)
		fs.Name, fs.Required = c.Name, !c.Nullable && !fs.Repeated
		fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: true}
		schema[i] = fs
	}
	return layout{arrow: arrow.NewSchema(fields, nil), schema: schema}, nil
}

// mapType returns the staged Arrow type of a source type and its BigQuery
// field (without name):
//
//	bool                            BOOL
//	int8..int64, uint8..uint32      INT64
//	uint64                          NUMERIC (as decimal(20,0))
//	float16..float64                FLOAT64
//	decimal(p,s), 0≤s≤9, p-s≤29     NUMERIC
//	decimal(p,s), 0≤s≤38, p-s≤38    BIGNUMERIC
//	wider decimals                  STRING (exact text)
//	string (json/jsonb native)      JSON
//	string                          STRING
//	binary, fixed-size binary       BYTES
//	uuid                            STRING (canonical text)
//	date32, date64                  DATE
//	time32, time64                  TIME (microseconds)
//	timestamp with a time zone      TIMESTAMP (microseconds, UTC)
//	timestamp without               DATETIME (microseconds)
//	list of a non-list              REPEATED element
//	struct                          RECORD
//	intervals, durations, maps,
//	lists of lists, others          STRING (text; structured values as JSON)
func mapType(t arrow.DataType, native string) (arrow.DataType, *bq.FieldSchema) {
	switch t.ID() {
	case arrow.BOOL:
		return t, &bq.FieldSchema{Type: bq.BooleanFieldType}
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.IntegerFieldType}
	case arrow.UINT64:
		return &arrow.Decimal128Type{Precision: 20, Scale: 0}, &bq.FieldSchema{Type: bq.NumericFieldType}
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return arrow.PrimitiveTypes.Float64, &bq.FieldSchema{Type: bq.FloatFieldType}
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return decimalType(t.(arrow.DecimalType))
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		if isJSONNative(native) {
			return jsonType, &bq.FieldSchema{Type: bq.JSONFieldType}
		}
		return arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType}
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return arrow.BinaryTypes.Binary, &bq.FieldSchema{Type: bq.BytesFieldType}
	case arrow.DATE32, arrow.DATE64:
		return arrow.FixedWidthTypes.Date32, &bq.FieldSchema{Type: bq.DateFieldType}
	case arrow.TIME32, arrow.TIME64:
		return arrow.FixedWidthTypes.Time64us, &bq.FieldSchema{Type: bq.TimeFieldType}
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone != "" {
			return tsUTC, &bq.FieldSchema{Type: bq.TimestampFieldType}
		}
		return tsLocal, &bq.FieldSchema{Type: bq.DateTimeFieldType}
	case arrow.LIST, arrow.LARGE_LIST:
		return listType(t.(arrow.ListLikeType))
	case arrow.STRUCT:
		return structType(t.(*arrow.StructType))
	case arrow.EXTENSION:
		return extensionType(t.(arrow.ExtensionType), native)
	}
	return arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType}
}

func decimalType(t arrow.DecimalType) (arrow.DataType, *bq.FieldSchema) {
	p, s := t.GetPrecision(), t.GetScale()
	switch {
	case s < 0 || s > bigNumericScale || p-s > bigNumericInt:
		return arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType}
	case s <= numericScale && p-s <= numericInt:
		return t, &bq.FieldSchema{Type: bq.NumericFieldType}
	}
	return t, &bq.FieldSchema{Type: bq.BigNumericFieldType}
}

// isJSONNative reports a source's JSON column types (PostgreSQL json and
// jsonb, MySQL json, ClickHouse JSON).
func isJSONNative(native string) bool {
	n := strings.ToLower(strings.TrimSpace(native))
	return n == "json" || n == "jsonb" || strings.HasPrefix(n, "json(")
}

// listType: BigQuery arrays cannot nest, so a list of lists is text.
func listType(t arrow.ListLikeType) (arrow.DataType, *bq.FieldSchema) {
	if id := t.Elem().ID(); id == arrow.LIST || id == arrow.LARGE_LIST {
		return arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType}
	}
	elem, fs := mapType(t.Elem(), "")
	fs.Repeated = true
	return arrow.ListOfField(arrow.Field{Name: "element", Type: elem, Nullable: true}), fs
}

func structType(t *arrow.StructType) (arrow.DataType, *bq.FieldSchema) {
	fields := make([]arrow.Field, t.NumFields())
	schema := make(bq.Schema, t.NumFields())
	for i, f := range t.Fields() {
		ft, fs := mapType(f.Type, "")
		fields[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: true}
		fs.Name = f.Name
		schema[i] = fs
	}
	return arrow.StructOf(fields...), &bq.FieldSchema{Type: bq.RecordFieldType, Schema: schema}
}

func extensionType(t arrow.ExtensionType, native string) (arrow.DataType, *bq.FieldSchema) {
	switch t.ExtensionName() {
	case "arrow.uuid":
		return arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType}
	case "arrow.json":
		return jsonType, &bq.FieldSchema{Type: bq.JSONFieldType}
	}
	return mapType(t.StorageType(), native)
}
