package duck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
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

// CheckNames refuses the columns of a view or table to load (names) when two
// differ only in ASCII case: DuckDB's identifiers are case-insensitive
// (ASCII only), so it renames the second "V" of "v" and "V" to "V_1", and a
// query's "v" (quoted or not) reads whichever came first — another
// column's values, silently.
func CheckNames(names []string) error {
	seen := make(map[string]string, len(names))
	for _, n := range names {
		folded := strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, n)
		if first, ok := seen[folded]; ok {
			return fmt.Errorf("%w: columns %q and %q differ only in case, and DuckDB takes them for one column (rename one of them in the source, or select them under other names in a view)", routes.ErrBadInput, first, n)
		}
		seen[folded] = n
	}
	return nil
}
