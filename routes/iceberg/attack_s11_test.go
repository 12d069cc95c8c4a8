package iceberg_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/where"
)

// TestAttackS11_LongStringDropsRowGroupBounds: weir's encoder writes 4 MiB
// row groups, so a data file of a few MiB has several. Parquet drops a
// row group's min/max of a column when one of them is longer than 4096
// bytes (arrow-go's MaxStatsSize), and iceberg-go's DataFileFromMetadata
// then skips that row group (stats set, no min/max) instead of dropping
// the column's bounds: the file's bounds describe only the other row
// groups, and --where pruning by them skips a file holding matching rows.
// Here the first row group holds s = 'aaa' and one 5000-byte value, the
// others only 'm': --where "s = 'aaa'" must plan the one data file and
// return row 1.
func TestAttackS11_LongStringDropsRowGroupBounds(t *testing.T) {
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	pg.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, s text, pad text)`, pg.Ref("src")),
		fmt.Sprintf(`INSERT INTO %s SELECT g, CASE WHEN g = 1 THEN 'aaa' WHEN g = 2 THEN repeat('y', 5000) ELSE 'm' END,
  md5(g::text) || md5((g+1)::text) FROM generate_series(1, 150000) g`, pg.Ref("src")))
	spec := routes.CopySpec{Table: ref(pg.Ref("src")), DestTable: ice.TableRef("dst"), Mode: routes.ModeReplace,
		Budget: routes.Budget{Parallel: 1}}
	if _, err := copyURLs(ctx, pg.URL(), ice.URL(), spec); err != nil {
		t.Fatal(err)
	}
	df, md := onlyDataFile(t, ctx, ice, "dst")
	sc := loadTable(t, ctx, ice, "dst").Schema()
	sField, _ := sc.FindFieldByName("s")
	t.Logf("row groups %d; s bounds %q..%q", md.NumRowGroups(),
		df.LowerBoundValues()[sField.ID], df.UpperBoundValues()[sField.ID])
	if md.NumRowGroups() < 2 {
		t.Fatalf("the file has %d row group(s): the test needs several", md.NumRowGroups())
	}
	if lo, ok := df.LowerBoundValues()[sField.ID]; ok && string(lo) > "aaa" {
		t.Errorf("s's lower bound is %q, but the file holds 'aaa'", lo)
	}
	if hi, ok := df.UpperBoundValues()[sField.ID]; ok && string(hi) < strings.Repeat("y", 16) {
		t.Errorf("s's upper bound is %q, but the file holds 'yyyy…' (5000 bytes)", hi)
	}
	ep := ice.Endpoint()
	info, err := ep.Probe(ctx, ice.TableRef("dst"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"s = 'aaa'", "s > 'x'"} {
		x, err := where.Parse(w)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := wice.ScanFiles(ctx, loadTable(t, ctx, ice, "dst"), info, x); err != nil || n != 1 {
			t.Errorf("--where %s plans %d data files (%v), want 1: the file holds a matching row", w, n, err)
		}
	}
}
