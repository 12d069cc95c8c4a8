//go:build cgo

package duck_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// A weir table on file://, S3 and GCS, read by DuckDB's own Parquet
// reader through a plain glob of its folder, with and without Hive
// partitioning, is exactly the committed table after every step: replace,
// a killed run's staged files, an append, a run aborted mid-way (and a
// reader while it is staged), a second append, a replace. S3 and GCS are
// read through a local mirror of their objects (DuckDB reaches object
// stores through its httpfs extension, which this build does not load).
func TestGlob_ReadsExactlyTheCommittedTable(t *testing.T) {
	stores := map[string]func(testing.TB, ...string) *objstoretest.Fixture{
		"file": objstoretest.NewFile, "s3": objstoretest.NewS3, "gcs": objstoretest.NewGCS}
	db, err := duck.Open(t.Context(), duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, newFixture := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := routestest.Context(t, 2*time.Minute)
			f := newFixture(t, "file_bytes=20000", "row_group_bytes=4096")
			check := func(step string, want []routestest.Row) {
				t.Helper()
				globEquals(t, ctx, db, f, step, want)
			}

			write(t, ctx, f, routestest.Rows(1, 100), routes.ModeReplace)
			check("replace", routestest.Rows(1, 100))

			// A run killed while staging: valid Parquet files a glob would
			// read if they were in the table's folder, and an expired lease.
			m, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "t")
			part := f.Get(t, "t/"+m.Files[0].Path)
			f.Put(t, "_weir_staging/t/dead0001/part-dead0001-000-0000.parquet", part)
			f.Put(t, "_weir_staging/t/dead0001/run=dead0001/part-000-0000.parquet", part)
			f.Put(t, "t/"+objstore.LockName, []byte(fmt.Sprintf(`{"run_id":"dead0001","table":"t","expires":%q}`, time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano))))
			check("killed run", routestest.Rows(1, 100))

			write(t, ctx, f, routestest.Rows(101, 160), routes.ModeAppend)
			check("append", routestest.Rows(1, 160))

			// A run that staged its files and then failed.
			ep := f.Endpoint(t, ctx)
			src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: routestest.Rows(1000, 1500)}
			stage, err := ep.Prepare(ctx, src.Table, routes.WriteOptions{Table: src.Table.Ref, Mode: routes.ModeAppend})
			if err != nil {
				t.Fatal(err)
			}
			ranges, _ := src.Plan(ctx, src.Table, routes.PlanOptions{Pipes: 1})
			s, _ := src.Read(ctx, ranges[0], routes.ReadOptions{})
			if _, err := stage.Write(ctx, s); err != nil {
				t.Fatal(err)
			}
			s.Release()
			check("a run staged", routestest.Rows(1, 160))
			if err := stage.Abort(ctx); err != nil {
				t.Fatal(err)
			}
			check("aborted run", routestest.Rows(1, 160))

			write(t, ctx, f, routestest.Rows(161, 230), routes.ModeAppend)
			check("second append", routestest.Rows(1, 230))
			write(t, ctx, f, routestest.Rows(1, 40), routes.ModeReplace)
			check("second replace", routestest.Rows(1, 40))
		})
	}
}

// A table written in the layout before staging (run=<id>/ folders) reads
// exactly by glob once weir has replaced it.
func TestGlob_OldLayoutAfterReplace(t *testing.T) {
	db, err := duck.Open(t.Context(), duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := routestest.Context(t, time.Minute)
	f := objstoretest.NewFile(t, "file_bytes=20000", "row_group_bytes=4096")
	f.CreateOldLayout(t, ctx, "t", routestest.Rows(1, 100))
	write(t, ctx, f, routestest.Rows(101, 130), routes.ModeAppend)
	write(t, ctx, f, routestest.Rows(1, 130), routes.ModeReplace)
	globEquals(t, ctx, db, f, "replace of an old table", routestest.Rows(1, 130))
}

// write copies rows into table t of f through routes.Copy.
func write(t *testing.T, ctx context.Context, f *objstoretest.Fixture, rows []routestest.Row, mode routes.Mode) {
	t.Helper()
	dst, err := routes.OpenDestination(ctx, f.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	src := &routestest.MemSource{Table: routestest.MemInfo("t"), Rows: rows, BatchLen: 37}
	spec := routes.CopySpec{Table: routes.TableRef{Name: "t"}, Mode: mode, Budget: routes.Budget{Parallel: 3, ChunkBytes: 16 << 10}}
	if _, err := routes.Copy(ctx, src, dst, spec); err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
}

// globEquals reads table t's folder with DuckDB's read_parquet in the ways
// other tools do and compares with want, row for row and column for column.
func globEquals(t *testing.T, ctx context.Context, db *duck.DB, f *objstoretest.Fixture, step string, want []routestest.Row) {
	t.Helper()
	dir := f.Mirror(t, ctx, "t") + "/t"
	wantCols := routestest.MemInfo("t").Schema()
	for _, src := range []string{
		fmt.Sprintf("read_parquet(%s)", duck.Literal(dir+"/*.parquet")),
		fmt.Sprintf("read_parquet(%s, hive_partitioning=true)", duck.Literal(dir+"/*.parquet")),
		fmt.Sprintf("read_parquet(%s, hive_partitioning=true)", duck.Literal(dir+"/**/*.parquet")),
	} {
		r, err := db.Query(ctx, "SELECT * FROM "+src+" ORDER BY id")
		if err != nil {
			t.Fatalf("%s: %s: %v", step, src, err)
		}
		var cols []string
		for _, c := range r.Schema().Fields() {
			cols = append(cols, c.Name)
		}
		var names []string
		for _, c := range wantCols.Fields() {
			names = append(names, c.Name)
		}
		var got []routestest.Row
		for r.Next() {
			rows, err := objstoretest.ToRows(r.RecordBatch())
			if err != nil {
				t.Fatalf("%s: %s: %v", step, src, err)
			}
			got = append(got, rows...)
		}
		err = r.Err()
		r.Release()
		if err != nil {
			t.Fatalf("%s: %s: %v", step, src, err)
		}
		if !slices.Equal(cols, names) {
			t.Fatalf("%s: %s has columns %v, want %v", step, src, cols, names)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %s reads %d rows, want %d", step, src, len(got), len(want))
		}
		for i := range want {
			if got[i].String() != want[i].String() {
				t.Fatalf("%s: %s row %d:\n got %s\nwant %s", step, src, i, got[i], want[i])
			}
		}
	}
}
