package bigquery

import (
	"errors"
	"strings"
	"testing"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
)

// TestCheckDrift: an append or merge whose source column became a type
// the destination's existing column does not hold exactly — GoogleSQL
// coerces an INT64 or a NUMERIC into FLOAT64; a NUMERIC(P,S) keeps its
// scale — is refused as bad input naming the column, both types and the
// ALTER; a type it holds is kept.
func TestCheckDrift(t *testing.T) {
	dec := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	tsz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	tests := []struct {
		name string
		src  arrow.DataType
		dest *bq.FieldSchema
		want string // the source type the refusal names; "" kept
	}{
		{"int64 into float64", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.FloatFieldType}, "INT64"},
		{"int32 into float64 (staged INT64)", arrow.PrimitiveTypes.Int32, &bq.FieldSchema{Type: bq.FloatFieldType}, "INT64"},
		{"numeric into float64", dec(20, 2), &bq.FieldSchema{Type: bq.FloatFieldType}, "NUMERIC"},
		{"small numeric into float64", dec(15, 3), &bq.FieldSchema{Type: bq.FloatFieldType}, ""},
		{"float64 into int64", arrow.PrimitiveTypes.Float64, &bq.FieldSchema{Type: bq.IntegerFieldType}, "FLOAT64"},
		{"float64 into numeric", arrow.PrimitiveTypes.Float64, &bq.FieldSchema{Type: bq.NumericFieldType}, "FLOAT64"},
		{"numeric scale into int64", dec(10, 2), &bq.FieldSchema{Type: bq.IntegerFieldType}, "NUMERIC"},
		{"numeric scale 0 into int64", dec(10, 0), &bq.FieldSchema{Type: bq.IntegerFieldType}, ""},
		{"int64 into numeric", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.NumericFieldType}, ""},
		{"numeric(12,4) into numeric", dec(12, 4), &bq.FieldSchema{Type: bq.NumericFieldType}, ""},
		{"numeric(12,4) into NUMERIC(10,2)", dec(12, 4), &bq.FieldSchema{Type: bq.NumericFieldType, Precision: 10, Scale: 2}, "NUMERIC"},
		{"numeric(12,2) into NUMERIC(10,2)", dec(12, 2), &bq.FieldSchema{Type: bq.NumericFieldType, Precision: 10, Scale: 2}, ""},
		{"bignumeric scale into numeric", dec(20, 12), &bq.FieldSchema{Type: bq.NumericFieldType}, "BIGNUMERIC"},
		{"bignumeric scale into bignumeric", dec(20, 12), &bq.FieldSchema{Type: bq.BigNumericFieldType}, ""},
		{"numeric into BIGNUMERIC(40,10)", dec(12, 4), &bq.FieldSchema{Type: bq.BigNumericFieldType, Precision: 40, Scale: 10}, ""},
		{"bignumeric into BIGNUMERIC(40,10)", dec(30, 20), &bq.FieldSchema{Type: bq.BigNumericFieldType, Precision: 40, Scale: 10}, "BIGNUMERIC"},
		{"float into string", arrow.PrimitiveTypes.Float64, &bq.FieldSchema{Type: bq.StringFieldType}, "FLOAT64"},
		{"int into string", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.StringFieldType}, ""},
		{"string into int64", arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.IntegerFieldType}, "STRING"},
		{"bool into int64", arrow.FixedWidthTypes.Boolean, &bq.FieldSchema{Type: bq.IntegerFieldType}, "BOOL"},
		{"int64 into bool", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.BooleanFieldType}, "INT64"},
		{"datetime into date", ts, &bq.FieldSchema{Type: bq.DateFieldType}, "DATETIME"},
		{"date into datetime", arrow.FixedWidthTypes.Date32, &bq.FieldSchema{Type: bq.DateTimeFieldType}, ""},
		{"date into timestamp", arrow.FixedWidthTypes.Date32, &bq.FieldSchema{Type: bq.TimestampFieldType}, "DATE"},
		{"timestamp into datetime", tsz, &bq.FieldSchema{Type: bq.DateTimeFieldType}, "TIMESTAMP"},
		{"datetime into timestamp", ts, &bq.FieldSchema{Type: bq.TimestampFieldType}, "DATETIME"},
		{"timestamp into timestamp", tsz, &bq.FieldSchema{Type: bq.TimestampFieldType}, ""},
		{"bytes into string", arrow.BinaryTypes.Binary, &bq.FieldSchema{Type: bq.StringFieldType}, "BYTES"},
		{"string into STRING(5)", arrow.BinaryTypes.String, &bq.FieldSchema{Type: bq.StringFieldType, MaxLength: 5}, ""},
		{"int into a repeated int", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: bq.IntegerFieldType, Repeated: true}, ""},
		{"int64 into FLOAT64 spelled so", arrow.PrimitiveTypes.Int64, &bq.FieldSchema{Type: "FLOAT64"}, "INT64"},
		{"numeric into DECIMAL(10,2) spelled so", dec(12, 4), &bq.FieldSchema{Type: "DECIMAL", Precision: 10, Scale: 2}, "NUMERIC"},
		{"int64 into INT64 spelled so", arrow.PrimitiveTypes.Int32, &bq.FieldSchema{Type: "INT64"}, ""},
	}
	dest := routes.TableRef{Schema: "ds", Name: "t"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &routes.TableInfo{Ref: routes.TableRef{Schema: "public", Name: "t"}, Columns: []routes.Column{
				{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: tt.src, Nullable: true}}}
			lay, err := newLayout(info)
			if err != nil {
				t.Fatal(err)
			}
			d := *tt.dest
			d.Name = "V" // BigQuery compares names without case
			_, err = checkSchema(dest, "`p.ds.t`", lay, bq.Schema{{Name: "id", Type: bq.IntegerFieldType}, &d})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, routes.ErrBadInput) {
				t.Fatalf("err = %v, want bad input", err)
			}
			for _, s := range []string{"ds.t.v", tt.want, typeName(&d), "ALTER TABLE `p.ds.t` ALTER COLUMN `V` SET DATA TYPE " + tt.want, "--mode replace"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v: want %q in it", err, s)
				}
			}
		})
	}
}

// TestTypeName: a field's type as GoogleSQL spells it, with its
// parameters.
func TestTypeName(t *testing.T) {
	tests := []struct {
		fs   *bq.FieldSchema
		want string
	}{
		{&bq.FieldSchema{Type: bq.NumericFieldType, Precision: 10, Scale: 2}, "NUMERIC(10,2)"},
		{&bq.FieldSchema{Type: bq.NumericFieldType, Precision: 10}, "NUMERIC(10)"},
		{&bq.FieldSchema{Type: bq.BigNumericFieldType}, "BIGNUMERIC"},
		{&bq.FieldSchema{Type: bq.StringFieldType, MaxLength: 5}, "STRING(5)"},
		{&bq.FieldSchema{Type: bq.IntegerFieldType, Repeated: true}, "ARRAY<INT64>"},
	}
	for _, tt := range tests {
		if got := typeName(tt.fs); got != tt.want {
			t.Errorf("typeName(%+v) = %s, want %s", tt.fs, got, tt.want)
		}
	}
}
