package bigquery

import (
	"context"
	"fmt"
	"strings"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// Schema drift between runs (append, merge): the staged schema of this
// run's probe against the existing destination's. The INSERT … SELECT or
// MERGE assigns each staged value to the destination column's type:
// GoogleSQL's coercions take an INT64 or a NUMERIC into FLOAT64 (rounding
// past 2^53 or 15 digits), and a NUMERIC(P,S) keeps P,S; the emulator
// instead rejects such an INSERT at the commit, after the load.
// routes.Holds decides, and a column it does not hold is refused before a
// row moves, whichever the server would do. Nothing is widened.

// casts: BigQuery has no implicit coercion of a FLOAT64 into STRING nor of
// a BOOL into a number (the statement would fail after the load).
var casts = routes.Casts{}

// checkDrift refuses, under the lock, an append or merge into an
// existing destination whose columns do not hold the staged ones.
func (st *stage) checkDrift(ctx context.Context) error {
	if st.opts.Mode == routes.ModeReplace {
		return nil
	}
	md, err := st.e.tableMeta(ctx, st.dest)
	if err != nil || md == nil {
		return err
	}
	st.bounds, err = checkSchema(st.dest, st.e.ident(st.dest), st.lay, md.Schema)
	return err
}

// bound is a destination STRING(L) the staged column is not bounded by
// (routes.CheckLength): checkLengths reads the staged values' lengths
// before the commit's INSERT.
type bound struct {
	column, typ string // typ: the destination's, STRING(3)
	length      int
}

// checkSchema compares lay (the source's columns as staged) with have,
// the destination's schema; ident is the destination quoted for SQL. It
// returns the columns whose declared length the values must be checked
// against.
func checkSchema(dest routes.TableRef, ident string, lay layout, have bq.Schema) ([]bound, error) {
	var bounds []bound
	byName := map[string]*bq.FieldSchema{}
	for _, fs := range have {
		byName[strings.ToLower(fs.Name)] = fs
	}
	for i, fs := range lay.schema {
		d, ok := byName[strings.ToLower(fs.Name)]
		if !ok {
			continue
		}
		src := bqColumnType(fs)
		if t, ok := lay.arrow.Field(i).Type.(arrow.DecimalType); ok && src.Kind == routes.KindDecimal {
			src.Precision, src.Scale = int(t.GetPrecision()), int(t.GetScale()) // the values' own digits, not the staged type's
		}
		dt := bqColumnType(d)
		if !routes.Holds(dt, src, casts) {
			return nil, routes.LossyError(dest, fs.Name, typeName(fs), typeName(d),
				fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DATA TYPE %s", ident, quoteIdent(d.Name), typeName(fs)))
		}
		// BYTES(L) is left to BigQuery's error at the commit (exit 1): the
		// emulator keeps a loaded BYTES value as its base64 text, so a check
		// of its length could not be tested there.
		if n := routes.CheckLength(dt, src); n > 0 && dt.Kind == routes.KindText {
			bounds = append(bounds, bound{column: d.Name, typ: typeName(d), length: n})
		}
	}
	return bounds, nil
}

// checkLengths refuses, before the commit's INSERT or MERGE, a staged
// value longer than its STRING(L) column (LENGTH counts characters), one
// scan of the staging table: BigQuery would fail the commit on it, after
// the load, exit 1 (the emulator stored it whole).
func (st *stage) checkLengths(ctx context.Context) error {
	if len(st.bounds) == 0 {
		return nil
	}
	sel := make([]string, len(st.bounds))
	for i, b := range st.bounds {
		sel[i] = fmt.Sprintf("IFNULL(MAX(LENGTH(%s)), 0)", quoteIdent(b.column))
	}
	it, err := st.e.client.Query(fmt.Sprintf("SELECT %s FROM %s", strings.Join(sel, ", "), st.e.ident(st.table))).Read(ctx)
	var vals []bq.Value
	if err == nil {
		err = it.Next(&vals)
	}
	if err != nil {
		return fmt.Errorf("check the lengths of the values for %s: %w", st.dest, err)
	}
	for i, b := range st.bounds {
		if n, _ := vals[i].(int64); int(n) > b.length {
			to := strings.Replace(b.typ, fmt.Sprintf("(%d)", b.length), fmt.Sprintf("(%d)", n), 1)
			return routes.TooLongError(st.dest, b.column, b.typ, int(n), false, false,
				fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET DATA TYPE %s", st.e.ident(st.dest), quoteIdent(b.column), to))
		}
	}
	return nil
}

// bqColumnType maps a BigQuery field to the type the lossy-cast rule
// compares: NUMERIC holds 38 digits, 9 after the point, BIGNUMERIC 76
// and 38, unless parameterized; DATETIME is a wall clock, TIMESTAMP an
// instant, both in microseconds. Arrays, records, GEOGRAPHY and INTERVAL
// are routes.KindOther.
func bqColumnType(fs *bq.FieldSchema) routes.ColumnType {
	if fs.Repeated {
		return routes.ColumnType{}
	}
	typ := fs.Type
	if std, ok := standardNames[typ]; ok {
		typ = std
	}
	switch typ {
	case bq.NumericFieldType, bq.BigNumericFieldType:
		ct := routes.ColumnType{Kind: routes.KindDecimal, Precision: numericInt + numericScale, Scale: numericScale}
		if typ == bq.BigNumericFieldType {
			ct.Precision, ct.Scale = bigNumericInt+bigNumericScale, bigNumericScale
		}
		if fs.Precision > 0 {
			ct.Precision, ct.Scale = int(fs.Precision), int(fs.Scale)
		}
		return ct
	case bq.TimestampFieldType:
		return routes.ColumnType{Kind: routes.KindTimestamp, Digits: 6, Zone: "UTC"}
	case bq.StringFieldType, bq.BytesFieldType: // STRING(L), BYTES(L): a declared length (checkLengths checks STRING's)
		ct := bqKindTypes[typ]
		ct.Length = int(fs.MaxLength)
		return ct
	}
	return bqKindTypes[typ]
}

// standardNames are the GoogleSQL names of the API's legacy type names,
// which a schema may carry either way (the API spells INT64 as INTEGER).
var standardNames = map[bq.FieldType]bq.FieldType{
	"INT64": bq.IntegerFieldType, "FLOAT64": bq.FloatFieldType, "BOOL": bq.BooleanFieldType,
	"DECIMAL": bq.NumericFieldType, "BIGDECIMAL": bq.BigNumericFieldType, "STRUCT": bq.RecordFieldType,
}

var bqKindTypes = map[bq.FieldType]routes.ColumnType{
	bq.BooleanFieldType: {Kind: routes.KindBool}, bq.IntegerFieldType: {Kind: routes.KindInt, Bits: 63},
	bq.FloatFieldType: {Kind: routes.KindFloat, Bits: 64}, bq.StringFieldType: {Kind: routes.KindText},
	bq.BytesFieldType: {Kind: routes.KindBinary}, bq.DateFieldType: {Kind: routes.KindDate},
	bq.TimeFieldType: {Kind: routes.KindTime, Digits: 6}, bq.DateTimeFieldType: {Kind: routes.KindTimestamp, Digits: 6},
	bq.JSONFieldType: {Kind: routes.KindJSON},
}

// typeName renders a field's type as GoogleSQL spells it, with its
// parameters: INT64, NUMERIC(10,2), STRING(5), ARRAY<INT64>, STRUCT<a INT64>.
func typeName(fs *bq.FieldSchema) string {
	s := map[bq.FieldType]string{bq.IntegerFieldType: "INT64", bq.FloatFieldType: "FLOAT64", bq.BooleanFieldType: "BOOL"}[fs.Type]
	if s == "" {
		s = string(fs.Type)
	}
	switch {
	case fs.Type == bq.RecordFieldType:
		fields := make([]string, len(fs.Schema))
		for i, c := range fs.Schema {
			fields[i] = c.Name + " " + typeName(c)
		}
		s = "STRUCT<" + strings.Join(fields, ", ") + ">"
	case fs.Precision > 0 && fs.Scale > 0:
		s += fmt.Sprintf("(%d,%d)", fs.Precision, fs.Scale)
	case fs.Precision > 0:
		s += fmt.Sprintf("(%d)", fs.Precision)
	case fs.MaxLength > 0:
		s += fmt.Sprintf("(%d)", fs.MaxLength)
	}
	if fs.Repeated {
		return "ARRAY<" + s + ">"
	}
	return s
}
