package postgres

import (
	"slices"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestTypeFamily: format_type's names by the values they hold; a change
// of family in a CDC replica or log is refused (checkFamilies), a change
// within one (a widening, a length) is not.
func TestTypeFamily(t *testing.T) {
	same := [][2]string{
		{"integer", "bigint"}, {"numeric(12,2)", "numeric"}, {"smallint", "double precision"},
		{"character varying(20)", "text"}, {"character(3)", "text"},
		{"timestamp without time zone", "timestamp(3) without time zone"},
		{"timestamp with time zone", "timestamp(6) with time zone"},
		{"time without time zone", "time(6) without time zone"},
		{"interval", "interval second(3)"}, {"json", "jsonb"},
	}
	for _, p := range same {
		if a, b := typeFamily(p[0]), typeFamily(p[1]); a == "" || a != b {
			t.Errorf("%s (%q) and %s (%q): want one family", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{
		{"time(6) without time zone", "interval"}, {"time without time zone", "time with time zone"},
		{"timestamp without time zone", "timestamp with time zone"}, {"timestamp without time zone", "time without time zone"},
		{"integer", "text"}, {"date", "timestamp without time zone"}, {"boolean", "integer"}, {"bytea", "text"}, {"uuid", "text"},
	}
	for _, p := range differ {
		if a, b := typeFamily(p[0]), typeFamily(p[1]); a == "" || b == "" || a == b {
			t.Errorf("%s (%q) and %s (%q): want two families", p[0], a, p[1], b)
		}
	}
	for _, typ := range []string{"integer[]", "point", "tsvector", "USER-DEFINED"} {
		if f := typeFamily(typ); f != "" {
			t.Errorf("%s: family %q, want none (not checked)", typ, f)
		}
	}
}

// TestHolds: after widenType, which destination types keep every value of
// a source type exactly (or fail loudly), and which would round, cut or
// change its meaning through the insert's assignment cast.
func TestHolds(t *testing.T) {
	exact := [][2]string{ // {dest, src}
		{"bigint", "integer"}, {"bigint", "smallint"}, {"numeric(12,2)", "integer"}, {"numeric", "bigint"},
		{"double precision", "integer"}, {"double precision", "real"}, {"real", "smallint"},
		{"double precision", "numeric(15,3)"}, {"real", "numeric(6,2)"}, {"integer", "numeric(9,0)"},
		{"numeric", "numeric(12,4)"}, {"text", "double precision"}, {"character varying", "timestamp with time zone"},
		{"text", "character varying(20)"}, {"character varying(5)", "text"}, // a longer value is CheckLength's (driftSQL's bounds)
		{"timestamp without time zone", "date"}, {"timestamp(6) without time zone", "timestamp(3) without time zone"},
		{"timestamp with time zone", "timestamp(6) with time zone"}, {"jsonb", "json"}, {"interval", "interval second(3)"},
		{"point", "text"}, {"integer[]", "text"}, // not grouped: left to the insert
		{"integer[]", "bigint[]"}, {"bigint[]", "integer[]"}, {"money", "numeric(10,2)"}, {"money", "integer"}, // arrays by element; money as numeric(19,2)
	}
	for _, p := range exact {
		if !holds(p[0], p[1]) {
			t.Errorf("%s holds %s: got false, want true", p[0], p[1])
		}
	}
	lossy := [][2]string{
		{"integer", "double precision"}, {"bigint", "real"}, {"numeric(10,2)", "double precision"}, {"numeric", "real"},
		{"integer", "numeric(10,2)"}, {"bigint", "numeric"}, {"real", "double precision"}, {"real", "integer"},
		{"double precision", "bigint"}, {"double precision", "numeric(16,2)"}, {"double precision", "numeric"},
		{"date", "timestamp without time zone"}, {"timestamp with time zone", "timestamp without time zone"},
		{"timestamp without time zone", "timestamp with time zone"}, {"timestamp with time zone", "date"},
		{"timestamp(3) without time zone", "timestamp without time zone"}, {"time(0) without time zone", "time(6) without time zone"},
		{"interval second(0)", "interval"}, {"integer", "boolean"}, {"boolean", "integer"}, {"bytea", "text"}, {"integer", "text"},
		{"integer[]", "numeric[]"}, {"numeric(10,2)[]", "double precision[]"}, {"money", "numeric(10,4)"}, {"money", "double precision"},
	}
	for _, p := range lossy {
		if holds(p[0], p[1]) {
			t.Errorf("%s holds %s: got true, want false", p[0], p[1])
		}
	}
	// a fractional precision that grows is widened, never refused
	if to, ok := widenType("timestamp(3) without time zone", "timestamp without time zone"); !ok || to != "timestamp without time zone" {
		t.Errorf("widenType(timestamp(3), timestamp) = %q, %v; want the source's type", to, ok)
	}
}

// TestDriftSQL_Bounds: the destination columns whose declared length the
// commit checks: a varchar(n) or char(n) from a column not bounded by it;
// never one the source's own length bounds or one widened first; an
// array's elements as a column.
func TestDriftSQL_Bounds(t *testing.T) {
	tests := []struct {
		dest, src string
		want      []bound // column "v"
	}{
		{"character varying(3)", "text", []bound{{length: 3}}},
		{"character varying(3)", "character varying(3)", nil},
		{"character varying(5)", "character varying(3)", nil},
		{"character varying(3)", "character varying(5)", nil}, // widened
		{"character varying(3)", "character(3)", nil},
		{"character(5)", "character(3)", nil},
		{"character varying(3)", "integer", []bound{{length: 3}}},
		{"character varying(3)[]", "text[]", []bound{{length: 3, array: true}}}, // each element
		{"character varying(3)[]", "character varying(3)[]", nil},
		{"text", "text", nil},
	}
	for _, tt := range tests {
		_, got, err := driftSQL(routes.TableRef{Schema: "s", Name: "t"}, []pgColumn{{name: "v", typ: tt.src}}, []pgColumn{{name: "v", typ: tt.dest}})
		if err != nil {
			t.Errorf("%s into %s: %v", tt.src, tt.dest, err)
			continue
		}
		for i := range tt.want {
			tt.want[i].column, tt.want[i].typ, tt.want[i].src = "v", tt.dest, tt.src
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s into %s: %+v, want %+v", tt.src, tt.dest, got, tt.want)
		}
	}
}
