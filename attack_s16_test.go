package weir_test

import (
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
)

// TestAttackS16_UserColumnCuts: a user's destination column of a type the
// server cuts or rounds without an error on the way in (PostgreSQL's
// one-byte "char", name's 63 bytes, an interval with fields or a
// precision, MariaDB latin1 text), appended into from text or an
// interval. Each value must land exact or be refused with the
// destination unchanged.
func TestAttackS16_UserColumnCuts(t *testing.T) {
	long := "'" + strings.Repeat("abcdefghij", 7) + "'" // 70 bytes
	at63 := "'" + strings.Repeat("é", 31) + "a'"        // 63 bytes, 32 characters
	over63 := "'" + strings.Repeat("é", 32) + "'"       // 64 bytes, 32 characters: name keeps 31 of them
	hex63 := "x" + strings.Repeat("c3a9", 31) + "61"
	for _, c := range []varlenCase{
		{name: "pg char1 from text", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'abc'", badInput: true},
		{name: "pg char1 fits", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'a'", want: "x61"},
		{name: "pg name from text", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: long, badInput: true},
		{name: "mysql to pg name", src: "mysql", dst: "postgres", srcType: "text", dstType: "name", value: long, badInput: true},
		{name: "pg interval(0) from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval(0)", value: "'1.5 seconds'"},
		{name: "pg interval year to month from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval year to month", value: "'1 year 2 days'"},
		{name: "pg interval day from interval", src: "postgres", dst: "postgres", srcType: "interval", dstType: "interval day", value: "'3 days 04:05:06'"},
		{name: "pg char1 empty", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "''", want: "x"},
		{name: "pg char1 two-byte", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'é'", badInput: true},
		{name: "pg char1 null", src: "postgres", dst: "postgres", srcType: "text", dstType: `"char"`, value: "NULL", want: "null"},
		{name: "pg char1 from char1", src: "postgres", dst: "postgres", srcType: `"char"`, dstType: `"char"`, value: `'z'::"char"`, want: "x7a"},
		{name: "pg name at 63 bytes", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: at63, want: hex63},
		{name: "pg name 32 chars 64 bytes", src: "postgres", dst: "postgres", srcType: "text", dstType: "name", value: over63, badInput: true},
		{name: "pg name[] from text[]", src: "postgres", dst: "postgres", srcType: "text[]", dstType: "name[]", value: "ARRAY[" + long + "]", badInput: true},
		{name: "pg char1 merge", src: "mysql", dst: "postgres", srcType: "text", dstType: `"char"`, value: "'ab'", badInput: true, mode: routes.ModeMerge},
		{name: "pg name merge", src: "postgres", dst: "postgres", srcType: "varchar(100)", dstType: "name", value: long, badInput: true, mode: routes.ModeMerge},
		{name: "pg name from name", src: "postgres", dst: "postgres", srcType: "name", dstType: "name", value: at63, want: hex63},
		{name: "mysql latin1 varchar from pg emoji", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(10) CHARACTER SET latin1", value: "'a😀'"},
		{name: "mysql latin1 text from pg cjk", src: "postgres", dst: "mysql", srcType: "text", dstType: "text CHARACTER SET latin1", value: "'中文'"},
		{name: "mysql latin1 varchar fits", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(3) CHARACTER SET latin1", value: "'éé'", want: "xE9E9"},
		{name: "mysql ascii varchar from pg", src: "postgres", dst: "mysql", srcType: "text", dstType: "varchar(10) CHARACTER SET ascii", value: "'é'"},
	} {
		t.Run(c.name, func(t *testing.T) { runVarlen(t, c) })
	}
}
