//go:build attack

package weir_test

import "testing"

// TestVarlenAttack_PGHidden (build tag attack: fails): a declared
// length the check does not see: a PostgreSQL varchar(n)[] (each element
// is cut as a varchar(n) is: ARRAY['xyz  '] lands as {xyz}) and a domain
// over varchar(n) ('xyz  ' lands as 'xyz'); exit 0 both. Each must be
// refused, not land cut.
func TestVarlenAttack_PGHidden(t *testing.T) {
	for _, c := range []varlenCase{
		{name: "pg varchar(3)[]", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "varchar(3)[]", value: "ARRAY['xyz  ']", badInput: true},
		{name: "pg domain over varchar(3)", src: "postgres", dst: "postgres", srcType: "text", dstType: "{schema}.d3", value: "'xyz  '", badInput: true,
			dstSetup: "CREATE DOMAIN {schema}.d3 AS varchar(3)"},
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}
