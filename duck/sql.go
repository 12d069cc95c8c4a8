package duck

import (
	"errors"
	"strings"
)

// ErrNoEngine: this weir was built without cgo (CGO_ENABLED=0), so without
// DuckDB: it runs transfers but not models.
var ErrNoEngine = errors.New("this weir was built without cgo, so without DuckDB (build with CGO_ENABLED=1 and a C compiler to run models)")

// Ident quotes an identifier for DuckDB SQL.
func Ident(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Literal quotes a string literal for DuckDB SQL.
func Literal(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// Column is a result column as DuckDB binds it: its name and type name
// (DECIMAL(38,2), BIGINT, VARCHAR…), usable in DuckDB DDL.
type Column struct{ Name, Type string }
