package where

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

func TestParse(t *testing.T) {
	tests := []struct{ in, want string }{
		{"amount > 100", "amount > 100"},
		{"100 < amount", "amount > 100"},
		{"a = 1 AND b = 'x' OR c IS NULL", "((a = 1 AND b = 'x') OR c IS NULL)"},
		{"a = 1 AND (b = 'it''s' OR NOT c IS NOT NULL)", "(a = 1 AND (b = 'it''s' OR NOT c IS NOT NULL))"},
		{`"my col" <> -2.5`, `"my col" != -2.5`},
		{"flag = true and x >= 1e3", "(flag = TRUE AND x >= 1e3)"},
		{`"and" = 1`, `"and" = 1`},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParse_Errors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "want a column"},
		{"a >", "want a column or a literal"},
		{"a = NULL", "IS NULL"},
		{"a = b", "not with column"},
		{"1 = 1", "needs a column"},
		{"(a = 1", "missing )"},
		{"a = 'x", "unterminated"},
		{"a = 1 b", "unexpected"},
		{"a ~ 1", "unexpected character"},
		{"a = 1..2", "bad number"},
		{strings.Repeat("(", 100) + "a=1" + strings.Repeat(")", 100), "nested deeper"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("Parse(%q) error = %v, want bad input containing %q", tt.in, err, tt.want)
		}
	}
}

func testBatch(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[
	 {"id": 1, "amount": "100.00", "name": "a", "ts": "2024-01-01T00:00:00Z", "flag": true, "f": 1.5},
	 {"id": 2, "amount": "100.01", "name": "b", "ts": "2024-06-01T12:00:00Z", "flag": false, "f": 2.5},
	 {"id": 3, "amount": null, "name": null, "ts": null, "flag": null, "f": null},
	 {"id": 4, "amount": "-5.50", "name": "", "ts": "2023-12-31T23:59:59Z", "flag": true, "f": -1}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestFilter_Apply(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(t, mem)
	defer rec.Release()
	tests := []struct {
		where string
		ids   []int64
	}{
		{"amount > 100", []int64{2}},
		{"amount >= 100", []int64{1, 2}},
		{"amount > 100.001", []int64{2}},
		{"amount < -5.499", []int64{4}},
		{"amount != 100", []int64{2, 4}}, // NULL is unknown, dropped
		{"NOT amount = 100", []int64{2, 4}},
		{"amount IS NULL", []int64{3}},
		{"amount IS NULL OR id = 1", []int64{1, 3}},
		{"id > 1.5 AND id <= 3", []int64{2, 3}},
		{"id = 2.5", nil},
		{"id < 99999999999999999999999", []int64{1, 2, 3, 4}},
		{"name = ''", []int64{4}},
		{"name > 'a'", []int64{2}},
		{"ts >= '2024-01-01'", []int64{1, 2}},
		{"ts < '2024-01-01T01:00:00+01:00'", []int64{4}},
		{"flag = FALSE OR flag IS NULL", []int64{2, 3}},
		{"f > 2", []int64{2}},
		{"NOT (id = 1 OR amount IS NULL)", []int64{2, 4}},
		{"id = '3'", []int64{3}},
	}
	for _, tt := range tests {
		e, err := Parse(tt.where)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Compile(e, rec.Schema())
		if err != nil {
			t.Fatalf("%s: %v", tt.where, err)
		}
		out, err := f.Apply(context.Background(), rec, mem)
		if err != nil {
			t.Fatalf("%s: %v", tt.where, err)
		}
		var got []int64
		if out != nil {
			got = append(got, out.Column(0).(*array.Int64).Int64Values()...)
			out.Release()
		}
		if len(got) != len(tt.ids) || (len(got) > 0 && !equalInts(got, tt.ids)) {
			t.Errorf("%s: got ids %v, want %v", tt.where, got, tt.ids)
		}
	}
}

func equalInts(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCompile_Errors(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := testBatch(t, mem)
	defer rec.Release()
	for _, w := range []string{"nope = 1", "name > 1", "amount = 'x'", "ts > 5", "flag = 1", "ts > 'yesterday'"} {
		e, err := Parse(w)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(e, rec.Schema()); !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("Compile(%s) = %v, want bad input", w, err)
		}
	}
}

func TestSQL(t *testing.T) {
	mem := memory.NewGoAllocator()
	rec := testBatch(t, mem)
	defer rec.Release()
	tests := []struct{ where, pg, mysql string }{
		{"amount > 100", `"amount" > 100`, "`amount` > 100"},
		{"amount > 1e3 AND id <= -2.50", `("amount" > 1000 AND "id" <= -2.5)`, "(`amount` > 1000 AND `id` <= -2.5)"},
		{`name = 'it''s\'`, `"name" = 'it''s\'`, "`name` = 'it''s\\\\'"},
		{"name = 'a' AND ts > '2024-01-01'", `"name" = 'a'`, "`name` = 'a'"},
		{"NOT name = 'a'", `(NOT ("name" = 'a'))`, "(NOT (`name` = 'a'))"},
		{"NOT amount IS NULL", `(NOT ("amount" IS NULL))`, "(NOT (`amount` IS NULL))"},
		{"id = 1 OR f > 1", `("id" = 1 OR "f" > 1)`, "(`id` = 1 OR `f` > 1)"},
		{"name < 'b'", `"name" < 'b'`, "`name` < 'b'"},
		{"ts > '2024-01-01' OR id = 1", "", ""},
		{"f > 1e400", "", ""},
		{"flag = TRUE", `"flag" = TRUE`, "`flag` = TRUE"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.where)
		if err != nil {
			t.Fatal(err)
		}
		pg, _ := SQL(e, rec.Schema(), Postgres)
		my, _ := SQL(e, rec.Schema(), MySQL)
		if pg != tt.pg || my != tt.mysql {
			t.Errorf("SQL(%s) = %s | %s, want %s | %s", tt.where, pg, my, tt.pg, tt.mysql)
		}
	}
}
