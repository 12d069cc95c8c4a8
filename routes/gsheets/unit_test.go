package gsheets

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestHeaderNames(t *testing.T) {
	tests := []struct {
		name string
		in   []any
		want string
	}{
		{"plain", []any{"id", "name"}, "id|name"},
		{"duplicates", []any{"id", "id", "ID", "id"}, "id|id_2|ID_3|id_4"},
		{"suffix already taken", []any{"a", "a_2", "a"}, "a|a_2|a_3"},
		{"blanks", []any{"", "x", " ", "\t"}, "column_1|x|column_3|column_4"},
		{"blank next to a column_N", []any{"column_2", ""}, "column_2|column_2_2"},
		{"blanks and line breaks inside", []any{"  Order\nDate ", "a\t\tb"}, "Order Date|a b"},
		{"numbers and booleans", []any{float64(2024), true}, "2024|TRUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(headerNames(tt.in), "|"); got != tt.want {
				t.Fatalf("headerNames(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestA1(t *testing.T) {
	for n, want := range map[int]string{1: "A", 26: "Z", 27: "AA", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA", 18278: "ZZZ"} {
		if got := columnLetters(n); got != want {
			t.Errorf("columnLetters(%d) = %s, want %s", n, got, want)
		}
	}
	if got := a1("It's 1", 1, 26, 2, 101); got != "'It''s 1'!A2:Z101" {
		t.Errorf("a1 = %s", got)
	}
}

func TestInferType(t *testing.T) {
	tests := []struct {
		name   string
		values []any
		want   string
	}{
		{"whole numbers", []any{float64(1), float64(-7), float64(1 << 53)}, "int64"},
		{"a fraction", []any{float64(1), 2.5}, "float64"},
		{"past 2^53", []any{float64(1 << 54)}, "float64"},
		{"booleans", []any{true, false}, "bool"},
		{"dates", []any{"2024-01-31", "1999-12-31"}, "date32"},
		{"date-times", []any{"2024-01-31 12:00:00", "2024-01-31T08:30", "2024-02-01 00:00:00.25"}, "timestamp[us]"},
		{"dates and date-times", []any{"2024-01-31", "2024-01-31 12:00:00"}, "timestamp[us]"},
		{"text", []any{"a", "b"}, "utf8"},
		{"text that looks like a number", []any{"12.30", "007"}, "utf8"},
		{"numbers and text", []any{float64(1), "n/a"}, "utf8"},
		{"numbers and booleans", []any{float64(1), true}, "utf8"},
		{"not a date", []any{"2024-13-01"}, "utf8"},
		{"a date in another format", []any{"1/31/2024", "31.01.2024 12:00"}, "utf8"},
		{"nothing", nil, "utf8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen kind
			for _, v := range tt.values {
				seen |= kindOf(v)
			}
			if got, _ := inferType(seen); got.String() != tt.want {
				t.Fatalf("inferType(%v) = %s, want %s", tt.values, got, tt.want)
			}
		})
	}
}

// Each typed column takes the values of its type and refuses the others,
// saying what it wanted.
func TestAppenders(t *testing.T) {
	tests := []struct {
		typ     arrow.DataType
		ok      []any
		refused any
		want    string
	}{
		{arrow.PrimitiveTypes.Int64, []any{float64(3)}, 2.5, `"2.5" is not a whole number`},
		{arrow.PrimitiveTypes.Int64, nil, "n/a", `"n/a" is not a whole number`},
		{arrow.PrimitiveTypes.Float64, []any{float64(3), 2.5}, "x", `"x" is not a number`},
		{arrow.FixedWidthTypes.Boolean, []any{true}, "yes", `"yes" is not TRUE or FALSE`},
		{arrow.FixedWidthTypes.Date32, []any{"2024-01-31"}, "2024-01-31 10:00", `is not a date`},
		{&arrow.TimestampType{Unit: arrow.Microsecond}, []any{"2024-01-31", "2024-01-31 10:00:01"}, float64(45000), `"45000" is not a date-time`},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			b := array.NewBuilder(memory.DefaultAllocator, tt.typ)
			defer b.Release()
			app := appenderFor(b)
			for _, v := range tt.ok {
				if err := app(v); err != nil {
					t.Fatalf("%v: %v", v, err)
				}
			}
			err := app(tt.refused)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v into %s: got %v, want %q", tt.refused, tt.typ, err, tt.want)
			}
		})
	}
}

func TestCheckWidth(t *testing.T) {
	names := []string{"id", "name"}
	if err := checkWidth("T", []any{"1", "a", "", ""}, 5, names, 1); err != nil {
		t.Fatalf("blank cells past the header: %v", err)
	}
	err := checkWidth("T", []any{"1", "a", "", "x"}, 5, names, 1)
	if err == nil || !strings.Contains(err.Error(), `tab "T" row 5 has a value in column D, past the header's last column B ("name")`) {
		t.Fatalf("wide row: %v", err)
	}
}
