package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// copyTable copies between two tables of the fixture's server
// (incremental.CopyURLs, as every transfer does).
func copyTable(ctx context.Context, t *testing.T, f *postgrestest.Fixture, src, dst string, mut func(*routes.CopySpec)) (routes.CopyResult, error) {
	t.Helper()
	spec := routes.CopySpec{
		Table:     routes.TableRef{Schema: f.Schema, Name: src},
		DestTable: routes.TableRef{Schema: f.Schema, Name: dst},
		Budget:    routes.Budget{Parallel: 4, ChunkBytes: 256 << 10},
	}
	if mut != nil {
		mut(&spec)
	}
	return incremental.CopyURLs(ctx, f.URL(), f.URL(), spec, "")
}

func mustCopy(ctx context.Context, t *testing.T, f *postgrestest.Fixture, src, dst string, mut func(*routes.CopySpec)) routes.CopyResult {
	t.Helper()
	res, err := copyTable(ctx, t, f, src, dst, mut)
	if err != nil {
		t.Fatalf("copy %s → %s: %v", src, dst, err)
	}
	return res
}

func expectSame(ctx context.Context, t *testing.T, f *postgrestest.Fixture, a, b string) {
	t.Helper()
	ha, na := f.Hash(t, ctx, f.Ref(a), "x.id")
	hb, nb := f.Hash(t, ctx, f.Ref(b), "x.id")
	if ha != hb || na != nb {
		t.Fatalf("%s (%d rows, md5 %s) != %s (%d rows, md5 %s)", a, na, ha, b, nb, hb)
	}
}

func expectNoStaging(ctx context.Context, t *testing.T, f *postgrestest.Fixture) {
	t.Helper()
	var n int
	f.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND relname LIKE '\_weir\_stage\_%'`, f.Schema).Scan(&n)
	if n != 0 {
		t.Fatalf("%d staging tables left behind", n)
	}
}

// allTypesCreate covers every type the issue lists, plus ones read as text.
const allTypesCreate = `CREATE TYPE %[1]s.mood AS ENUM ('sad', 'ok', 'happy ☺');
CREATE DOMAIN %[1]s.posint AS integer CHECK (VALUE > 0);
CREATE TABLE %[1]s.alltypes (
  id bigint PRIMARY KEY, i2 smallint, i4 integer, i8 bigint, dom %[1]s.posint,
  n numeric(38,10), nbig numeric(76,20), nfree numeric, f4 real, f8 double precision, b boolean,
  t text, vc varchar(20), c char(5), by bytea, d date, tm time, ts timestamp, tstz timestamptz,
  iv interval, u uuid, j json, jb jsonb, e %[1]s.mood, ia integer[], ta text[], na numeric(10,2)[],
  ea %[1]s.mood[], inet inet, money money, bits bit varying(8), pt point, r int4range)`

const allTypesInsert = `INSERT INTO %[1]s.alltypes VALUES
 (1, -32768, -2147483648, -9223372036854775808, 1, 9999999999999999999999999999.9999999999, -1e55, 0, 'NaN', '-Infinity', true,
  '', '', '', ''::bytea, '4713-01-01 BC', '00:00', '-infinity', 'infinity', '-178000000 years', '00000000-0000-0000-0000-000000000000',
  'null', '{}', 'sad', '{}', '{}', '{}', '{}', '0.0.0.0/0', '-92233720368547758.08', '', '(0,0)', 'empty'),
 (2, 32767, 2147483647, 9223372036854775807, 2147483647, -9999999999999999999999999999.9999999999, 12345678901234567890123456789012345678901234567890123456.12345678901234567890,
  repeat('9', 1000)::numeric / 7, 3.4028235e38, 1.7976931348623157e308, false, 'ünïcødé ✓ 日本 🎉', 'x', 'abc', '\xdeadbeef00ff'::bytea, '294276-12-31',
  '24:00:00', '262000-12-31 23:59:59.999999', '1970-01-01 00:00:00.000001+00', '1 year 2 mons 3 days 04:05:06.789012', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '{"a": [1, 2.5, "x"]}', '{"k": {"n": null, "s": "é"}}', 'happy ☺', '{1,NULL,3}', '{"a",NULL,"","q\"uote"}', '{1.50,NULL,-2.25}', '{ok,sad}',
  '2001:db8::1/128', '92233720368547758.07', '10101', '(1.5,-2)', '[1,10)'),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (4, 0, 0, 0, 5, 0.0000000001, 0.00000000000000000001, -0.000000000000000000000000000001, -0, 'NaN', true, repeat('long ', 400000), 'tab	nl
x', 'a', decode(repeat('00ff', 1500000), 'hex'), '2000-01-01', '23:59:59.999999', '2000-01-01 00:00:00', '1999-12-31 23:59:59.5-08',
  '-1 mons -2 days -00:00:00.000001', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '[1, "two", {"3": 4}]', 'ok', '{-2147483648}', '{"\\"}',
  '{99999999.99}', '{NULL}', '127.0.0.1', '0', '1', '(NaN,Infinity)', '(,)')`

func TestTransfer_AllTypes(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(allTypesCreate, f.Schema), fmt.Sprintf(allTypesInsert, f.Schema))
	tests := []struct {
		name        string
		passthrough bool
	}{{"passthrough", true}, {"arrow", false}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := "copy_" + tc.name
			res := mustCopy(ctx, t, f, "alltypes", dst, func(s *routes.CopySpec) { s.NoPassthrough = !tc.passthrough })
			if res.Native != tc.passthrough || res.Rows != 4 {
				t.Fatalf("rows %d, passthrough %v; want 4, %v", res.Rows, res.Native, tc.passthrough)
			}
			expectSame(ctx, t, f, "alltypes", dst)
			expectNoStaging(ctx, t, f)
		})
	}
}

func TestTransfer_MillionRows(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 5*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.big AS SELECT g::int8 AS id, md5(g::text) AS s, (g * 0.01)::numeric(14,2) AS amt,
  timestamp '2024-01-01' + g * interval '1 second' AS ts, g %% 3 = 0 AS flag FROM generate_series(1, 1000000) g;
ALTER TABLE %s.big ADD PRIMARY KEY (id); ANALYZE %s.big`, f.Schema, f.Schema, f.Schema))
	for _, passthrough := range []bool{true, false} {
		dst := fmt.Sprintf("big_copy_%v", passthrough)
		res := mustCopy(ctx, t, f, "big", dst, func(s *routes.CopySpec) { s.NoPassthrough = !passthrough })
		if res.Rows != 1_000_000 || res.Pipes < 2 {
			t.Fatalf("rows %d over %d pipes, want 1000000 over several", res.Rows, res.Pipes)
		}
		expectSame(ctx, t, f, "big", dst)
	}
}

func TestTransfer_NoPrimaryKeyUsesCtidRanges(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.heap AS SELECT g AS id, repeat('x', g %% 50) AS pad FROM generate_series(1, 300000) g; ANALYZE %s.heap`, f.Schema, f.Schema))
	s, err := routes.OpenSource(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.Probe(ctx, routes.TableRef{Schema: f.Schema, Name: "heap"})
	if err != nil {
		t.Fatal(err)
	}
	ranges, err := s.Plan(ctx, info, routes.PlanOptions{Pipes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(ranges) < 2 || !strings.Contains(ranges[0].Predicate, "ctid") {
		t.Fatalf("want several ctid ranges, got %v", ranges)
	}
	res := mustCopy(ctx, t, f, "heap", "heap_copy", nil)
	if res.Rows != 300000 {
		t.Fatalf("rows %d, want 300000", res.Rows)
	}
	expectSame(ctx, t, f, "heap", "heap_copy")
}

func TestTransfer_CancelKeepsOldTable(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src AS SELECT g::int8 AS id, repeat(md5(g::text), 8) AS s FROM generate_series(1, 2000000) g;
ALTER TABLE %s.src ADD PRIMARY KEY (id);
CREATE TABLE %s.dst (id int8 PRIMARY KEY, s text); INSERT INTO %s.dst VALUES (1, 'old'), (2, 'rows')`, f.Schema, f.Schema, f.Schema, f.Schema))
	before, _ := f.Hash(t, ctx, f.Ref("dst"), "x.id")
	cctx, cancel := context.WithCancel(ctx)
	progress := &routes.Progress{}
	go func() {
		for {
			if _, b := progress.Snapshot(); b > 1<<20 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := copyTable(cctx, t, f, "src", "dst", func(s *routes.CopySpec) { s.Progress = progress })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled copy: got %v, want context.Canceled", err)
	}
	after, n := f.Hash(t, ctx, f.Ref("dst"), "x.id")
	if after != before || n != 2 {
		t.Fatalf("destination changed by a cancelled run (%d rows)", n)
	}
	expectNoStaging(ctx, t, f)
}

func TestTransfer_ConcurrentRunsOneLocked(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src AS SELECT g::int8 AS id, md5(g::text) AS s FROM generate_series(1, 500000) g;
ALTER TABLE %s.src ADD PRIMARY KEY (id)`, f.Schema, f.Schema))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = copyTable(ctx, t, f, "src", "dst", nil)
		}()
	}
	wg.Wait()
	locked, ok := 0, 0
	for _, err := range errs {
		var le *routes.LockedError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &le) && le.RunID != "":
			locked++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if ok != 1 || locked != 1 {
		t.Fatalf("%d runs passed and %d were locked; want 1 and 1 (%v)", ok, locked, errs)
	}
	expectSame(ctx, t, f, "src", "dst")
	expectNoStaging(ctx, t, f)
}

func TestTransfer_StaleStagingDoesNotBlock(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 3*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src AS SELECT g::int8 AS id FROM generate_series(1, 1000) g`, f.Schema))
	// A run that died: its staging table stays, its session (and lock) is gone.
	stale := fmt.Sprintf("%s._weir_stage_dst_deadbeef", f.Schema)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id int8)`, stale),
		fmt.Sprintf(`COMMENT ON TABLE %s IS 'weir:stage dest=%s run=deadbeef since=2026-01-01T00:00:00Z'`, stale, `"`+f.Schema+`"."dst"`))
	mustCopy(ctx, t, f, "src", "dst", nil)
	expectSame(ctx, t, f, "src", "dst")
	expectNoStaging(ctx, t, f)
}

func TestTransfer_EmptySourceKeepsTable(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.empty (id int8 PRIMARY KEY); CREATE TABLE %[1]s.dst (id int8 PRIMARY KEY); INSERT INTO %[1]s.dst VALUES (7)`, f.Schema))
	res := mustCopy(ctx, t, f, "empty", "dst", nil)
	if !res.KeptEmpty {
		t.Fatalf("empty source not reported: %+v", res)
	}
	if _, n := f.Hash(t, ctx, f.Ref("dst"), "x.id"); n != 1 {
		t.Fatalf("destination has %d rows, want the 1 it had", n)
	}
	expectNoStaging(ctx, t, f)
}

func TestTransfer_DependentViewKeepsWorking(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.src AS SELECT g::int8 AS id FROM generate_series(1, 100) g;
CREATE TABLE %[1]s.dst (id int8); CREATE VIEW %[1]s.v AS SELECT count(*) AS n FROM %[1]s.dst`, f.Schema))
	mustCopy(ctx, t, f, "src", "dst", nil)
	var n int
	f.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT n FROM %s.v`, f.Schema)).Scan(&n)
	if n != 100 {
		t.Fatalf("view over the replaced table counts %d, want 100", n)
	}
}

func TestTransfer_AppendAndMerge(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src (id int8 PRIMARY KEY, v text)`, f.Schema))
	for run := 1; run <= 3; run++ {
		f.Exec(t, ctx, fmt.Sprintf(`INSERT INTO %s.src SELECT g, 'v' || g FROM generate_series(%d, %d) g`, f.Schema, run*100-99, run*100))
		res := mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend })
		if res.Rows != 100 || res.Watermark != fmt.Sprint(run*100) {
			t.Fatalf("append run %d: %d rows, watermark %s; want 100 new rows up to %d", run, res.Rows, res.Watermark, run*100)
		}
	}
	expectSame(ctx, t, f, "src", "app")
	if res := mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend }); !res.NothingNew {
		t.Fatalf("a re-run with nothing new must be a no-op: %+v", res)
	}
	// Merge: the first run loads all, the next picks rows past the watermark
	// and upserts them by key.
	mustCopy(ctx, t, f, "src", "mrg", func(s *routes.CopySpec) { s.Mode = routes.ModeMerge })
	f.Exec(t, ctx, fmt.Sprintf(`INSERT INTO %s.src VALUES (301, 'new')`, f.Schema))
	mustCopy(ctx, t, f, "src", "mrg", func(s *routes.CopySpec) { s.Mode = routes.ModeMerge })
	expectSame(ctx, t, f, "src", "mrg")
}

func TestTransfer_FailureBeforeCommitKeepsDataAndState(t *testing.T) {
	f := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s.src (id int8 PRIMARY KEY, v text); INSERT INTO %s.src SELECT g, 'x' FROM generate_series(1, 50) g`, f.Schema, f.Schema))
	mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend })
	f.Exec(t, ctx, fmt.Sprintf(`INSERT INTO %s.src SELECT g, 'y' FROM generate_series(51, 80) g`, f.Schema))
	// Make the commit fail inside its transaction, after the load.
	f.Exec(t, ctx, fmt.Sprintf(`CREATE FUNCTION %[1]s.boom() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'injected'; END$$;
CREATE TRIGGER boom BEFORE INSERT OR UPDATE ON %[1]s._weir_state FOR EACH ROW EXECUTE FUNCTION %[1]s.boom()`, f.Schema))
	if _, err := copyTable(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend }); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if _, n := f.Hash(t, ctx, f.Ref("app"), "x.id"); n != 50 {
		t.Fatalf("destination has %d rows after a failed commit, want 50", n)
	}
	var wm string
	f.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT watermark FROM %s._weir_state`, f.Schema)).Scan(&wm)
	if wm != "50" {
		t.Fatalf("watermark %q after a failed commit, want 50", wm)
	}
	expectNoStaging(ctx, t, f)
	f.Exec(t, ctx, fmt.Sprintf(`DROP TRIGGER boom ON %s._weir_state`, f.Schema))
	mustCopy(ctx, t, f, "src", "app", func(s *routes.CopySpec) { s.Mode = routes.ModeAppend })
	expectSame(ctx, t, f, "src", "app")
}
