// Command duckalone runs SQL statements in weir's embedded DuckDB (package
// duck, the one package that links it) and nothing else: the baseline the
// bench scripts time weir against, "DuckDB's own" CPU for the same SQL over
// the same data (bench/medallion_duckdb.sh). Statements come from the file
// named by the one argument, separated by a line that ends in ";".
//
//	go run ./bench/duckalone FILE.sql
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/weirhq/weir/duck"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: duckalone FILE.sql")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "duckalone:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range strings.Split(string(text), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if err := db.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(stmt), err)
		}
	}
	return nil
}
