package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// TestSchemaEvolution_AddedColumn: a PostgreSQL source gains a nullable
// column between runs; append and then merge add it to the Iceberg table
// in the commit that brings the data (one snapshot each), old rows null.
func TestSchemaEvolution_AddedColumn(t *testing.T) {
	forEachCatalog(t, testAddedColumn, "sqlite-file", "rest-file")
}

func testAddedColumn(t *testing.T, ice *icebergtest.Fixture) {
	pg := postgrestest.New(t)
	ctx := testContext(t)
	pg.Create(t, ctx, "src", routestest.Rows(1, 10))
	run := func(mode routes.Mode) {
		t.Helper()
		spec := routes.CopySpec{Table: ref(pg.Ref("src")), DestTable: ice.TableRef("dst"), Mode: mode}
		if mode == routes.ModeMerge {
			spec.Window = noWindow
		}
		if _, err := copyURLs(ctx, pg.URL(), ice.URL(), spec); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
	}
	run(routes.ModeReplace)
	pg.Exec(t, ctx, "ALTER TABLE "+pg.Ref("src")+" ADD COLUMN note text")
	pg.Insert(t, ctx, "src", routestest.Rows(11, 15))
	pg.Exec(t, ctx, "UPDATE "+pg.Ref("src")+" SET note = 'n' || id WHERE id > 12")
	snaps := len(loadTable(t, ctx, ice, "dst").Metadata().Snapshots())
	run(routes.ModeAppend)
	expectNotes(t, ctx, ice, map[int64]string{13: "n13", 14: "n14", 15: "n15"}, 15)
	if got := len(loadTable(t, ctx, ice, "dst").Metadata().Snapshots()); got != snaps+1 {
		t.Fatalf("append with a new column made %d snapshots, want 1", got-snaps)
	}

	pg.Exec(t, ctx, "ALTER TABLE "+pg.Ref("src")+" ADD COLUMN extra integer",
		"UPDATE "+pg.Ref("src")+" SET note = 'm' || id WHERE id <= 2")
	run(routes.ModeMerge)
	expectNotes(t, ctx, ice, map[int64]string{1: "m1", 2: "m2", 13: "n13", 14: "n14", 15: "n15"}, 15)
	sc := loadTable(t, ctx, ice, "dst").Schema()
	for _, col := range []string{"note", "extra"} {
		if f, ok := sc.FindFieldByName(col); !ok || f.Required {
			t.Fatalf("column %s after evolution: %v %v; want an optional column", col, f, ok)
		}
	}
	expectNoStaging(t, ctx, ice, "dst")
}

// expectNotes checks the table's note column: the given values, null for
// every other of the rows ids 1..n.
func expectNotes(t *testing.T, ctx context.Context, f *icebergtest.Fixture, want map[int64]string, n int) {
	t.Helper()
	_, batches, err := loadTable(t, ctx, f, "dst").Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	rows := 0
	for rec, err := range batches {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		notes := rec.Column(rec.Schema().FieldIndices("note")[0]).(*array.String)
		for i := range ids.Len() {
			rows++
			if notes.IsValid(i) {
				got[ids.Value(i)] = notes.Value(i)
			}
		}
		rec.Release()
	}
	if rows != n || len(got) != len(want) {
		t.Fatalf("%d rows with notes %v; want %d rows with notes %v", rows, got, n, want)
	}
	for id, note := range want {
		if got[id] != note {
			t.Fatalf("row %d note %q, want %q (all: %v)", id, got[id], note, got)
		}
	}
}

// TestSchemaEvolution_Refused: a dropped or type-changed source column is
// refused before a row moves, naming the table and the column; the table
// keeps its snapshots.
func TestSchemaEvolution_Refused(t *testing.T) {
	tests := []struct {
		name, alter, column string
	}{
		{"dropped column", "ALTER TABLE %s DROP COLUMN name", "name"},
		{"changed type", "ALTER TABLE %s ALTER COLUMN flag TYPE integer USING flag::int", "flag"},
		// A decimal of more precision and the same scale widens the table
		// (TestDrift_IcebergPromotes); a scale change cannot.
		{"decimal scale grew", "ALTER TABLE %s ALTER COLUMN amount TYPE numeric(20,4)", "amount"},
	}
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := "src"+itoa(int64(i)), "dst"+itoa(int64(i))
			pg.Create(t, ctx, src, routestest.Rows(1, 10))
			spec := routes.CopySpec{Table: ref(pg.Ref(src)), DestTable: ice.TableRef(dst)}
			if _, err := copyURLs(ctx, pg.URL(), ice.URL(), spec); err != nil {
				t.Fatal(err)
			}
			pg.Exec(t, ctx, fmt.Sprintf(tc.alter, pg.Ref(src)))
			before := len(loadTable(t, ctx, ice, dst).Metadata().Snapshots())
			for _, mode := range []routes.Mode{routes.ModeAppend, routes.ModeMerge, routes.ModeReplace} {
				spec.Mode, spec.Window = mode, noWindow
				_, err := copyURLs(ctx, pg.URL(), ice.URL(), spec)
				var pe *routes.ProbeError
				if !errors.As(err, &pe) || pe.Column != tc.column || pe.Table != ice.TableRef(dst).String() || pe.Hint == "" {
					t.Fatalf("%s: %v; want a ProbeError on %s column %s with a hint", mode, err, ice.TableRef(dst), tc.column)
				}
			}
			if after := len(loadTable(t, ctx, ice, dst).Metadata().Snapshots()); after != before {
				t.Fatalf("refused runs changed the snapshots: %d → %d", before, after)
			}
			expectRows(t, ctx, ice, dst, routestest.Rows(1, 10))
			expectNoStaging(t, ctx, ice, dst)
		})
	}
}
