package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestKeysetPage pages through a table on integer, timestamp and
// composite keys: every row comes exactly once, in key order, the bigint
// keys next to 2^63 and the microsecond timestamps round-trip through the
// page's last key, and a non-unique key keeps its ties in one page.
func TestKeysetPage(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	// ids 9223372036854775800..807 (the top is 2^63-1); ts in groups of
	// three equal values, microseconds apart; one NULL ts.
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.k (id int8 PRIMARY KEY, ts timestamptz, lt timestamp, v text);
INSERT INTO %[1]s.k SELECT 9223372036854775800 + g, timestamptz '2024-03-01 10:00:00.000001+00' + (g / 3) * interval '1 microsecond',
  timestamp '2024-03-01 10:00:00.999998' + (g / 3) * interval '1 microsecond', 'r' || g FROM generate_series(0, 7) g;
UPDATE %[1]s.k SET ts = NULL, lt = NULL WHERE id = 9223372036854775803`, f.Schema))
	ep, err := routes.OpenSource(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ks := ep.(routes.KeysetSource)
	info, err := ep.Probe(ctx, routes.TableRef{Schema: f.Schema, Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}
	noNull := slices.Delete(slices.Clone(all), 3, 4)
	tests := []struct {
		key   []string
		limit int
		want  []string // rows in page order
		pages int
		lasts []string // the first pages' last keys
	}{
		{[]string{"id"}, 3, all, 3, []string{"[9223372036854775802]", "[9223372036854775805]", "[9223372036854775807]"}},
		{[]string{"ts", "id"}, 2, noNull, 4, []string{"[2024-03-01 10:00:00.000001+00 9223372036854775801]"}},
		{[]string{"lt", "id"}, 4, noNull, 2, []string{"[2024-03-01 10:00:00.999999 9223372036854775804]", "[2024-03-01 10:00:01.000000 9223372036854775807]"}},
		// ts alone is not unique: a page of 1 takes every tie of its key.
		{[]string{"ts"}, 1, noNull, 3, []string{"[2024-03-01 10:00:00.000001+00]"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.key, tt.limit), func(t *testing.T) {
			got, lasts := walkPages(t, ctx, ep, ks, info, tt.key, tt.limit)
			slices.Sort(got) // a page is a range: its rows come in any order
			if !slices.Equal(got, tt.want) {
				t.Errorf("rows %v, want %v", got, tt.want)
			}
			if len(lasts) != tt.pages || !slices.Equal(lasts[:len(tt.lasts)], tt.lasts) {
				t.Errorf("%d pages ending %v, want %d ending %v…", len(lasts), lasts, tt.pages, tt.lasts)
			}
		})
	}
	// keys of several digit counts, negative ones too: a page's last key
	// is its largest by value, not by text (the outer ORDER BY took the
	// ::text output column: keys 1…4000 ended their page at 999, keys
	// -120…-1 paged one key at a time; attack s15)
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %[1]s.w (id int8 PRIMARY KEY, v text); INSERT INTO %[1]s.w SELECT g, 'w' || g FROM generate_series(-120, 1000) g WHERE g <> 0", f.Schema))
	winfo, err := ep.Probe(ctx, routes.TableRef{Schema: f.Schema, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if got, lasts := walkPages(t, ctx, ep, ks, winfo, []string{"id"}, 250); len(got) != 1120 || !slices.Equal(lasts, []string{"[130]", "[380]", "[630]", "[880]", "[1000]"}) {
		t.Errorf("ids -120…1000 by pages of 250: %d rows in pages ending %v; want 1120 in pages ending [130] [380] [630] [880] [1000]", len(got), lasts)
	}
	_, _, _, err = ks.KeysetPage(ctx, info, []string{"nope"}, nil, 10)
	if pe := (*routes.ProbeError)(nil); !errors.As(err, &pe) || pe.Column != "nope" {
		t.Errorf("missing key column: %v, want a probe error naming it", err)
	}
}

// walkPages reads every page of a keyset walk: the v values and each
// page's last key.
func walkPages(t *testing.T, ctx context.Context, ep routes.Source, ks routes.KeysetSource, info *routes.TableInfo, key []string, limit int) ([]string, []string) {
	t.Helper()
	var rows, lasts []string
	var after []string
	for range 100 {
		r, last, ok, err := ks.KeysetPage(ctx, info, key, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return rows, lasts
		}
		lasts = append(lasts, fmt.Sprint(last))
		s, err := ep.Read(ctx, r, routes.ReadOptions{Columns: []string{"v"}})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			c := s.RecordBatch().Column(0)
			for i := range c.Len() {
				rows = append(rows, c.ValueStr(i))
			}
		}
		err = s.Err()
		s.Release()
		if err != nil {
			t.Fatal(err)
		}
		after = last
	}
	t.Fatal("no end after 100 pages")
	return nil, nil
}
