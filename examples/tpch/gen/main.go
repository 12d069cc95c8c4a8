// Command gen writes the TPC-H example's lineitem table with DuckDB's
// built-in TPC-H generator (the tpch extension linked into weir's DuckDB;
// nothing is downloaded), the same rows on every run:
//
//	go run ./examples/tpch/gen -batch 3   # from the repository root
//
// data/lineitem.parquet then holds the lines of the first 3 of 10 equal
// ranges of order keys, in key order: each later batch only adds orders
// with higher keys, which bronze_lineitem appends by its cursor.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weirhq/weir/duck"
)

func main() {
	out := flag.String("o", "examples/tpch/data", "output folder")
	sf := flag.Float64("sf", 0.01, "TPC-H scale factor")
	batch := flag.Int("batch", 10, "write the lines of batches 1..batch")
	of := flag.Int("of", 10, "batches the order keys are split into")
	flag.Parse()
	if err := run(context.Background(), *out, *sf, *batch, *of); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, sf float64, batch, of int) error {
	if batch < 1 || batch > of {
		return fmt.Errorf("-batch %d: use 1..%d", batch, of)
	}
	db, err := duck.Open(ctx, duck.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := db.Exec(ctx, fmt.Sprintf("LOAD tpch; CALL dbgen(sf=%g)", sf)); err != nil {
		return err
	}
	var maxKey int64
	if err := db.QueryRow(ctx, "SELECT max(l_orderkey) FROM lineitem", &maxKey); err != nil {
		return err
	}
	bound := (maxKey*int64(batch) + int64(of) - 1) / int64(of)
	path := filepath.Join(out, "lineitem.parquet")
	q := fmt.Sprintf("COPY (SELECT * FROM lineitem WHERE l_orderkey <= %d ORDER BY l_orderkey, l_linenumber) TO %s (FORMAT parquet)", bound, duck.Literal(path))
	if err := db.Exec(ctx, q); err != nil {
		return err
	}
	fmt.Printf("%s: the lines of orders 1..%d (batch %d of %d)\n", path, bound, batch, of)
	return nil
}
