//go:build attack

package weir_test

import "testing"

// TestVarlenAttack_PGHidden (build tag attack: fails): a declared
// length the check does not see: a domain over varchar(n) ('xyz  '
// lands as 'xyz'), exit 0. It must be refused, not land cut. (A
// varchar(n)[]'s elements are checked now: TestVarlenAttack_Routes.)
func TestVarlenAttack_PGHidden(t *testing.T) {
	for _, c := range []varlenCase{
		{name: "pg domain over varchar(3)", src: "postgres", dst: "postgres", srcType: "text", dstType: "{schema}.d3", value: "'xyz  '", badInput: true,
			dstSetup: "CREATE DOMAIN {schema}.d3 AS varchar(3)"},
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}
