package fileformat_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	_ "github.com/weirhq/weir/routes/all" // every adapter imported: none may swap the codec
	"github.com/weirhq/weir/routes/fileformat"
	"github.com/weirhq/weir/routes/routestest"
)

func zstdCodec(t *testing.T) string {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%T", c)
}

// TestLeanZstd_OnlyWhenAsked: importing the adapters leaves arrow-go's zstd
// codec alone; the first Parquet encoder installs the lean one, and what
// it writes reads back. (The one test in this binary that writes: it must
// see the codec table as the imports left it.)
func TestLeanZstd_OnlyWhenAsked(t *testing.T) {
	if got := zstdCodec(t); got == "*fileformat.leanZstd" {
		t.Fatalf("importing the adapters installed %s", got)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := routestest.Rows(1, 3000)
	rec := routestest.Batch(mem, rows)
	defer rec.Release()
	var buf bytes.Buffer
	enc, err := fileformat.NewEncoder(&buf, rec.Schema(), fileformat.Parquet, fileformat.EncoderOptions{Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if got := zstdCodec(t); got != "*fileformat.leanZstd" {
		t.Fatalf("after a Parquet encoder the zstd codec is %s, want the lean one", got)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != int64(len(rows)) {
		t.Fatalf("read back %d rows, want %d", tbl.NumRows(), len(rows))
	}
}
