package main

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestTransferCmd_DestSchemaFileStem: with --dest-schema, a file source's
// table lands under the file's stem (docs/objstore.md): a Parquet file, a
// folder named like one, .csv, .csv.gz, and a stem with dots in it.
func TestTransferCmd_DestSchemaFileStem(t *testing.T) {
	pg := postgrestest.New(t)
	dir := t.TempDir()
	put := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	csv := "id,v\n1,a\n2,b\n"
	put("orders.csv", csv)
	put("sales.2024.csv", csv)
	f, err := os.Create(filepath.Join(dir, "items.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	w := gzip.NewWriter(f)
	w.Write([]byte(csv))
	w.Close()
	f.Close()
	// Parquet: weir writes one (a weir table folder), then the part file is
	// copied out as a plain file and into a folder named lineitem.parquet.
	parquetDir := filepath.Join(t.TempDir(), "pq")
	if code, _ := runCmd(t, "transfer", "file://"+dir, "file://"+parquetDir, "--table", "orders.csv"); code != ExitOK {
		t.Fatalf("writing parquet exited %d", code)
	}
	parts, _ := filepath.Glob(filepath.Join(parquetDir, "orders", "*.parquet"))
	if len(parts) != 1 {
		t.Fatalf("parquet parts: %v", parts)
	}
	data, err := os.ReadFile(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	put("lineitem.parquet", string(data))
	put("parts/lineitem.parquet/part-0.parquet", string(data))

	for _, tc := range []struct{ src, table, want string }{
		{dir, "lineitem.parquet", "lineitem"},
		{filepath.Join(dir, "parts"), "lineitem.parquet", "lineitem"},
		{dir, "orders.csv", "orders"},
		{dir, "items.csv.gz", "items"},
		{dir, "sales.2024.csv", "sales.2024"},
	} {
		if code, out := runCmd(t, "transfer", "file://"+tc.src, pg.URL(), "--table", tc.table, "--dest-schema", pg.Schema); code != ExitOK {
			t.Fatalf("transfer %s exited %d: %s", tc.table, code, out)
		}
		ctx := routestest.Context(t, time.Minute)
		var tables []string
		rows, err := pg.Pool.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", pg.Schema)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			rows.Scan(&n)
			tables = append(tables, n)
		}
		rows.Close()
		if !slices.Contains(tables, tc.want) {
			t.Errorf("%s landed in %s as one of %q, want %q", tc.table, pg.Schema, tables, tc.want)
		}
		pg.Exec(t, ctx, `DROP TABLE IF EXISTS `+pg.Schema+`."`+tc.want+`"`)
	}
}
