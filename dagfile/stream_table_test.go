package dagfile

import (
	"fmt"
	"testing"
)

// TestParse_StreamTableSource: a stream with table: is a table source; it
// reads its table (lineage from the task that writes it), and keeps its
// cursor column and chunk size.
func TestParse_StreamTableSource(t *testing.T) {
	src := head + `  load:
    transfer: {from: app, table: public.orders, to: app, dest_table: staging.orders, mode: append}
  backfill:
    stream: {source: app, table: staging.orders, cursor: id, chunk_size: 5000, sink: lake:raw.orders, materialization: merge, key: [id]}
  url:
    stream: {source: 'mysql://root@h:3306/db', table: db.events, cursor: created_at, sink: lake:raw.events}
`
	f, err := Parse([]byte(src), "testdata/weir.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, got, want string }{
		{"backfill", fmt.Sprintf("%v %v %v", f.Task("backfill").Stream.IsTableSource(), f.Task("backfill").Stream.Cursor, f.Task("backfill").Stream.ChunkSize), "true id 5000"},
		{"backfill sources", fmt.Sprint(f.Task("backfill").Sources()), "[app:staging.orders]"},
		{"backfill upstream", fmt.Sprint(f.Task("backfill").Upstream), "[load]"},
		{"url table", fmt.Sprintf("%v %v %v", f.Task("url").Stream.TableSource(), f.Task("url").Stream.ChunkSize, f.Task("url").Stream.SourceScheme()), ":db.events 0 mysql"},
		{"url sources", fmt.Sprint(len(f.Task("url").Sources())), "0"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}
