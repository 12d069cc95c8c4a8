package bigquery

// Tests against a BigQuery server — the goccy/bigquery-emulator that
// scripts/services.sh builds and starts, named by WEIR_TEST_BIGQUERY —
// through the route's own Endpoint and, to read back, the official client
// (bigquerytest). docs/bigquery.md ("Tests") lists what the emulator
// cannot show.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	bq "cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/bigquery/bigquerytest"
)

// openEndpoint opens the route on the fixture's dataset with extra URL
// options.
func openEndpoint(t *testing.T, f *bigquerytest.Fixture, opts string) *Endpoint {
	t.Helper()
	raw := f.URL()
	if opts != "" {
		raw = f.URLWith(opts)
	}
	d, err := routes.OpenDestination(t.Context(), raw)
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	t.Cleanup(func() { d.Close() })
	return d.(*Endpoint)
}

// typesInfo is a source table with a column of every common type.
func typesInfo(name string) *routes.TableInfo {
	return &routes.TableInfo{Scheme: "test", SourceID: "test#" + name, Ref: routes.TableRef{Schema: "src", Name: name},
		PrimaryKey: []string{"id"}, Columns: []routes.Column{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
			{Name: "num", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
			{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
			{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
			{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
			{Name: "dt", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		}}
}

// typesRow is one row of typesInfo as the test writes it (JSON for
// array.RecordFromJSON: binary as base64) and as it expects it back.
type typesRow struct {
	json string
	want []bq.Value // id, i32, u64, num, f64, b, s, bin, d, ts, dt
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

var typesRows = map[int64]typesRow{
	1: {`{"id": 1, "i32": -2147483648, "u64": 18446744073709551615, "num": "-9999999999.99", "f64": 1.5, "b": true,
		"s": "ünïcødé 'q' \"dq\" \\ tab\t nl\n", "bin": "AAEC/w==", "d": "2024-02-29",
		"ts": "2024-02-29T23:59:59.123456Z", "dt": "2024-01-31T12:00:00.5"}`,
		[]bq.Value{int64(1), int64(-2147483648), rat("18446744073709551615"), rat("-9999999999.99"), 1.5, true,
			"ünïcødé 'q' \"dq\" \\ tab\t nl\n", []byte{0, 1, 2, 255}, civil.Date{Year: 2024, Month: 2, Day: 29},
			time.Date(2024, 2, 29, 23, 59, 59, 123456000, time.UTC),
			civil.DateTime{Date: civil.Date{Year: 2024, Month: 1, Day: 31}, Time: civil.Time{Hour: 12, Nanosecond: 500000000}}}},
	2: {`{"id": 2}`, []bq.Value{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}},
	3: {`{"id": 3, "i32": 0, "u64": 0, "num": "0.01", "f64": -0.25, "b": false, "s": "", "bin": "", "d": "1970-01-01",
		"ts": "1970-01-01T00:00:00Z", "dt": "1999-12-31T23:59:59.999999"}`,
		[]bq.Value{int64(3), int64(0), rat("0"), rat("0.01"), -0.25, false, "", []byte{}, civil.Date{Year: 1970, Month: 1, Day: 1},
			time.Unix(0, 0).UTC(), civil.DateTime{Date: civil.Date{Year: 1999, Month: 12, Day: 31}, Time: civil.Time{Hour: 23, Minute: 59, Second: 59, Nanosecond: 999999000}}}},
	4: {`{"id": 4, "i32": 42, "u64": 7, "num": "12.30", "f64": 1e-300, "b": true, "s": "four", "bin": "aGk=", "d": "2000-01-01",
		"ts": "2021-06-01T12:34:56Z", "dt": "2021-06-01T12:34:56"}`,
		[]bq.Value{int64(4), int64(42), rat("7"), rat("12.3"), 1e-300, true, "four", []byte("hi"), civil.Date{Year: 2000, Month: 1, Day: 1},
			time.Date(2021, 6, 1, 12, 34, 56, 0, time.UTC), civil.DateTime{Date: civil.Date{Year: 2021, Month: 6, Day: 1}, Time: civil.Time{Hour: 12, Minute: 34, Second: 56}}}},
	// 2 again, now with values: merge updates it.
	102: {`{"id": 2, "i32": 2, "u64": 2, "num": "2.00", "f64": 2, "b": false, "s": "two", "bin": "Ag==", "d": "2002-02-02",
		"ts": "2002-02-02T02:02:02Z", "dt": "2002-02-02T02:02:02"}`,
		[]bq.Value{int64(2), int64(2), rat("2"), rat("2"), 2.0, false, "two", []byte{2}, civil.Date{Year: 2002, Month: 2, Day: 2},
			time.Date(2002, 2, 2, 2, 2, 2, 0, time.UTC), civil.DateTime{Date: civil.Date{Year: 2002, Month: 2, Day: 2}, Time: civil.Time{Hour: 2, Minute: 2, Second: 2}}}},
}

// stream returns the rows (keys of typesRows) as one pipe, in batches of
// one row so a pipe carries several record batches.
func stream(t *testing.T, info *routes.TableInfo, ids ...int64) routes.Stream {
	t.Helper()
	var recs []arrow.RecordBatch
	for _, id := range ids {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, info.Schema(), strings.NewReader("["+typesRows[id].json+"]"))
		if err != nil {
			t.Fatalf("row %d: %v", id, err)
		}
		defer rec.Release()
		recs = append(recs, rec)
	}
	rr, err := array.NewRecordReader(info.Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// load runs one Prepare/Write/Commit of the rows in mode, like
// routes.Copy with one pipe per group of ids.
func load(t *testing.T, e *Endpoint, info *routes.TableInfo, dest string, mode routes.Mode, watermark string, pipes ...[]int64) error {
	t.Helper()
	ctx := t.Context()
	run := routes.NewRunID()
	st, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Name: dest}, Mode: mode, RunID: run, Key: info.PrimaryKey})
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	var rows int64
	for _, ids := range pipes {
		n, err := st.Write(ctx, stream(t, info, ids...))
		if err != nil {
			return errors.Join(fmt.Errorf("write: %w", err), st.Abort(context.WithoutCancel(ctx)))
		}
		rows += n
	}
	state := routes.State{SourceID: info.SourceID, Cursor: "id", Watermark: watermark, RunID: run, Rows: rows}
	if err := st.Commit(ctx, state); err != nil {
		return errors.Join(fmt.Errorf("commit: %w", err), st.Abort(context.WithoutCancel(ctx)))
	}
	return nil
}

// expectTypes compares the table with the rows, by id.
func expectTypes(t *testing.T, f *bigquerytest.Fixture, table string, rows ...int64) {
	t.Helper()
	got := f.Query(t, t.Context(), "SELECT id, i32, u64, num, f64, b, s, bin, d, ts, dt FROM "+f.Ident(table)+" ORDER BY id")
	if len(got) != len(rows) {
		t.Fatalf("%s has %d rows, want %d: %v", table, len(got), len(rows), got)
	}
	cols := []string{"id", "i32", "u64", "num", "f64", "b", "s", "bin", "d", "ts", "dt"}
	for i, id := range rows {
		want := typesRows[id].want
		for c := range want {
			if !sameValue(got[i][c], want[c]) {
				t.Errorf("row %d column %s: got %#v (%T), want %#v", want[0], cols[c], got[i][c], got[i][c], want[c])
			}
		}
	}
	if left := f.Staging(t, t.Context(), table); len(left) > 0 {
		t.Errorf("staging or lock tables left behind: %v", left)
	}
}

func sameValue(got, want bq.Value) bool {
	switch w := want.(type) {
	case *big.Rat:
		g, ok := got.(*big.Rat)
		return ok && g.Cmp(w) == 0
	case []byte:
		// The emulator stores BYTES from NDJSON as the base64 text it
		// was sent instead of decoding it (docs/bigquery.md, Tests).
		g, ok := got.([]byte)
		return ok && string(g) == base64.StdEncoding.EncodeToString(w)
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	}
	return got == want
}

// expectState checks the latest _weir_state row of the pair.
func expectState(t *testing.T, e *Endpoint, info *routes.TableInfo, table, watermark string, rows int64) {
	t.Helper()
	st, ok, err := e.LoadState(t.Context(), routes.TableRef{Name: table}, info.SourceID)
	if err != nil || !ok {
		t.Fatalf("LoadState: ok=%v err=%v", ok, err)
	}
	if st.Watermark != watermark || st.Cursor != "id" || st.Rows != rows || st.SourceID != info.SourceID {
		t.Fatalf("state %+v, want watermark %s, cursor id, %d rows", st, watermark, rows)
	}
}

// TestEmulator_ReplaceAppend moves values of the common types through
// replace and append and checks the state each commit saves. NDJSON only:
// the emulator's Parquet loader mangles NUMERIC, DATE, TIMESTAMP and
// DATETIME values, and its MERGE fails on project-qualified tables
// (docs/bigquery.md, Tests).
func TestEmulator_ReplaceAppend(t *testing.T) {
	for _, format := range []string{FormatJSON} {
		t.Run(format, func(t *testing.T) {
			f := bigquerytest.New(t)
			e := openEndpoint(t, f, "format="+format)
			info := typesInfo("types")
			tbl := "types"

			if err := load(t, e, info, tbl, routes.ModeReplace, "3", []int64{1, 2}, []int64{3}); err != nil {
				t.Fatalf("replace: %v", err)
			}
			expectTypes(t, f, tbl, 1, 2, 3)
			expectState(t, e, info, tbl, "3", 3)

			if err := load(t, e, info, tbl, routes.ModeReplace, "2", []int64{1}, []int64{}, []int64{2}); err != nil {
				t.Fatalf("replace again: %v", err)
			}
			expectTypes(t, f, tbl, 1, 2)
			expectState(t, e, info, tbl, "2", 2)

			if err := load(t, e, info, tbl, routes.ModeAppend, "4", []int64{3, 4}); err != nil {
				t.Fatalf("append: %v", err)
			}
			expectTypes(t, f, tbl, 1, 2, 3, 4)
			expectState(t, e, info, tbl, "4", 2)

			// One state row per commit, versions strictly increasing.
			vs := f.Query(t, t.Context(), "SELECT version, watermark FROM "+f.Ident(StateTable)+" ORDER BY version")
			if len(vs) != 3 {
				t.Fatalf("_weir_state holds %d rows, want 3 (one per commit): %v", len(vs), vs)
			}
			for i := 1; i < len(vs); i++ {
				if bigquerytest.Int(t, vs[i][0]) <= bigquerytest.Int(t, vs[i-1][0]) {
					t.Fatalf("state versions do not increase: %v", vs)
				}
			}
			if got := fmt.Sprintf("%v %v %v", vs[0][1], vs[1][1], vs[2][1]); got != "3 2 4" {
				t.Fatalf("watermarks in commit order: %s, want 3 2 4", got)
			}

			// MaxCursor on the destination: where an append with no state resumes.
			dinfo, err := e.Probe(t.Context(), routes.TableRef{Name: tbl})
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range map[string]string{"id": "4", "ts": "2024-02-29 23:59:59.123456+00", "dt": "2024-01-31 12:00:00.500000"} {
				got, ok, err := e.MaxCursor(t.Context(), dinfo, col)
				if err != nil || !ok || got != want {
					t.Errorf("MaxCursor(%s) = %q, %v, %v; want %q", col, got, ok, err, want)
				}
			}
		})
	}
}

// failingStream yields its batches, then fails: a source that breaks in
// the middle of a pipe.
type failingStream struct {
	routes.Stream
	done bool
}

func (s *failingStream) Next() bool {
	if s.done {
		return false
	}
	if s.Stream.Next() {
		return true
	}
	s.done = true
	return false
}

func (s *failingStream) Err() error { return errors.New("source connection reset") }

// TestEmulator_FailedLoadKeepsTable: a pipe that fails mid-stream, and a
// file the server rejects, abort the run; the table keeps its rows and no
// staging or lock table is left.
func TestEmulator_FailedLoadKeepsTable(t *testing.T) {
	f := bigquerytest.New(t)
	e := openEndpoint(t, f, "format=json")
	info := typesInfo("keep")
	if err := load(t, e, info, "keep", routes.ModeReplace, "2", []int64{1, 2}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	t.Run("source_fails_mid_pipe", func(t *testing.T) {
		st, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Name: "keep"}, Mode: routes.ModeReplace, RunID: routes.NewRunID()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Write(ctx, stream(t, info, 3)); err != nil {
			t.Fatalf("first pipe: %v", err)
		}
		if _, err := st.Write(ctx, &failingStream{Stream: stream(t, info, 4, 102)}); err == nil {
			t.Fatal("a pipe whose source failed reported success")
		}
		if err := st.Abort(ctx); err != nil {
			t.Fatalf("abort: %v", err)
		}
		expectTypes(t, f, "keep", 1, 2)
	})

	t.Run("row_refused_mid_load", func(t *testing.T) {
		// A JSON column holding text that is not JSON: the encoder refuses
		// it in the middle of the upload, whose load job then never
		// completes, so nothing lands.
		bad := &routes.TableInfo{SourceID: "test#bad", Ref: routes.TableRef{Name: "bad"}, Columns: []routes.Column{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "doc", Type: arrow.BinaryTypes.String, NativeType: "jsonb", Nullable: true}}}
		if err := loadJSON(t, e, bad, "bad", `[{"id": 1, "doc": "{\"a\": 1}"}]`); err != nil {
			t.Fatal(err)
		}
		if err := loadJSON(t, e, bad, "bad", `[{"id": 2, "doc": "{\"a\": 2}"}]`, `[{"id": 3, "doc": "not json {"}]`); err == nil {
			t.Fatal("a load of invalid JSON succeeded")
		}
		got := f.Query(t, ctx, "SELECT id FROM "+f.Ident("bad")+" ORDER BY id")
		if len(got) != 1 || bigquerytest.Int(t, got[0][0]) != 1 {
			t.Fatalf("after a failed load the table holds %v, want the old row 1", got)
		}
		if left := f.Staging(t, ctx, "bad"); len(left) > 0 {
			t.Fatalf("staging or lock tables left behind: %v", left)
		}
	})
}

// loadJSON replaces table with pipes given as Arrow JSON.
func loadJSON(t *testing.T, e *Endpoint, info *routes.TableInfo, table string, pipes ...string) error {
	t.Helper()
	ctx := t.Context()
	st, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Name: table}, Mode: routes.ModeReplace, RunID: routes.NewRunID()})
	if err != nil {
		return err
	}
	for _, p := range pipes {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, info.Schema(), strings.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		rr, _ := array.NewRecordReader(info.Schema(), []arrow.RecordBatch{rec})
		rec.Release()
		if _, err := st.Write(ctx, rr); err != nil {
			return errors.Join(err, st.Abort(ctx))
		}
	}
	return st.Commit(ctx, routes.State{SourceID: info.SourceID})
}

// TestEmulator_Lock: a second run on a held table is refused with a
// LockedError naming the holder (exit 75), and goes ahead once the holder
// committed. Taking a dead holder's lease over is not tested: the emulator
// ignores tables.patch, so heartbeats and claims never land there
// (docs/bigquery.md, Tests).
func TestEmulator_Lock(t *testing.T) {
	f := bigquerytest.New(t)
	ctx := t.Context()
	info := typesInfo("locked")
	opts := func() routes.WriteOptions {
		return routes.WriteOptions{Table: routes.TableRef{Name: "locked"}, Mode: routes.ModeReplace, RunID: routes.NewRunID()}
	}

	t.Run("concurrent_runs_one_wins", func(t *testing.T) {
		// tables.insert is the compare-and-swap: of runs racing for a
		// free table exactly one gets the lock.
		const runs = 4
		type result struct {
			st  routes.Stage
			err error
		}
		results := make(chan result, runs)
		for range runs {
			e := openEndpoint(t, f, "format=json")
			go func() {
				st, err := e.Prepare(ctx, info, routes.WriteOptions{Table: routes.TableRef{Name: "race"}, Mode: routes.ModeReplace, RunID: routes.NewRunID()})
				results <- result{st, err}
			}()
		}
		var won []routes.Stage
		for range runs {
			r := <-results
			switch {
			case r.err == nil:
				won = append(won, r.st)
			case !errors.Is(r.err, routes.ErrLocked):
				t.Errorf("a losing run failed with %v, want ErrLocked", r.err)
			}
		}
		for _, st := range won {
			if err := st.Abort(ctx); err != nil {
				t.Error(err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("%d of %d concurrent runs took the lock, want 1", len(won), runs)
		}
		if left := f.Staging(t, ctx, "race"); len(left) > 0 {
			t.Fatalf("left behind: %v", left)
		}
	})

	t.Run("live_holder_refuses", func(t *testing.T) {
		e := openEndpoint(t, f, "format=json")
		o := opts()
		a, err := e.Prepare(ctx, info, o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openEndpoint(t, f, "format=json").Prepare(ctx, info, opts())
		var le *routes.LockedError
		if !errors.Is(err, routes.ErrLocked) || !errors.As(err, &le) || le.RunID != o.RunID {
			t.Fatalf("second Prepare: %v, want a LockedError naming run %s", err, o.RunID)
		}
		if _, err := a.Write(ctx, stream(t, info, 1)); err != nil {
			t.Fatal(err)
		}
		if err := a.Commit(ctx, routes.State{SourceID: info.SourceID}); err != nil {
			t.Fatalf("the holder's commit: %v", err)
		}
		expectTypes(t, f, "locked", 1)
		// Released: the next run goes ahead.
		if err := load(t, e, info, "locked", routes.ModeAppend, "", []int64{3}); err != nil {
			t.Fatalf("run after release: %v", err)
		}
		expectTypes(t, f, "locked", 1, 3)
	})
}

// TestEmulator_ParquetLoad drives the default format's Write end to end: a
// replace whose pipes are Parquet files. Only the columns whose values the
// emulator's Parquet loader keeps are compared — INT64, FLOAT64, BOOL,
// STRING and BYTES (decoded right here, unlike NDJSON); it mangles NUMERIC,
// DATE, TIMESTAMP and DATETIME (docs/bigquery.md, Tests).
func TestEmulator_ParquetLoad(t *testing.T) {
	f := bigquerytest.New(t)
	e := openEndpoint(t, f, "format=parquet")
	info := typesInfo("pq")
	if err := load(t, e, info, "pq", routes.ModeReplace, "3", []int64{1, 2}, []int64{3}); err != nil {
		t.Fatalf("replace: %v", err)
	}
	got := f.Query(t, t.Context(), "SELECT id, i32, f64, b, s, bin FROM "+f.Ident("pq")+" ORDER BY id")
	if len(got) != 3 {
		t.Fatalf("pq has %d rows, want 3", len(got))
	}
	for i, id := range []int64{1, 2, 3} {
		w := typesRows[id].want
		want := []bq.Value{w[0], w[1], w[4], w[5], w[6], w[7]}
		for c := range want {
			g := got[i][c]
			if wb, ok := want[c].([]byte); ok {
				if gb, ok := g.([]byte); !ok || string(gb) != string(wb) {
					t.Errorf("row %d column %d: got %#v, want %#v", id, c, g, wb)
				}
				continue
			}
			if g != want[c] {
				t.Errorf("row %d column %d: got %#v, want %#v", id, c, g, want[c])
			}
		}
	}
	if left := f.Staging(t, t.Context(), "pq"); len(left) > 0 {
		t.Errorf("staging or lock tables left behind: %v", left)
	}
	expectState(t, e, info, "pq", "3", 3)
}
