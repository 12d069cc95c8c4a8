package iceberg

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/weirhq/weir/routes"
)

// maxDecimalPrecision is the widest Iceberg decimal; wider decimals are
// stored as their exact text.
const maxDecimalPrecision = 38

// idGen hands out field ids: top-level columns first (1..n), nested
// fields after them, the way Iceberg writers number a new schema.
type idGen struct{ next int }

func (g *idGen) id() int { g.next++; return g.next }

// tableSchema builds the Iceberg schema of a new table from the source's
// columns. The primary key becomes the identifier fields (required).
func tableSchema(info *routes.TableInfo) (*iceberg.Schema, error) {
	g := &idGen{next: len(info.Columns)}
	fields := make([]iceberg.NestedField, len(info.Columns))
	var keyIDs []int
	for i, c := range info.Columns {
		t, err := icebergType(c.Type, g)
		if err != nil {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Column: c.Name, Problem: err.Error()}
		}
		isKey := contains(info.PrimaryKey, c.Name)
		fields[i] = iceberg.NestedField{ID: i + 1, Name: c.Name, Type: t, Required: !c.Nullable || isKey}
		if isKey {
			keyIDs = append(keyIDs, i+1)
		}
	}
	if len(keyIDs) != len(info.PrimaryKey) {
		keyIDs = nil
	}
	return iceberg.NewSchemaWithIdentifiers(0, keyIDs, fields...), nil
}

// scalarTypes are the Arrow types with one Iceberg counterpart.
var scalarTypes = map[arrow.Type]iceberg.Type{
	arrow.BOOL: iceberg.PrimitiveTypes.Bool, arrow.INT8: iceberg.PrimitiveTypes.Int32,
	arrow.INT16: iceberg.PrimitiveTypes.Int32, arrow.INT32: iceberg.PrimitiveTypes.Int32,
	arrow.UINT8: iceberg.PrimitiveTypes.Int32, arrow.UINT16: iceberg.PrimitiveTypes.Int32,
	arrow.UINT32: iceberg.PrimitiveTypes.Int64, arrow.INT64: iceberg.PrimitiveTypes.Int64,
	arrow.UINT64: iceberg.DecimalTypeOf(20, 0), arrow.FLOAT16: iceberg.PrimitiveTypes.Float32,
	arrow.FLOAT32: iceberg.PrimitiveTypes.Float32, arrow.FLOAT64: iceberg.PrimitiveTypes.Float64,
	arrow.STRING: iceberg.PrimitiveTypes.String, arrow.LARGE_STRING: iceberg.PrimitiveTypes.String,
	arrow.STRING_VIEW: iceberg.PrimitiveTypes.String, arrow.BINARY: iceberg.PrimitiveTypes.Binary,
	arrow.LARGE_BINARY: iceberg.PrimitiveTypes.Binary, arrow.BINARY_VIEW: iceberg.PrimitiveTypes.Binary,
	arrow.DATE32: iceberg.PrimitiveTypes.Date, arrow.DATE64: iceberg.PrimitiveTypes.Date,
	arrow.TIME32: iceberg.PrimitiveTypes.Time, arrow.TIME64: iceberg.PrimitiveTypes.Time,
	// No Iceberg type holds these faithfully: their text is stored.
	arrow.INTERVAL_MONTHS: iceberg.PrimitiveTypes.String, arrow.INTERVAL_DAY_TIME: iceberg.PrimitiveTypes.String,
	arrow.INTERVAL_MONTH_DAY_NANO: iceberg.PrimitiveTypes.String, arrow.DURATION: iceberg.PrimitiveTypes.String,
	arrow.NULL: iceberg.PrimitiveTypes.String, arrow.MAP: iceberg.PrimitiveTypes.String,
	arrow.DECIMAL256: nil, arrow.DECIMAL128: nil, // by precision, below
}

// icebergType maps an Arrow type to the Iceberg type weir stores it as.
func icebergType(t arrow.DataType, g *idGen) (iceberg.Type, error) {
	switch t := t.(type) {
	case arrow.ExtensionType:
		return extensionType(t, g)
	case arrow.DecimalType:
		if t.GetPrecision() > maxDecimalPrecision || t.GetScale() < 0 {
			return iceberg.PrimitiveTypes.String, nil
		}
		return iceberg.DecimalTypeOf(int(t.GetPrecision()), int(t.GetScale())), nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return iceberg.PrimitiveTypes.TimestampTz, nil
		}
		return iceberg.PrimitiveTypes.Timestamp, nil
	case *arrow.FixedSizeBinaryType:
		return iceberg.FixedTypeOf(t.ByteWidth), nil
	case arrow.ListLikeType:
		if t.ID() == arrow.MAP {
			return iceberg.PrimitiveTypes.String, nil
		}
		return listType(t.ElemField(), g)
	case *arrow.StructType:
		return structType(t, g)
	}
	if it, ok := scalarTypes[t.ID()]; ok && it != nil {
		return it, nil
	}
	return nil, fmt.Errorf("arrow type %s has no Iceberg type", t)
}

func extensionType(t arrow.ExtensionType, g *idGen) (iceberg.Type, error) {
	switch t.ExtensionName() {
	case "arrow.uuid":
		return iceberg.PrimitiveTypes.UUID, nil
	case "arrow.json", "arrow.opaque":
		return iceberg.PrimitiveTypes.String, nil
	}
	return icebergType(t.StorageType(), g)
}

func listType(elem arrow.Field, g *idGen) (iceberg.Type, error) {
	id := g.id()
	et, err := icebergType(elem.Type, g)
	if err != nil {
		return nil, err
	}
	return &iceberg.ListType{ElementID: id, Element: et, ElementRequired: !elem.Nullable}, nil
}

func structType(t *arrow.StructType, g *idGen) (iceberg.Type, error) {
	ids := make([]int, t.NumFields())
	for i := range ids {
		ids[i] = g.id()
	}
	fields := make([]iceberg.NestedField, t.NumFields())
	for i, f := range t.Fields() {
		ft, err := icebergType(f.Type, g)
		if err != nil {
			return nil, err
		}
		fields[i] = iceberg.NestedField{ID: ids[i], Name: f.Name, Type: ft, Required: !f.Nullable}
	}
	return &iceberg.StructType{FieldList: fields}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
