package duck

import "strings"

// Ident quotes an identifier for DuckDB SQL.
func Ident(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Literal quotes a string literal for DuckDB SQL.
func Literal(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
