package postgres

import "testing"

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
