package weir_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	_ "github.com/weirhq/weir/routes/all"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/routes/where"
)

// readFilter is the filter of the tests below, and the same predicate in Go.
const readFilter = "(amount > 100 AND flag = TRUE) OR (name IS NULL AND id <= 50) OR ts >= '2024-01-07 01:00:00'"

func keeps(r routestest.Row) bool {
	amountOver := r.Amount != nil && bigger(*r.Amount, "100")
	return (amountOver && r.Flag != nil && *r.Flag) || (r.Name == nil && r.ID <= 50) ||
		(r.TS != nil && !r.TS.Before(time.Date(2024, 1, 7, 1, 0, 0, 0, time.UTC)))
}

// bigger compares decimal texts (the conformance amounts are plain decimals).
func bigger(a, b string) bool {
	var x, y float64
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return x > y
}

func expected(lo, hi int64) []string { return expectedBy(lo, hi, keeps) }

func expectedBy(lo, hi int64, keep func(routestest.Row) bool) []string {
	var out []string
	for _, r := range routestest.Rows(lo, hi) {
		if keep(r) {
			out = append(out, idAmount(r.ID, r.Amount))
		}
	}
	return out
}

func idAmount(id int64, amount *string) string {
	a := "NULL"
	if amount != nil {
		a = *amount
	}
	return strings.TrimSpace(strings.Join([]string{strconv.FormatInt(id, 10), a}, " "))
}

// collect drains a reader into sorted "id amount" lines.
func collect(t *testing.T, rr array.RecordReader) []string {
	t.Helper()
	var out []string
	for rr.Next() {
		rec := rr.RecordBatch()
		if got := rec.Schema().Field(0).Name + "," + rec.Schema().Field(1).Name; rec.NumCols() != 2 || got != "id,amount" {
			t.Fatalf("columns %s, want id,amount", got)
		}
		ids, amounts := rec.Column(0).(*array.Int64), rec.Column(1)
		for i := range int(rec.NumRows()) {
			var a *string
			if amounts.IsValid(i) {
				s := amounts.(*array.Decimal128).Value(i).ToString(2)
				a = &s
			}
			out = append(out, idAmount(ids.Value(i), a))
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("read: %v", err)
	}
	sort.Slice(out, func(i, j int) bool { return leadingID(out[i]) < leadingID(out[j]) })
	return out
}

func leadingID(s string) int64 {
	id, _ := strconv.ParseInt(strings.Fields(s)[0], 10, 64)
	return id
}

func TestRead_ProjectionAndFilter(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	for _, mk := range []func(testing.TB, ...string) *objstoretest.Fixture{objstoretest.NewFile, objstoretest.NewS3} {
		lake := mk(t, "format=csv.gz", "file_bytes=8000")
		lake.Create(t, ctx, "orders", routestest.Rows(1, 1000))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rr, err := weir.Read(ctx, lake.URL(), "orders", weir.ReadOptions{Columns: []string{"id", "amount"}, Where: readFilter, Parallel: 4, ChunkBytes: 4 << 10, Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, rr)
		rr.Release()
		mem.AssertSize(t, 0)
		if want := expected(1, 1000); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: got %d rows, want %d:\n%v\n%v", lake.URL(), len(got), len(want), head(got), head(want))
		}
	}
}

func head(s []string) []string { return s[:min(len(s), 8)] }

func TestRead_BadInput(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 10))
	for _, opts := range []weir.ReadOptions{
		{Columns: []string{"nope"}},
		{Columns: []string{"id", "id"}},
		{Where: "nope > 1"},
		{Where: "amount > 'x'"},
		{Where: "amount >"},
	} {
		if _, err := weir.Read(ctx, lake.URL(), "orders", opts); !errors.Is(err, routes.ErrBadInput) {
			t.Errorf("%+v: got %v, want bad input", opts, err)
		}
	}
	if _, err := weir.Read(ctx, lake.URL(), "missing", weir.ReadOptions{}); !errors.Is(err, routes.ErrNotFound) {
		t.Errorf("missing table: got %v, want not found", err)
	}
}

// Releasing a reader mid-stream stops its pipes and frees everything.
func TestRead_ReleaseEarly(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t, "file_bytes=4000")
	lake.Create(t, ctx, "orders", routestest.Rows(1, 5000))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := weir.Read(ctx, lake.URL(), "orders", weir.ReadOptions{Parallel: 3, ChunkBytes: 1 << 10, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatalf("no first batch: %v", rr.Err())
	}
	rr.Release()
	mem.AssertSize(t, 0)
}

// A source that takes the filter gets the safe part as SQL; the result is
// exact even though this one ignores it and returns every row.
func TestRead_PushdownNeverChangesTheResult(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewFile(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 300))
	pushdownTarget = lake.URL()
	filter := "(amount > 100 AND flag = TRUE AND ts >= '2024-01-07 01:00:00') OR (name IS NULL AND id <= 50)"
	keep := func(r routestest.Row) bool {
		late := r.TS != nil && !r.TS.Before(time.Date(2024, 1, 7, 1, 0, 0, 0, time.UTC))
		return (r.Amount != nil && bigger(*r.Amount, "100") && r.Flag != nil && *r.Flag && late) || (r.Name == nil && r.ID <= 50)
	}
	rr, err := weir.Read(ctx, "pushdowntest://x", "orders", weir.ReadOptions{Columns: []string{"id", "amount"}, Where: filter})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, rr)
	rr.Release()
	if want := expectedBy(1, 300, keep); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	pushed.Lock()
	defer pushed.Unlock()
	want := `(("amount" > 100 AND "flag" = TRUE) OR ("name" IS NULL AND "id" <= 50))`
	if pushed.cond != want {
		t.Fatalf("pushed %q, want %q (timestamps stay on the client)", pushed.cond, want)
	}
}

var (
	pushdownTarget string
	pushed         struct {
		sync.Mutex
		cond string
	}
)

// pushdownSource wraps the lake and records the condition it is handed.
type pushdownSource struct{ routes.Source }

func (pushdownSource) PushDown(e where.Expr, schema *arrow.Schema) string {
	cond, _ := where.SQL(e, schema, where.Postgres)
	return cond
}

func (p pushdownSource) ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, e where.Expr) (routes.Stream, error) {
	pushed.Lock()
	pushed.cond = p.PushDown(e, r.Table.Schema())
	pushed.Unlock()
	return p.Read(ctx, r, opts)
}

func init() {
	routes.Register("pushdowntest", func(ctx context.Context, u *routes.URL) (routes.Endpoint, error) {
		s, err := routes.OpenSource(ctx, pushdownTarget)
		return pushdownSource{s}, err
	})
}

func TestReadTo_ParquetAndCSV(t *testing.T) {
	ctx := routestest.Context(t, time.Minute)
	lake := objstoretest.NewGCS(t)
	lake.Create(t, ctx, "orders", routestest.Rows(1, 500))
	var pq bytes.Buffer
	rep, err := weir.ReadTo(ctx, lake.URL(), "orders", &pq, "parquet", weir.ReadOptions{Columns: []string{"id", "amount"}, Where: readFilter})
	if err != nil {
		t.Fatal(err)
	}
	want := expected(1, 500)
	if rep.Rows != int64(len(want)) || rep.Bytes != int64(pq.Len()) {
		t.Fatalf("report %+v; want %d rows, %d bytes", rep, len(want), pq.Len())
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(pq.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, _ := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 100}, memory.DefaultAllocator)
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, rr); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("parquet output: %d rows, want %d", len(got), len(want))
	}
	rr.Release()
	var csv bytes.Buffer
	if _, err := weir.ReadTo(ctx, lake.URL(), "orders", &csv, "csv", weir.ReadOptions{Columns: []string{"id", "amount"}, Where: "id <= 3"}); err != nil {
		t.Fatal(err)
	}
	if got := csv.String(); !strings.HasPrefix(got, "id,amount\r\n") || !sameLines(got, "id,amount\r\n1,-0.01\r\n2,9999999999.99\r\n3,39.03\r\n") {
		t.Fatalf("csv output %q", got)
	}
}

// sameLines compares CSV output whose rows may come in any order.
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\r\n"), strings.Split(b, "\r\n")
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, "|") == strings.Join(y, "|")
}

// From PostgreSQL, through its pipes: the same rows as from the lake.
func TestRead_Postgres(t *testing.T) {
	pg := postgrestest.New(t)
	ctx := routestest.Context(t, time.Minute)
	pg.Create(t, ctx, "orders", routestest.Rows(1, 800))
	rr, err := weir.Read(ctx, pg.URL(), pg.Ref("orders"), weir.ReadOptions{Columns: []string{"id", "amount"}, Where: readFilter, Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if got, want := collect(t, rr), expected(1, 800); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
}
