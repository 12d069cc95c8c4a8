package mysql

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/mysql/mysqltest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestKeysetPage pages through a table on integer, DATETIME(6) and
// composite keys: every row comes exactly once, unsigned keys above 2^63
// and microsecond times round-trip through the page's last key, and a
// non-unique key keeps its ties in one page.
func TestKeysetPage(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	f := mysqltest.New(t)
	f.Exec(t, ctx, `CREATE TABLE k (id BIGINT UNSIGNED PRIMARY KEY, sid BIGINT, ts DATETIME(6) NULL, v VARCHAR(10))`,
		`INSERT INTO k VALUES
  (18446744073709551608, 9223372036854775800, '2024-03-01 10:00:00.999998', 'r0'),
  (18446744073709551609, 9223372036854775801, '2024-03-01 10:00:00.999998', 'r1'),
  (18446744073709551610, 9223372036854775802, '2024-03-01 10:00:00.999998', 'r2'),
  (18446744073709551611, 9223372036854775803, NULL, 'r3'),
  (18446744073709551612, 9223372036854775804, '2024-03-01 10:00:00.999999', 'r4'),
  (18446744073709551613, 9223372036854775805, '2024-03-01 10:00:00.999999', 'r5'),
  (18446744073709551614, 9223372036854775806, '2024-03-01 10:00:01', 'r6'),
  (18446744073709551615, 9223372036854775807, '2024-03-01 10:00:01', 'r7')`)
	e := openEndpoint(t, f, "")
	info, err := e.Probe(ctx, ref(f, "k"))
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}
	noNull := slices.Delete(slices.Clone(all), 3, 4)
	tests := []struct {
		key   []string
		limit int
		want  []string
		pages int
		lasts []string
	}{
		{[]string{"id"}, 3, all, 3, []string{"[18446744073709551610]", "[18446744073709551613]", "[18446744073709551615]"}},
		{[]string{"sid"}, 7, all, 2, []string{"[9223372036854775806]", "[9223372036854775807]"}},
		{[]string{"ts", "id"}, 4, noNull, 2, []string{"[2024-03-01 10:00:00.999999 18446744073709551612]", "[2024-03-01 10:00:01.000000 18446744073709551615]"}},
		{[]string{"ts", "sid"}, 2, noNull, 4, []string{"[2024-03-01 10:00:00.999998 9223372036854775801]"}},
		{[]string{"ts"}, 1, noNull, 3, []string{"[2024-03-01 10:00:00.999998]", "[2024-03-01 10:00:00.999999]"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.key, tt.limit), func(t *testing.T) {
			var got, lasts []string
			var after []string
			for page := 0; ; page++ {
				if page > 100 {
					t.Fatal("no end after 100 pages")
				}
				r, last, ok, err := e.KeysetPage(ctx, info, tt.key, after, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				lasts = append(lasts, fmt.Sprint(last))
				s, err := e.Read(ctx, r, routes.ReadOptions{Columns: []string{"v"}})
				if err != nil {
					t.Fatal(err)
				}
				for s.Next() {
					var b arrow.RecordBatch = s.RecordBatch()
					for i := range b.Column(0).Len() {
						got = append(got, b.Column(0).ValueStr(i))
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
			if !slices.Equal(got, tt.want) {
				t.Errorf("rows %v, want %v", got, tt.want)
			}
			if len(lasts) != tt.pages || !slices.Equal(lasts[:len(tt.lasts)], tt.lasts) {
				t.Errorf("%d pages ending %v, want %d ending %v…", len(lasts), lasts, tt.pages, tt.lasts)
			}
		})
	}
	_, _, _, err = e.KeysetPage(ctx, info, []string{"nope"}, nil, 10)
	if pe := (*routes.ProbeError)(nil); !errors.As(err, &pe) || pe.Column != "nope" {
		t.Errorf("missing key column: %v, want a probe error naming it", err)
	}
	if _, _, _, err := e.KeysetPage(ctx, info, []string{"id"}, []string{"1 OR 1=1"}, 10); err == nil {
		t.Error("a non-numeric position on an integer key was inlined")
	}
}
