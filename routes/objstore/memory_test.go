package objstore_test

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// Every buffer the write and read paths allocate is released.
func TestMemory_WriteAndReadRelease(t *testing.T) {
	eachStore(t, func(t *testing.T, f *objstoretest.Fixture) {
		ctx := testContext(t)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: routestest.Rows(1, 2000), BatchLen: 97}
		if _, err := copyFrom(ctx, src, f, "t", routes.ModeReplace, mem); err != nil {
			t.Fatal(err)
		}
		ep := f.Endpoint(t, ctx)
		info, err := ep.Probe(ctx, routes.TableRef{Name: "t"})
		if err != nil {
			t.Fatal(err)
		}
		ranges, _ := ep.Plan(ctx, info, routes.PlanOptions{Pipes: 3})
		var rows int64
		for _, r := range ranges {
			s, err := ep.Read(ctx, r, routes.ReadOptions{Allocator: mem, ChunkBytes: 8 << 10, Cursor: "id", After: "10"})
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
				rows += s.RecordBatch().NumRows()
			}
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			s.Release()
		}
		if rows != 1990 {
			t.Fatalf("read %d rows, want 1990", rows)
		}
	})
}

// The Parquet files weir writes read back with arrow-go's own reader (no
// weir code) to the source's values, and carry the source's types.
func TestParquet_ReadBackWithArrowGo(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t, "row_group_bytes=8192")
	want := routestest.Rows(1, 700)
	mustCopy(t, ctx, f, "t", want, routes.ModeReplace)
	m, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "t")
	var got []routestest.Row
	for _, file := range m.Files {
		got = append(got, readParquetFile(t, ctx, f.Get(t, "t/"+file.Path))...)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID })
	if len(got) != len(want) {
		t.Fatalf("files hold %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d: got %s want %s", want[i].ID, got[i], want[i])
		}
	}
}

func readParquetFile(t *testing.T, ctx context.Context, b []byte) []routestest.Row {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() < 2 && rdr.NumRows() > 200 {
		t.Errorf("a file of %d rows has %d row group(s); row_group_bytes should split it", rdr.NumRows(), rdr.NumRowGroups())
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	checkTypes(t, tbl.Schema())
	var out []routestest.Row
	tr := arrowTableReader(tbl)
	defer tr.Release()
	for tr.Next() {
		rows, err := objstoretest.ToRows(tr.RecordBatch())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	return out
}

func checkTypes(t *testing.T, s *arrow.Schema) {
	t.Helper()
	var got []string
	for _, f := range s.Fields() {
		native, _ := f.Metadata.GetValue(routes.MetaNativeType)
		got = append(got, f.Name+" "+f.Type.String()+" "+native)
	}
	want := "id int64 bigint|name utf8 text|amount decimal(12, 2) numeric(12,2)|ts timestamp[us] timestamp without time zone|flag bool boolean"
	if strings.Join(got, "|") != want {
		t.Fatalf("parquet schema\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

func arrowTableReader(tbl arrow.Table) *array.TableReader { return array.NewTableReader(tbl, 100) }
