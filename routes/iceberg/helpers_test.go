package iceberg_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// transfer runs one table the way users do: append and merge read past
// the watermark the destination saved (package incremental).
func transfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error {
	_, err := copyURLs(ctx, srcURL, dstURL, spec)
	return err
}

func copyURLs(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) (routes.CopyResult, error) {
	if spec.Budget.Parallel == 0 {
		spec.Budget = routes.Budget{Parallel: 3, ChunkBytes: 64 << 10}
	}
	return incremental.CopyURLs(ctx, srcURL, dstURL, spec, "")
}

// copyTables copies between two tables of one fixture.
func copyTables(t *testing.T, ctx context.Context, f *icebergtest.Fixture, src, dst string, mode routes.Mode) routes.CopyResult {
	t.Helper()
	res, err := copyURLs(ctx, f.URL(), f.URL(), routes.CopySpec{Table: f.TableRef(src), DestTable: f.TableRef(dst), Mode: mode})
	if err != nil {
		t.Fatalf("copy %s → %s (%s): %v", src, dst, mode, err)
	}
	return res
}

func loadTable(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string) *table.Table {
	t.Helper()
	tbl, err := f.Endpoint().LoadTable(ctx, f.TableRef(name))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// operations lists the table's snapshot operations, oldest first.
func operations(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string) []string {
	t.Helper()
	var ops []string
	for _, s := range loadTable(t, ctx, f, name).Metadata().Snapshots() {
		ops = append(ops, string(s.Summary.Operation))
	}
	return ops
}

func expectRows(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string, want []routestest.Row) {
	t.Helper()
	got, ok := f.Read(t, ctx, name)
	if !ok {
		t.Fatalf("table %s does not exist", name)
	}
	if len(got) != len(want) {
		t.Fatalf("%s has %d rows, want %d", name, len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("%s row %d:\n got %s\nwant %s", name, want[i].ID, got[i], want[i])
		}
	}
}

// catalogs are the catalog and warehouse pairs the route's core tests
// (modes, state, incremental reads, cancel) run on.
var catalogs = []struct {
	name string
	open func(t *testing.T) *icebergtest.Fixture
}{
	{"sqlite-file", func(t *testing.T) *icebergtest.Fixture { return icebergtest.New(t) }},
	{"sqlite-s3", func(t *testing.T) *icebergtest.Fixture { return icebergtest.New(t, icebergtest.S3Warehouse()) }},
	{"postgres-s3", func(t *testing.T) *icebergtest.Fixture {
		return icebergtest.NewOnPostgres(t, routestest.ServerURL(t, postgrestest.Env), icebergtest.S3Warehouse())
	}},
	{"rest-file", func(t *testing.T) *icebergtest.Fixture { return icebergtest.NewREST(t) }},
	{"rest-s3", func(t *testing.T) *icebergtest.Fixture { return icebergtest.NewREST(t, icebergtest.S3Warehouse()) }},
}

// forEachCatalog runs test once per catalog (or per catalog named in
// only, to keep the slow tests' time down), each on a fresh fixture.
func forEachCatalog(t *testing.T, test func(t *testing.T, f *icebergtest.Fixture), only ...string) {
	for _, c := range catalogs {
		if len(only) > 0 && !slices.Contains(only, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) { test(t, c.open(t)) })
	}
}

func testContext(t *testing.T) context.Context { return routestest.Context(t, 3*time.Minute) }

// readIDs reads a table through the source API with the given options and
// returns the ids, sorted as read per range.
func readIDs(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string, plan routes.PlanOptions, opts routes.ReadOptions) []int64 {
	t.Helper()
	ep := f.Endpoint()
	info, err := ep.Probe(ctx, f.TableRef(name))
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := ep.Plan(ctx, info, plan)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range ranges {
		s, err := ep.Read(ctx, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			for _, row := range icebergtest.Rows(t, s.RecordBatch()) {
				ids = append(ids, row.ID)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("read %s: %v", r.Label, err)
		}
		s.Release()
	}
	sortIDs(ids)
	return ids
}

func sortIDs(ids []int64) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

func idRange(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}
