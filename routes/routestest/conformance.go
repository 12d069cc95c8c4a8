package routestest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirhq/weir/routes"
)

// Row is one row of the conformance table, the same on every server:
//
//	id bigint primary key, name text NULL, amount decimal(12,2) NULL,
//	ts timestamp (whole seconds, UTC) NULL, flag boolean NULL
//
// Fixtures render what they read back into this shape, so rows compare
// across engines. Amount is the decimal's text with exactly two decimals.
type Row struct {
	ID     int64
	Name   *string
	Amount *string
	TS     *time.Time
	Flag   *bool
}

// Rows returns the conformance rows with ids lo..hi inclusive: NULLs,
// unicode, empty strings and extreme decimals included.
func Rows(lo, hi int64) []Row {
	var out []Row
	for id := lo; id <= hi; id++ {
		out = append(out, makeRow(id))
	}
	return out
}

func makeRow(id int64) Row {
	r := Row{ID: id}
	names := []string{"plain", "", "ünïcødé ✓ 日本", "quote'\"\\tab\t", "line\nbreak"}
	if id%7 != 0 {
		s := names[id%int64(len(names))]
		r.Name = &s
	}
	if id%5 != 0 {
		amounts := []string{"0.00", "-0.01", "9999999999.99", "-9999999999.99", "12.30"}
		a := amounts[id%int64(len(amounts))]
		if id%3 == 0 {
			a = fmt.Sprintf("%d.%02d", id*13, id%100)
		}
		r.Amount = &a
	}
	if id%6 != 0 {
		ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * 97 * time.Minute)
		r.TS = &ts
	}
	if id%4 != 0 {
		b := id%2 == 0
		r.Flag = &b
	}
	return r
}

// Fixture is one server in the matrix. Table names are bare; the fixture
// places them in its own per-test schema or database.
type Fixture interface {
	// URL is the endpoint URL weir opens.
	URL() string
	// Ref is the table reference weir takes for name ("schema.name").
	Ref(name string) string
	// Create makes the conformance table name holding rows (for sources).
	Create(t testing.TB, ctx context.Context, name string, rows []Row)
	// Insert adds rows to an existing conformance table (for sources).
	Insert(t testing.TB, ctx context.Context, name string, rows []Row)
	// Read returns the table's rows by id, and false if it does not exist.
	Read(t testing.TB, ctx context.Context, name string) ([]Row, bool)
	// Staging lists staging objects left for table name.
	Staging(t testing.TB, ctx context.Context, name string) []string
}

// BlankIsNull is a source fixture whose store keeps no empty text apart
// from an empty cell (Google Sheets): its rows' "" names arrive as NULL,
// and the cell expects them so.
type BlankIsNull interface {
	BlankIsNull()
}

// expected is rows as src can hold them.
func expected(src Fixture, rows []Row) []Row {
	if _, ok := src.(BlankIsNull); !ok {
		return rows
	}
	out := make([]Row, len(rows))
	for i, r := range rows {
		if r.Name != nil && *r.Name == "" {
			r.Name = nil
		}
		out[i] = r
	}
	return out
}

// Caps says which modes a destination supports in the matrix.
type Caps struct {
	Append bool
	Merge  bool
}

// TransferFunc runs one transfer the way users do (package weir).
type TransferFunc func(ctx context.Context, srcURL, dstURL string, spec routes.CopySpec) error

// RunCell is the conformance cell for one (source, destination) pair:
// replace, replace again, empty source keeps the table, append past the
// watermark and merge where supported, a held lock refuses a second run, and
// an aborted stage leaves the old table.
func RunCell(t *testing.T, src, dst Fixture, caps Caps, transfer TransferFunc) {
	ctx := Context(t, 5*time.Minute)
	tbl := Name("cell")
	copySpec := func(mode routes.Mode) routes.CopySpec {
		st, _ := routes.ParseTableRef(src.Ref(tbl))
		dt, _ := routes.ParseTableRef(dst.Ref(tbl))
		return routes.CopySpec{Table: st, DestTable: dt, Mode: mode, Budget: routes.Budget{Parallel: 3, ChunkBytes: 64 << 10}}
	}
	run := func(t *testing.T, mode routes.Mode) {
		t.Helper()
		if err := transfer(ctx, src.URL(), dst.URL(), copySpec(mode)); err != nil {
			t.Fatalf("transfer %s: %v", mode, err)
		}
	}
	src.Create(t, ctx, tbl, Rows(1, 100))
	t.Run("replace", func(t *testing.T) {
		run(t, routes.ModeReplace)
		expectRows(t, ctx, dst, tbl, expected(src, Rows(1, 100)))
	})
	t.Run("replace_again", func(t *testing.T) {
		src.Insert(t, ctx, tbl, Rows(101, 150))
		run(t, routes.ModeReplace)
		expectRows(t, ctx, dst, tbl, expected(src, Rows(1, 150)))
	})
	t.Run("empty_source_keeps_table", func(t *testing.T) {
		empty := Name("empty")
		src.Create(t, ctx, empty, nil)
		spec := copySpec(routes.ModeReplace)
		spec.Table, _ = routes.ParseTableRef(src.Ref(empty))
		if err := transfer(ctx, src.URL(), dst.URL(), spec); err != nil {
			t.Fatalf("transfer from empty source: %v", err)
		}
		expectRows(t, ctx, dst, tbl, expected(src, Rows(1, 150)))
	})
	if caps.Append {
		t.Run("append_past_watermark", func(t *testing.T) {
			run(t, routes.ModeAppend) // resumes from the rows a replace loaded
			src.Insert(t, ctx, tbl, Rows(151, 200))
			run(t, routes.ModeAppend)
			expectRows(t, ctx, dst, tbl, expected(src, Rows(1, 200)))
		})
	}
	if caps.Merge { // after append (when supported): the table holds ids 1..200
		t.Run("merge_upserts_new_rows", func(t *testing.T) {
			from := int64(201)
			if !caps.Append {
				from = 151
			}
			src.Insert(t, ctx, tbl, Rows(from, 220))
			run(t, routes.ModeMerge)
			run(t, routes.ModeMerge) // a replay with nothing new changes nothing
			expectRows(t, ctx, dst, tbl, expected(src, Rows(1, 220)))
		})
	}
	t.Run("locked", func(t *testing.T) {
		lockedRun(t, ctx, src, dst, tbl, copySpec(routes.ModeReplace), transfer)
	})
	t.Run("abort_keeps_table", func(t *testing.T) {
		before, _ := dst.Read(t, ctx, tbl)
		stage := prepare(t, ctx, src, dst, tbl, copySpec(routes.ModeReplace))
		if err := stage.Abort(ctx); err != nil {
			t.Fatalf("abort: %v", err)
		}
		expectRows(t, ctx, dst, tbl, before)
	})
}

// lockedRun holds the destination's lock through a Prepare, then checks a
// full transfer is refused with ErrLocked and leaves the table.
func lockedRun(t *testing.T, ctx context.Context, src, dst Fixture, tbl string, spec routes.CopySpec, transfer TransferFunc) {
	before, _ := dst.Read(t, ctx, tbl)
	stage := prepare(t, ctx, src, dst, tbl, spec)
	err := transfer(ctx, src.URL(), dst.URL(), spec)
	if aerr := stage.Abort(ctx); aerr != nil {
		t.Fatalf("abort the lock holder: %v", aerr)
	}
	if !errors.Is(err, routes.ErrLocked) {
		t.Fatalf("second run on a locked table: got %v, want ErrLocked", err)
	}
	expectRows(t, ctx, dst, tbl, before)
}

func prepare(t *testing.T, ctx context.Context, src, dst Fixture, tbl string, spec routes.CopySpec) routes.Stage {
	t.Helper()
	s, err := routes.OpenSource(ctx, src.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	info, err := s.Probe(ctx, spec.Table)
	if err != nil {
		t.Fatal(err)
	}
	d, err := routes.OpenDestination(ctx, dst.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	stage, err := d.Prepare(ctx, info, routes.WriteOptions{Table: spec.DestTable, Mode: spec.Mode, RunID: routes.NewRunID(), Key: info.PrimaryKey})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return stage
}

func expectRows(t *testing.T, ctx context.Context, dst Fixture, tbl string, want []Row) {
	t.Helper()
	got, ok := dst.Read(t, ctx, tbl)
	if !ok {
		t.Fatalf("destination table %s does not exist", tbl)
	}
	if len(got) != len(want) {
		t.Fatalf("destination has %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d differs:\n got %s\nwant %s", want[i].ID, got[i], want[i])
		}
	}
	if left := dst.Staging(t, ctx, tbl); len(left) > 0 {
		t.Fatalf("staging objects left behind: %v", left)
	}
}

// String renders a row for failure messages.
func (r Row) String() string {
	s := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprintf("%q", *p)
	}
	ts, flag := "NULL", "NULL"
	if r.TS != nil {
		ts = r.TS.UTC().Format(time.RFC3339)
	}
	if r.Flag != nil {
		flag = fmt.Sprint(*r.Flag)
	}
	return fmt.Sprintf("{id=%d name=%s amount=%s ts=%s flag=%s}", r.ID, s(r.Name), s(r.Amount), ts, flag)
}
