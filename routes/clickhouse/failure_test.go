package clickhouse_test

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
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

func probe(t *testing.T, ctx context.Context, url, table string) *routes.TableInfo {
	t.Helper()
	s, err := routes.OpenSource(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref, _ := routes.ParseTableRef(table)
	info, err := s.Probe(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestPrepare_ConcurrentOneLocked(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Create(t, ctx, "src", routestest.Rows(1, 10))
	info := probe(t, ctx, f.URL(), f.Ref("src"))
	dest, _ := routes.ParseTableRef(f.Ref("dst"))
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		stages := make([]routes.Stage, 2)
		errs := make([]error, 2)
		runs := []string{fmt.Sprintf("a%07d", round), fmt.Sprintf("b%07d", round)}
		for i := range stages {
			d, err := routes.OpenDestination(ctx, f.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				stages[i], errs[i] = d.Prepare(ctx, info, routes.WriteOptions{Table: dest, Mode: routes.ModeReplace, RunID: runs[i]})
			}()
		}
		wg.Wait()
		won := checkOneLocked(t, errs, runs)
		if err := stages[won].Abort(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if left := f.Staging(t, ctx, "dst"); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// checkOneLocked wants one success and one *LockedError naming the winner.
func checkOneLocked(t *testing.T, errs []error, runs []string) int {
	t.Helper()
	var lerr *routes.LockedError
	switch {
	case errs[0] == nil && errors.As(errs[1], &lerr):
		if lerr.RunID != runs[0] {
			t.Fatalf("locked error names %q, want %q", lerr.RunID, runs[0])
		}
		return 0
	case errs[1] == nil && errors.As(errs[0], &lerr):
		if lerr.RunID != runs[1] {
			t.Fatalf("locked error names %q, want %q", lerr.RunID, runs[1])
		}
		return 1
	}
	t.Fatalf("want exactly one ErrLocked, got %v and %v", errs[0], errs[1])
	return -1
}

// cancelSource cancels the copy once its first batch has gone through.
type cancelSource struct {
	routes.Source
	cancel context.CancelFunc
}

func (c cancelSource) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	s, err := c.Source.Read(ctx, r, opts)
	return &cancelStream{Stream: s, cancel: c.cancel}, err
}

type cancelStream struct {
	routes.Stream
	cancel context.CancelFunc
	n      int
}

func (s *cancelStream) Next() bool {
	if s.n++; s.n == 2 {
		s.cancel()
	}
	return s.Stream.Next()
}

func TestCopy_CancelKeepsPreviousTable(t *testing.T) {
	for name, dst := range map[string]*clickhousetest.Fixture{"native": clickhousetest.New(t), "http": clickhousetest.NewHTTP(t)} {
		t.Run(name, func(t *testing.T) {
			pg := postgrestest.New(t)
			ctx := routestest.Context(t, 2*time.Minute)
			pg.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s.big AS SELECT g::int8 AS id, md5(g::text) AS s FROM generate_series(1, 200000) g", pg.Schema))
			dst.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (id Int64, s String) ENGINE = MergeTree ORDER BY id", dst.Ref("big")),
				fmt.Sprintf("INSERT INTO %s VALUES (1, 'previous')", dst.Ref("big")))
			src, err := routes.OpenSource(ctx, pg.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			d, err := routes.OpenDestination(ctx, dst.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			spec := pgSpec(pg.Ref("big"), dst.Ref("big"))
			spec.Budget.ChunkBytes = 32 << 10
			_, err = routes.Copy(cctx, cancelSource{src, cancel}, d, spec)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled copy: %v, want context.Canceled", err)
			}
			if got := dst.Value(t, ctx, "SELECT concat(toString(count()), s) FROM "+dst.Ref("big")+" GROUP BY s"); got != "1previous" {
				t.Fatalf("destination now %q, want the previous row", got)
			}
			if left := dst.Staging(t, ctx, "big"); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

func TestAppend_ThreeRuns(t *testing.T) {
	pg, ch := postgrestest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	pg.Create(t, ctx, "ev", routestest.Rows(1, 100))
	spec := pgSpec(pg.Ref("ev"), ch.Ref("ev"))
	spec.Mode = routes.ModeAppend
	for run, hi := range []int64{100, 150, 200} {
		if run > 0 {
			pg.Insert(t, ctx, "ev", routestest.Rows(hi-49, hi))
		}
		res, err := copyURLs(ctx, pg.URL(), ch.URL(), spec)
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if res.Watermark != fmt.Sprint(hi) {
			t.Fatalf("run %d: watermark %q, want %d", run+1, res.Watermark, hi)
		}
		expectCH(t, ctx, ch, "ev", routestest.Rows(1, hi))
	}
	res, err := copyURLs(ctx, pg.URL(), ch.URL(), spec)
	if err != nil || !res.NothingNew {
		t.Fatalf("fourth run with nothing new: %+v, %v", res, err)
	}
	expectState(t, ctx, ch, "ev", probe(t, ctx, pg.URL(), pg.Ref("ev")).SourceID, "200")
}

func expectCH(t *testing.T, ctx context.Context, f *clickhousetest.Fixture, table string, want []routestest.Row) {
	t.Helper()
	got, ok := f.Read(t, ctx, table)
	if !ok || len(got) != len(want) {
		t.Fatalf("%s: %d rows (exists %v), want %d", table, len(got), ok, len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d: %s, want %s", i, got[i], want[i])
		}
	}
}

func expectState(t *testing.T, ctx context.Context, f *clickhousetest.Fixture, table, sourceID, watermark string) {
	t.Helper()
	d, err := routes.OpenDestination(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sr, _ := routes.As[routes.StateReader](d)
	ref, _ := routes.ParseTableRef(f.Ref(table))
	st, ok, err := sr.LoadState(ctx, ref, sourceID)
	if err != nil || !ok || st.Watermark != watermark {
		t.Fatalf("state %+v (found %v, %v), want watermark %s", st, ok, err, watermark)
	}
}

func TestPostgresToClickHouse_OutOfRange(t *testing.T) {
	pg, ch := postgrestest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	tests := []struct {
		name, typ, value, opts, want string
	}{
		{"date_after_2105", "date", "'2106-01-01'", "", "date 2106-01-01 is outside the ClickHouse Date range (1970-01-01 to 2105-12-31)"},
		{"date_before_1970", "date", "'1969-12-31'", "", "outside the ClickHouse Date range"},
		{"subseconds_refused", "timestamp", "'2024-01-01 00:00:00.5'", "", "add subseconds=truncate to the destination URL"},
		{"subseconds_truncated", "timestamp", "'2024-01-01 00:00:00.5'", "subseconds=truncate", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pg.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s.%s (id int8 PRIMARY KEY, v %s); INSERT INTO %s.%s VALUES (1, %s)", pg.Schema, tc.name, tc.typ, pg.Schema, tc.name, tc.value))
			url := ch.URL()
			if tc.opts != "" {
				url = ch.URLWith(tc.opts)
			}
			_, err := copyURLs(ctx, pg.URL(), url, pgSpec(pg.Ref(tc.name), ch.Ref(tc.name)))
			if tc.want == "" {
				if err != nil || ch.Value(t, ctx, "SELECT toString(v) FROM "+ch.Ref(tc.name)) != "2024-01-01 00:00:00" {
					t.Fatalf("truncating copy: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if ch.Exists(t, ctx, tc.name) || len(ch.Staging(t, ctx, tc.name)) > 0 {
				t.Fatalf("a failed copy left tables behind")
			}
		})
	}
}

func TestMerge_UpsertsByKey(t *testing.T) {
	pg, ch := postgrestest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	pg.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.m (id int8 PRIMARY KEY, v text, updated_at timestamp NOT NULL);
INSERT INTO %[1]s.m SELECT g, 'v' || g, timestamp '2024-01-01' + g * interval '1 minute' FROM generate_series(1, 10) g`, pg.Schema))
	spec := pgSpec(pg.Ref("m"), ch.Ref("m"))
	spec.Mode = routes.ModeMerge
	run := func() routes.CopyResult {
		t.Helper()
		res, err := incremental.CopyURLs(ctx, pg.URL(), ch.URL(), spec, "updated_at")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	run()
	pg.Exec(t, ctx, fmt.Sprintf(`UPDATE %[1]s.m SET v = 'new', updated_at = timestamp '2024-02-01' + id * interval '1 second' WHERE id <= 3;
INSERT INTO %[1]s.m VALUES (11, 'v11', timestamp '2024-03-01')`, pg.Schema))
	if res := run(); res.Rows != 4 {
		t.Fatalf("second merge moved %d rows, want the 4 changed", res.Rows)
	}
	got := ch.Query(t, ctx, "SELECT toString(id), v FROM "+ch.Ref("m")+" FINAL ORDER BY id")
	if len(got) != 11 || *got[0][1] != "new" || *got[2][1] != "new" || *got[3][1] != "v4" || *got[10][1] != "v11" {
		t.Fatalf("after merge (FINAL): %d rows, first %q, fourth %q", len(got), *got[0][1], *got[3][1])
	}
	if engine := ch.Value(t, ctx, fmt.Sprintf("SELECT engine FROM system.tables WHERE database = '%s' AND name = 'm'", ch.DB)); engine != "ReplacingMergeTree" {
		t.Fatalf("merge created a %s table", engine)
	}
}

func TestMerge_RefusesPlainMergeTree(t *testing.T) {
	pg, ch := postgrestest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg.Create(t, ctx, "m", routestest.Rows(1, 5))
	if _, err := copyURLs(ctx, pg.URL(), ch.URL(), pgSpec(pg.Ref("m"), ch.Ref("m"))); err != nil {
		t.Fatal(err)
	}
	spec := pgSpec(pg.Ref("m"), ch.Ref("m"))
	spec.Mode = routes.ModeMerge
	pg.Insert(t, ctx, "m", routestest.Rows(6, 6))
	_, err := copyURLs(ctx, pg.URL(), ch.URL(), spec)
	if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "ReplacingMergeTree") {
		t.Fatalf("merge into a MergeTree table: %v, want bad input naming ReplacingMergeTree", err)
	}
	if left := ch.Staging(t, ctx, "m"); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestListTables_SkipsWeirTables(t *testing.T) {
	f := clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	f.Create(t, ctx, "b", nil)
	f.Create(t, ctx, "a", nil)
	f.Exec(t, ctx, fmt.Sprintf("CREATE TABLE %s (x UInt8) ENGINE = Memory", f.Ref("_weir_state")),
		fmt.Sprintf("CREATE VIEW %s AS SELECT 1", f.Ref("v")))
	s, err := routes.OpenSource(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, _ := routes.As[routes.TableLister](s)
	got, err := l.ListTables(ctx, f.DB)
	if err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Fatalf("ListTables = %v, %v; want a, b", got, err)
	}
}

// A merge key on nullable columns cannot order a ReplacingMergeTree (the
// ORDER BY left them out, tuple(), and FINAL collapsed every row into one):
// the first merge is refused before a table is created.
func TestMerge_RefusesNullableKey(t *testing.T) {
	pg, ch := postgrestest.New(t), clickhousetest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %[1]s.nk (k int, j int NOT NULL, cur int, v text);
INSERT INTO %[1]s.nk VALUES (1, 1, 1, 'a'), (2, 2, 2, 'b'), (3, 3, 3, 'c')`, pg.Schema))
	for _, key := range [][]string{{"k"}, {"j", "k"}} {
		spec := pgSpec(pg.Ref("nk"), ch.Ref("nk"))
		spec.Mode, spec.Key = routes.ModeMerge, key
		_, err := incremental.CopyURLs(ctx, pg.URL(), ch.URL(), spec, "cur")
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), "nk.k") {
			t.Fatalf("merge by %v, k nullable: %v, want bad input naming nk.k", key, err)
		}
		if ch.Exists(t, ctx, "nk") || len(ch.Staging(t, ctx, "nk")) > 0 {
			t.Fatalf("merge by %v: a refused merge left tables behind", key)
		}
	}
}

// TestAppend_NullIntoNotNullableColumnFails: a source column that was NOT
// NULL when the table was created (a non-Nullable ClickHouse column) and
// later holds a NULL fails the append naming the column, over the native
// and the HTTP protocol; it used to land as 0 or "" with exit 0.
func TestAppend_NullIntoNotNullableColumnFails(t *testing.T) {
	pg := postgrestest.New(t)
	ctx := routestest.Context(t, 2*time.Minute)
	for _, ch := range []*clickhousetest.Fixture{clickhousetest.New(t), clickhousetest.NewHTTP(t)} {
		dst := ch.URL()
		pg.Exec(t, ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s.rq; CREATE TABLE %[1]s.rq (id int PRIMARY KEY, c bigint NOT NULL, s text NOT NULL, a int[] NOT NULL);
INSERT INTO %[1]s.rq VALUES (1, 10, 'a', '{1}')`, pg.Schema))
		ch.Exec(t, ctx, "DROP TABLE IF EXISTS "+ch.Ref("rq"))
		spec := pgSpec(pg.Ref("rq"), ch.Ref("rq"))
		spec.Mode = routes.ModeAppend
		if _, err := copyURLs(ctx, pg.URL(), dst, spec); err != nil {
			t.Fatal(err)
		}
		for i, col := range []string{"c", "s"} {
			pg.Exec(t, ctx, fmt.Sprintf(`ALTER TABLE %[1]s.rq ALTER %[2]s DROP NOT NULL;
INSERT INTO %[1]s.rq VALUES (%[3]d, 1, 'x', '{1}'); UPDATE %[1]s.rq SET %[2]s = NULL WHERE id = %[3]d`, pg.Schema, col, i+2))
			_, err := copyURLs(ctx, pg.URL(), dst, spec)
			if err == nil || !strings.Contains(err.Error(), col) || !strings.Contains(err.Error(), "not Nullable") {
				t.Fatalf("%s: NULL in %s: got %v, want an error naming the column", dst, col, err)
			}
			pg.Exec(t, ctx, fmt.Sprintf(`DELETE FROM %s.rq WHERE id = %d`, pg.Schema, i+2))
		}
		if n := ch.Value(t, ctx, "SELECT count() FROM "+ch.Ref("rq")); n != "1" {
			t.Fatalf("%s: the table holds %s rows after the refused appends, want its 1", dst, n)
		}
	}
}
