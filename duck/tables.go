//go:build cgo

package duck

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// TablesRead returns the names of the tables a query reads, as DuckDB
// parses it (json_serialize_sql): every table reference without its
// schema, lowercased, sorted, once each. A CTE's name counts as a table.
func (d *DB) TablesRead(ctx context.Context, query string) ([]string, error) {
	var tree string
	if err := d.QueryRow(ctx, "SELECT CAST(json_serialize_sql("+Literal(query)+") AS VARCHAR)", &tree); err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal([]byte(tree), &root); err != nil {
		return nil, fmt.Errorf("duckdb: parse tree: %w", err)
	}
	if root["error"] == true {
		return nil, fmt.Errorf("duckdb: %v", root["error_message"])
	}
	seen := map[string]bool{}
	baseTables(root, seen)
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// baseTables collects the table_name of every BASE_TABLE node below v.
func baseTables(v any, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "BASE_TABLE" {
			if name, ok := x["table_name"].(string); ok {
				seen[strings.ToLower(name)] = true
			}
		}
		for _, child := range x {
			baseTables(child, seen)
		}
	case []any:
		for _, child := range x {
			baseTables(child, seen)
		}
	}
}
