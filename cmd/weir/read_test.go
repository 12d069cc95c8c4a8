package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

func runRead(t *testing.T, args ...string) int {
	t.Helper()
	root := newRoot()
	root.SetArgs(append([]string{"read"}, args...))
	root.SetOut(new(nopWriter))
	root.SetErr(new(nopWriter))
	return exitCode(root.ExecuteContext(routestest.Context(t, time.Minute)))
}

// weir read … --to out.parquet end to end: projection, filter, a Parquet
// file arrow-go reads back.
func TestReadCmd_ToParquet(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 1000))
	want := 0
	for _, r := range routestest.Rows(1, 1000) {
		if r.Amount == nil {
			continue
		}
		if a, _ := strconv.ParseFloat(*r.Amount, 64); a >= 1000 {
			want++
		}
	}
	out := filepath.Join(t.TempDir(), "out.parquet")
	if code := runRead(t, lake.URL(), "--table", "orders", "--columns", "amount,id", "--where", "amount >= 1000", "--to", out, "--parallel", "3"); code != 0 {
		t.Fatalf("weir read exited %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, _ := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	schema, _ := fr.Schema()
	if got := schema.Field(0).Name + "," + schema.Field(1).Name; got != "amount,id" || rdr.NumRows() != int64(want) {
		t.Fatalf("out.parquet: columns %s, %d rows; want amount,id and %d rows", got, rdr.NumRows(), want)
	}
}

func TestReadCmd_ToCSVGzip(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 20))
	out := filepath.Join(t.TempDir(), "out.csv.gz")
	if code := runRead(t, lake.URL(), "--table", "orders", "--columns", "id,name", "--where", "id <= 2", "--to", out); code != 0 {
		t.Fatalf("weir read exited %d", code)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	if got := string(b); got != "id,name\r\n1,\"\"\r\n2,ünïcødé ✓ 日本\r\n" {
		t.Fatalf("out.csv.gz = %q", got)
	}
}

// Mistakes exit 2 and leave no output file.
func TestReadCmd_BadInputExit2(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 5))
	dir := t.TempDir()
	for _, args := range [][]string{
		{lake.URL(), "--table", "orders", "--to", filepath.Join(dir, "out.xlsx")},
		{lake.URL(), "--table", "orders", "--columns", "nope", "--to", filepath.Join(dir, "out.parquet")},
		{lake.URL(), "--table", "orders", "--where", "amount >", "--to", filepath.Join(dir, "out.parquet")},
		{lake.URL(), "--table", "missing", "--to", filepath.Join(dir, "out.parquet")},
		{lake.URL(), "--to", filepath.Join(dir, "out.parquet")},
	} {
		if code := runRead(t, args...); code != ExitBadInput {
			t.Errorf("weir read %v exited %d, want %d", args, code, ExitBadInput)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Fatalf("failed reads left %v", left)
	}
}
