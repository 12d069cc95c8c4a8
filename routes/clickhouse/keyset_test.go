package clickhouse_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestKeysetPage pages through a MergeTree table on an unsigned key above
// 2^63, on (DateTime, key) and on a DateTime alone: every row once, the
// page's last key round-trips, ties of a non-unique key stay together.
func TestKeysetPage(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id UInt64, ts DateTime('UTC'), v String) ENGINE = MergeTree ORDER BY id", f.Ref("k")),
		fmt.Sprintf(`INSERT INTO %s VALUES (18446744073709551608, '2024-03-01 10:00:00', 'r0'), (18446744073709551609, '2024-03-01 10:00:00', 'r1'),
  (18446744073709551610, '2024-03-01 10:00:00', 'r2'), (18446744073709551611, '2024-03-01 10:00:01', 'r3'), (18446744073709551612, '2024-03-01 10:00:01', 'r4'),
  (18446744073709551613, '2024-03-01 10:00:02', 'r5'), (18446744073709551614, '2024-03-01 10:00:02', 'r6'), (18446744073709551615, '2024-03-01 10:00:02', 'r7')`, f.Ref("k")))
	src, err := routes.OpenSource(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ks := src.(routes.KeysetSource)
	ref, _ := routes.ParseTableRef(f.Ref("k"))
	info, err := src.Probe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}
	tests := []struct {
		key   []string
		limit int
		pages int
		first string
	}{
		{[]string{"id"}, 3, 3, "[18446744073709551610]"},
		{[]string{"ts", "id"}, 4, 2, "[2024-03-01 10:00:01 18446744073709551611]"},
		{[]string{"ts"}, 1, 3, "[2024-03-01 10:00:00]"},
	}
	for _, tt := range tests {
		var got, lasts []string
		var after []string
		for page := 0; page < 100; page++ {
			r, last, ok, err := ks.KeysetPage(ctx, info, tt.key, after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			lasts = append(lasts, fmt.Sprint(last))
			s, err := src.Read(ctx, r, routes.ReadOptions{Columns: []string{"v"}})
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
				c := s.RecordBatch().Column(0)
				for i := range c.Len() {
					got = append(got, c.ValueStr(i))
				}
			}
			err = s.Err()
			s.Release()
			if err != nil {
				t.Fatal(err)
			}
			after = last
		}
		slices.Sort(got)
		if !slices.Equal(got, all) || len(lasts) != tt.pages || lasts[0] != tt.first {
			t.Errorf("key %v limit %d: rows %v in %d pages ending %v; want %v in %d pages, the first ending %s", tt.key, tt.limit, got, len(lasts), lasts, all, tt.pages, tt.first)
		}
	}
}
