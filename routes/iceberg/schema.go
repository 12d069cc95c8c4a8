package iceberg

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// newColumn is a source column the destination table does not have yet,
// or (widen) one whose type grew on the source to typ, a type Iceberg
// promotes the table's to (int → long, float → double, a decimal of more
// precision and the same scale).
type newColumn struct {
	name  string
	typ   iceberg.Type
	widen bool
}

// schemaChanges compares the source's columns with the table's schema.
// Columns only the source has are returned, to be added (schema
// evolution), and columns whose type grew within Iceberg's promotions, to
// be widened; a table column the source lacks, or a column whose type
// changed otherwise, is a ProbeError naming it.
func schemaChanges(dest routes.TableRef, info *routes.TableInfo, sc *iceberg.Schema) ([]newColumn, error) {
	var added []newColumn
	for _, c := range info.Columns {
		typ, err := icebergType(c.Type, &idGen{})
		if err != nil {
			return nil, &routes.ProbeError{Table: dest.String(), Column: c.Name, Problem: err.Error()}
		}
		f, ok := sc.FindFieldByName(c.Name)
		if !ok {
			added = append(added, newColumn{name: c.Name, typ: typ})
			continue
		}
		if !promotable(typ, f.Type) {
			if widens(f.Type, typ) {
				added = append(added, newColumn{name: c.Name, typ: typ, widen: true})
				continue
			}
			return nil, &routes.ProbeError{Table: dest.String(), Column: c.Name,
				Problem: fmt.Sprintf("type changed: the source's %s (Iceberg %s) does not fit the table's %s", c.Type, typ, f.Type),
				Hint:    "weir only adds columns and makes Iceberg's promotions (int → long, float → double, decimal precision); change the table's column type with an engine that supports it (Spark, PyIceberg), or write to a new table"}
		}
	}
	for _, f := range sc.Fields() {
		if _, ok := info.Column(f.Name); !ok {
			return nil, &routes.ProbeError{Table: dest.String(), Column: f.Name,
				Problem: "the table has this column and the source does not (dropped or renamed in the source?)",
				Hint:    "add the column back to the source, drop it from the Iceberg table with an engine that supports it (Spark, PyIceberg), or write to a new table"}
		}
	}
	return added, nil
}

// promotable reports whether values of Iceberg type src can be written to
// a column of type dst: the same type, Iceberg's promotions (int → long,
// float → double, a wider decimal of the same scale), any type to string
// (weir stores its text), and nested types of the same kind (converted
// field by field).
func promotable(src, dst iceberg.Type) bool {
	if src.Equals(dst) || dst.Equals(iceberg.PrimitiveTypes.String) {
		return true
	}
	switch s := src.(type) {
	case iceberg.Int32Type:
		return dst.Equals(iceberg.PrimitiveTypes.Int64)
	case iceberg.Float32Type:
		return dst.Equals(iceberg.PrimitiveTypes.Float64)
	case iceberg.DecimalType:
		d, ok := dst.(iceberg.DecimalType)
		return ok && d.Scale() == s.Scale() && d.Precision() >= s.Precision()
	case *iceberg.ListType:
		_, ok := dst.(*iceberg.ListType)
		return ok
	case *iceberg.StructType:
		_, ok := dst.(*iceberg.StructType)
		return ok
	}
	return false
}

// widens reports whether the table's type can be promoted to the
// source's, a wider one: Iceberg schema evolution keeps every value.
func widens(tableType, src iceberg.Type) bool {
	switch tableType.(type) {
	case iceberg.Int32Type, iceberg.Float32Type, iceberg.DecimalType:
		return !src.Equals(iceberg.PrimitiveTypes.String) && promotable(tableType, src)
	}
	return false
}

// addColumns stages the new columns in tx, as optional columns (rows
// already in the table have none), and the widened columns' new types.
func addColumns(tx *table.Transaction, cols []newColumn) error {
	if len(cols) == 0 {
		return nil
	}
	u := tx.UpdateSchema(true, false)
	for _, c := range cols {
		if c.widen {
			u.UpdateColumn([]string{c.name}, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Val: c.typ, Valid: true}})
			continue
		}
		u.AddColumn([]string{c.name}, c.typ, "", false, nil)
	}
	if err := u.Commit(); err != nil {
		return fmt.Errorf("add columns: %w", err)
	}
	return nil
}
