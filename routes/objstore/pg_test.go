package objstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// allTypes is a PostgreSQL table with every type the lake keeps exactly,
// NULLs in every nullable column, and the edge values of row -1: time
// 24:00:00 (CSV wrote it as 00:00:00), an empty bytea (read back as NULL) and
// dates outside years 0000..9999 (CSV wrote text it could not read back).
const allTypes = `CREATE TABLE %s (
  id bigint PRIMARY KEY, i int, s smallint, n numeric(12,2), big numeric(38,10), nn numeric,
  r real, d double precision, t text, v varchar(20), b boolean, dt date, tm time,
  ts timestamp, tz timestamptz, u uuid, j jsonb, by bytea, ia int[], ta text[])`

const allTypesRows = `INSERT INTO %s SELECT g, g * 7, (g %% 300)::smallint, g * 1.25, g * 12345.6789012345, g / 3.0,
  g / 8.0, g * 1.5e10, 'row ' || g || E' \t"q''\n' || repeat('ü', g %% 5), 'v' || g, g %% 2 = 0,
  date '2024-01-01' + g, time '00:00' + g * interval '1 second',
  timestamp '2024-01-01' + g * interval '37 minutes 1.5 seconds', timestamptz '2024-01-01 00:00+02' + g * interval '1 hour',
  md5(g::text)::uuid, jsonb_build_object('g', g, 'a', jsonb_build_array(1, 'x')), decode(md5(g::text), 'hex'),
  ARRAY[g, NULL, -g]::int[], ARRAY['a' || g, NULL, '']
FROM generate_series(1, 2000) g;
INSERT INTO %s (id) VALUES (0);
INSERT INTO %s (id, tm, by, t, ta, dt) VALUES (-1, '24:00:00', '\x', '', '{}', '4713-01-01 BC'),
  (-2, NULL, NULL, NULL, NULL, '10000-01-01'), (-3, NULL, NULL, NULL, NULL, 'infinity'), (-4, NULL, NULL, NULL, NULL, '-infinity')`

// PostgreSQL → lake → PostgreSQL keeps every value: the row hashes match.
func TestPostgres_ThroughTheLake(t *testing.T) {
	pg := postgrestest.New(t)
	ctx := testContext(t)
	src := pg.Ref("all_types")
	pg.Exec(t, ctx, fmt.Sprintf(allTypes, src), fmt.Sprintf(allTypesRows, src, src, src))
	want, n := pg.Hash(t, ctx, src, "id")
	for _, s := range stores {
		for _, format := range formats {
			t.Run(s.name+"/"+format, func(t *testing.T) {
				lake := s.new(t, "format="+format)
				back := routestest.Name("back")
				copyURL(t, ctx, pg.URL(), src, lake.URL(), "all_types", routes.ModeReplace)
				copyURL(t, ctx, lake.URL(), "all_types", pg.URL(), pg.Ref(back), routes.ModeReplace)
				if got, m := pg.Hash(t, ctx, pg.Ref(back), "id"); got != want || m != n {
					t.Fatalf("round trip through %s %s: %d rows hash %s, want %d rows hash %s", s.name, format, m, got, n, want)
				}
			})
		}
	}
}

func copyURL(t *testing.T, ctx context.Context, srcURL, table, dstURL, destTable string, mode routes.Mode) routes.CopyResult {
	t.Helper()
	st, _ := routes.ParseTableRef(table)
	dt, _ := routes.ParseTableRef(destTable)
	spec := routes.CopySpec{Table: st, DestTable: dt, Mode: mode, Budget: routes.Budget{Parallel: 3, ChunkBytes: 64 << 10}}
	res, err := transfer(ctx, srcURL, dstURL, spec)
	if err != nil {
		t.Fatalf("copy %s → %s: %v", routes.Redact(srcURL), routes.Redact(dstURL), err)
	}
	return res
}

// transfer runs one table the way weir.Transfer does.
func transfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) (routes.CopyResult, error) {
	return incremental.CopyURLs(ctx, srcURL, dstURL, spec, "")
}

func cellTransfer(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error {
	_, err := transfer(ctx, srcURL, dstURL, spec)
	return err
}

// The matrix cells the lead flips on: postgres ⇄ each store, and stores
// between themselves (no server needed).
func TestCells(t *testing.T) {
	lakes := map[string]func(t testing.TB, q ...string) *objstoretest.Fixture{"file": objstoretest.NewFile, "s3": objstoretest.NewS3, "gcs": objstoretest.NewGCS}
	appendOnly := routestest.Caps{Append: true}
	pgCaps := routestest.Caps{Append: true, Merge: true}
	for name, lake := range lakes {
		t.Run("postgres/"+name, func(t *testing.T) {
			routestest.RunCell(t, postgrestest.New(t), lake(t), appendOnly, cellTransfer)
		})
		t.Run(name+"/postgres", func(t *testing.T) {
			routestest.RunCell(t, lake(t), postgrestest.New(t), pgCaps, cellTransfer)
		})
	}
	for _, pair := range [][2]string{{"file", "s3"}, {"s3", "gcs"}, {"gcs", "file"}} {
		t.Run(pair[0]+"/"+pair[1], func(t *testing.T) {
			routestest.RunCell(t, lakes[pair[0]](t), lakes[pair[1]](t, "format=csv.gz"), appendOnly, cellTransfer)
		})
	}
}
