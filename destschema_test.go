package weir_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirhq/weir"
)

// --dest-schema keeps the destination name the source gives: a file source's
// orders.csv lands as <schema>.orders, exactly as without --dest-schema.
func TestTransfer_DestSchemaFileSource(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "data")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "orders.csv"), []byte("id,name\n1,a\n2,b\n"), 0o644)
	lake := filepath.Join(dir, "lake")
	dst := "iceberg://?catalog=sql&uri=sqlite://" + lake + "/catalog.db&warehouse=file://" + lake
	ctx := context.Background()

	rep, err := weir.Transfer(ctx, "file://"+src, dst, weir.TransferOptions{Tables: []string{"orders.csv"}, DestSchema: "tpch"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Tables[0].DestTable; got != "tpch.orders" {
		t.Fatalf("--dest-schema tpch landed orders.csv as %q, want tpch.orders", got)
	}
	r, err := weir.Read(ctx, dst, "tpch.orders", weir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	if n != 2 {
		t.Fatalf("tpch.orders has %d rows, want 2", n)
	}
}
