package dagfile

import (
	"strings"
	"testing"
)

// TestDuckType: contract type names and the DuckDB types they mean; int
// and float are 64-bit, 32-bit only when asked.
func TestDuckType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"int", "BIGINT"}, {"INT", "BIGINT"}, {"integer", "BIGINT"}, {"Integer", "BIGINT"}, {"long", "BIGINT"},
		{"bigint", "BIGINT"}, {"int64", "BIGINT"}, {"int32", "INTEGER"}, {"short", "SMALLINT"}, {"int16", "SMALLINT"},
		{"byte", "TINYINT"}, {"int8", "TINYINT"},
		{"float", "DOUBLE"}, {"FLOAT", "DOUBLE"}, {"double", "DOUBLE"}, {"float64", "DOUBLE"}, {"number", "DOUBLE"},
		{"float32", "FLOAT"},
		{"string", "VARCHAR"}, {"text", "VARCHAR"}, {"varchar", "VARCHAR"}, {"bool", "BOOLEAN"}, {"boolean", "BOOLEAN"},
		{"binary", "BLOB"}, {"date", "DATE"}, {"timestamp", "TIMESTAMP"}, {"timestamptz", "TIMESTAMPTZ"},
		// DuckDB's own names pass as written.
		{"DECIMAL(12,2)", "DECIMAL(12,2)"}, {"decimal(38, 2)", "decimal(38, 2)"}, {" REAL ", "REAL"}, {"INT4", "INT4"},
		{"VARCHAR[]", "VARCHAR[]"}, {"STRUCT(a INT)", "STRUCT(a INT)"}, {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE"},
	} {
		if got := DuckType(tc.in); got != tc.want {
			t.Errorf("DuckType(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestContract_Unique: unique takes a list, or columns: with
// nulls_distinct (default true).
func TestContract_Unique(t *testing.T) {
	f, err := Parse([]byte(head+`  a:
    model: {source: lake:s.x, sink: lake:s.a, sql: SELECT 1}
    contract:
      columns: [{name: id, type: int}, {name: e}]
      rules:
        - unique: [id]
        - unique: {columns: [id, e], nulls_distinct: false}
        - unique: {columns: [e], nulls_distinct: true}
`), "weir.yaml", func(string) (string, bool) { return "x", true })
	if err != nil {
		t.Fatal(err)
	}
	c := f.Task("a").Contract
	if c.Columns[0].Type != "BIGINT" {
		t.Errorf("type int: %q, want BIGINT", c.Columns[0].Type)
	}
	got := []bool{c.Rules[0].NullsEqual, c.Rules[1].NullsEqual, c.Rules[2].NullsEqual}
	if got[0] || !got[1] || got[2] || len(c.Rules[1].Columns) != 2 {
		t.Errorf("rules %+v", c.Rules)
	}
	_, err = Parse([]byte(head+`  a:
    model: {source: lake:s.x, sink: lake:s.a, sql: SELECT 1}
    contract:
      rules:
        - unique: {nulls_distinct: false}
`), "weir.yaml", func(string) (string, bool) { return "x", true })
	if err == nil || !strings.Contains(err.Error(), "unique needs columns:") {
		t.Errorf("unique without columns: %v", err)
	}
}
