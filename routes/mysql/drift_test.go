package mysql

import (
	"slices"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestHoldsMyType: COLUMN_TYPEs mapped for routes.Holds — tinyint(1) is
// a boolean (a number into it reads back as true), unsigned widths count
// one more bit, datetime and timestamp differ by zone, a double into
// text keeps 15 digits, bit(n) is an n-bit integer, year a date, a
// DOUBLE(M,D) a decimal(M,D), char(n) and binary(n) fixed-width, and
// types not compared are left to the insert.
func TestHoldsMyType(t *testing.T) {
	tests := []struct {
		dest, src string
		want      bool
	}{
		{"int(11)", "double", false}, {"decimal(10,2)", "double", false}, {"int(11)", "decimal(10,2)", false},
		{"int(11)", "decimal(9,0)", true}, {"decimal(12,2)", "int(11)", true}, {"decimal(10,2)", "decimal(6,1)", true},
		{"decimal(10,1)", "decimal(10,2)", false}, {"double", "bigint(20)", false}, {"double", "int(10) unsigned", true},
		{"float", "mediumint(8) unsigned", true}, {"float", "int(11)", false}, {"float", "double", false},
		{"double", "float", true}, {"double", "decimal(15,3)", true}, {"double", "decimal(20,2)", false},
		{"tinyint(1)", "int(11)", false}, {"int(11)", "tinyint(1)", true}, {"tinyint(1)", "bool", true},
		{"text", "double", false}, {"varchar(20)", "float", false}, {"longtext", "int(11)", true}, {"varchar(5)", "text", true},
		{"int(11)", "varchar(20)", false}, {"blob", "text", false}, {"varbinary(10)", "blob", true},
		{"date", "datetime(6)", false}, {"datetime", "date", true}, {"timestamp", "date", false},
		{"datetime(3)", "datetime(6)", false}, {"datetime(6)", "datetime", true}, {"datetime(6)", "timestamp(6)", false},
		{"timestamp(6)", "datetime(6)", false}, {"time(6)", "time", true}, {"time", "time(3)", false},
		{"year(4)", "int(11)", false}, {"year(4)", "year", true}, {"bit(8)", "text", false}, {"bit(1)", "tinyint(1)", true},
		{"double(10,2)", "double", false}, {"double(10,2)", "decimal(8,2)", true}, {"enum('a','b')", "varchar(3)", true}, {"text", "enum('a')", true},
		{"bit(5)", "int(11)", true}, {"tinyint(1)", "bit(1)", false}, {"json", "longtext", true},
		// char(n) cuts a string's trailing spaces, binary(n) pads bytes with NULs:
		// each holds only its own kind of no more width (binary: the same width).
		{"char(5)", "longtext", false}, {"char(5)", "varchar(3)", false}, {"char(5)", "char(3)", true},
		{"char(3)", "char(3)", true}, {"char(3)", "char(5)", false}, {"varchar(5)", "char(3)", true},
		{"longtext", "char(3)", true}, {"char(5)", "enum('a')", false}, {"binary(4)", "longblob", false},
		{"binary(4)", "binary(2)", false}, {"binary(4)", "binary(4)", true}, {"longblob", "binary(4)", true},
	}
	for _, tt := range tests {
		if got := holdsMyType(tt.dest, tt.src); got != tt.want {
			t.Errorf("%s into %s: %v, want %v", tt.src, tt.dest, got, tt.want)
		}
	}
}

// TestDriftSQL_Bounds: the destination columns whose declared length the
// commit checks: a varchar(n) or varbinary(n) from a column not bounded
// by it; never one the source's own length bounds, one widened first, or
// a char(n) (it holds only a char(m ≤ n)). And every text column in a
// character set other than utf8mb4, whose values are checked to convert
// (narrow), with or without a length.
func TestDriftSQL_Bounds(t *testing.T) {
	tests := []struct {
		dest, src string
		want      []bound // column "v"
		collation string  // the destination's
	}{
		{"varchar(3)", "longtext", []bound{{length: 3}}, ""},
		{"varchar(3)", "varchar(3)", nil, ""},
		{"varchar(5)", "varchar(3)", nil, ""},
		{"varchar(3)", "varchar(5)", nil, ""}, // widened
		{"varchar(3)", "char(2)", nil, ""},
		{"varchar(3)", "int(11)", []bound{{length: 3}}, ""},
		{"varbinary(3)", "blob", []bound{{length: 3, bytes: true}}, ""},
		{"char(3)", "char(2)", nil, ""},
		{"longtext", "longtext", nil, ""},
		{"varchar(5)", "varchar(3)", []bound{{charset: "latin1", narrow: true}}, "latin1_swedish_ci"},
		{"char(3)", "char(2)", []bound{{charset: "utf8mb3", narrow: true}}, "utf8mb3_general_ci"},
		{"text", "longtext", []bound{{length: 65535, bytes: true, charset: "utf8mb3", narrow: true}}, "utf8mb3_general_ci"},
		{"varchar(5)", "varchar(3)", nil, "utf8mb4_general_ci"},
		{"varchar(3)", "longtext", []bound{{length: 3, charset: "utf8mb4"}}, "utf8mb4_general_ci"},
		{"varbinary(5)", "varbinary(3)", nil, ""},
	}
	for _, tt := range tests {
		_, got, err := driftSQL(routes.TableRef{Schema: "s", Name: "t"}, []myColumn{{name: "v", typ: tt.src, nullable: true}}, []myColumn{{name: "v", typ: tt.dest, collation: tt.collation, nullable: true}})
		if err != nil {
			t.Errorf("%s into %s: %v", tt.src, tt.dest, err)
			continue
		}
		for i := range tt.want {
			tt.want[i].column, tt.want[i].typ, tt.want[i].src, tt.want[i].keep = "v", tt.dest, tt.src, collate(myColumn{collation: tt.collation})+" NULL"
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s into %s: %+v, want %+v", tt.src, tt.dest, got, tt.want)
		}
	}
}
