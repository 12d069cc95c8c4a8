package objstore_test

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/routestest"
)

// parquetBytes is a small Parquet file written by arrow-go (another tool's
// file, not a weir table).
func parquetBytes(t *testing.T) []byte {
	t.Helper()
	rec := routestest.Batch(memory.DefaultAllocator, routestest.Rows(1, 3))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 100, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// stemCases are table names as a user passes them and the name the probe
// gives the table (where it lands without --dest-table): the file's stem,
// for a single file and for a folder of data files alike, on every store.
var stemCases = []struct{ table, want string }{
	{"lineitem.parquet", "lineitem"},
	{"parts/lineitem.parquet", "lineitem"}, // a folder named like a file (Spark, DuckDB PER_THREAD_OUTPUT)
	{"orders.csv", "orders"},
	{"in/items.csv.gz", "items"},
	{"sales.2024.csv", "sales.2024"}, // dots in the stem stay
	{"in/events", "events"},          // a folder of CSV files
}

func TestProbe_TableNamedByStem(t *testing.T) {
	ctx := testContext(t)
	pq := parquetBytes(t)
	csv := []byte("id,v\n1,a\n2,b\n")
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			f := s.new(t)
			f.Put(t, "lineitem.parquet", pq)
			f.Put(t, "parts/lineitem.parquet/part-0.parquet", pq)
			f.Put(t, "parts/lineitem.parquet/part-1.parquet", pq)
			f.Put(t, "orders.csv", csv)
			f.Put(t, "in/items.csv.gz", gz(t, string(csv)))
			f.Put(t, "sales.2024.csv", csv)
			f.Put(t, "in/events/a.csv", csv)
			f.Put(t, "in/events/b.csv", csv)
			for _, tc := range stemCases {
				if got := probe(t, ctx, f, tc.table).Ref; got != (routes.TableRef{Name: tc.want}) {
					t.Errorf("%s is table %q, want %q", tc.table, got, tc.want)
				}
			}
		})
	}
}

// github:// follows the same rule: a file named with its extension lands
// under its stem, like the stem itself.
func TestGitHub_TableNamedByStem(t *testing.T) {
	ctx := testContext(t)
	g, _ := ghRepoWithFiles(t)
	src := openGH(t, ctx, ghURL(g, "/csv", "ref=main"))
	for _, tc := range []struct{ table, want string }{
		{"orders", "orders"},
		{"orders.csv", "orders"},
		{"in/items.csv.gz", "items"},
		{"wide/parts.csv", "parts"},
	} {
		info, err := src.Probe(ctx, routes.TableRef{Name: tc.table})
		if err != nil {
			t.Fatalf("probe %s: %v", tc.table, err)
		}
		if info.Ref != (routes.TableRef{Name: tc.want}) {
			t.Errorf("%s is table %q, want %q", tc.table, info.Ref, tc.want)
		}
	}
}
