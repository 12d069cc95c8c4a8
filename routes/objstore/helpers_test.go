package objstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// stores builds one fixture per store kind.
var stores = []struct {
	name string
	new  func(t testing.TB, query ...string) *objstoretest.Fixture
}{
	{"file", objstoretest.NewFile},
	{"s3", objstoretest.NewS3},
	{"gcs", objstoretest.NewGCS},
}

var formats = []string{"parquet", "csv.gz"}

// eachStore runs fn for every store × format.
func eachStore(t *testing.T, fn func(t *testing.T, f *objstoretest.Fixture)) {
	for _, s := range stores {
		for _, format := range formats {
			t.Run(s.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				fn(t, s.new(t, "format="+format, "row_group_bytes=4096", "file_bytes=20000"))
			})
		}
	}
}

// copyRows copies conformance rows into table of the fixture through
// routes.Copy, the way weir.Transfer does.
func copyRows(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string, rows []routestest.Row, mode routes.Mode) (routes.CopyResult, error) {
	t.Helper()
	return copyFrom(ctx, &routestest.MemSource{Table: routestest.MemInfo(table), Rows: rows, BatchLen: 37}, f, table, mode, nil)
}

func copyFrom(ctx context.Context, src routes.Source, f *objstoretest.Fixture, table string, mode routes.Mode, mem memory.Allocator) (routes.CopyResult, error) {
	dst, err := routes.OpenDestination(ctx, f.URL())
	if err != nil {
		return routes.CopyResult{}, err
	}
	defer dst.Close()
	ref, _ := routes.ParseTableRef(table)
	spec := routes.CopySpec{Table: ref, Mode: mode, Budget: routes.Budget{Parallel: 3, ChunkBytes: 16 << 10}, Allocator: mem}
	res, _, err := incremental.Copy(ctx, src, dst, spec, "")
	return res, err
}

func expectRows(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string, want []routestest.Row) {
	t.Helper()
	got, ok := f.Read(t, ctx, table)
	if !ok {
		t.Fatalf("table %s does not exist", table)
	}
	if len(got) != len(want) {
		t.Fatalf("table %s has %d rows, want %d", table, len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d differs:\n got %s\nwant %s", want[i].ID, got[i], want[i])
		}
	}
}

func testContext(t *testing.T) context.Context { return routestest.Context(t, 2*time.Minute) }
