package duck

import (
	"errors"
	"strings"
)

// ErrNoEngine: this weir was built without DuckDB's Arrow interface, so it
// runs transfers but not models.
var ErrNoEngine = errors.New("this weir was built without DuckDB (build with -tags=duckdb_arrow to run models)")

// Ident quotes an identifier for DuckDB SQL.
func Ident(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Literal quotes a string literal for DuckDB SQL.
func Literal(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
