package weir_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/cdc/cdctest"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// whereRow is one row of the edge table of TestReadWhere_AgreesWithSource.
type whereRow struct {
	id int
	f  *float64
	s  *string
	n  *int64
}

func fp(f float64) *float64 { return &f }
func sp(s string) *string   { return &s }
func np(n int64) *int64     { return &n }

// whereRows: NaN, ±Infinity, -0, NULL; strings differing in case, accent,
// trailing space, empty; integers at the edges.
var whereRows = []whereRow{
	{1, fp(math.NaN()), sp("abc"), np(math.MinInt64)},
	{2, fp(math.Inf(1)), sp("ABC"), np(math.MaxInt64)},
	{3, fp(math.Inf(-1)), sp("abc "), np(0)},
	{4, fp(0.3), sp("ábc"), np(-1)},
	{5, fp(math.Copysign(0, -1)), sp(""), np(1)},
	{6, nil, nil, nil},
	{7, fp(0.30000000000000004), sp("abd"), np(3)},
	{8, fp(-1e308), sp("b"), np(-3)},
	{9, fp(0), sp("a"), np(2)},
}

// whereFilters are compared on every source; %s is a float literal set
// (MySQL has no NaN or infinity: the float filters run there over finite
// rows only).
var whereFilters = []string{
	"f > 0.3", "f >= 0.3", "f < 0.3", "f <= 0.3", "f = 0.3", "f != 0.3", "f > 0", "f = 0", "f < 1e308", "NOT f > 0.3", "f > 0.3 OR f IS NULL",
	"s = 'abc'", "s != 'abc'", "s < 'abd'", "s > 'abc'", "s >= 'ABC'", "s = ''", "s <= ''", "NOT s = 'abc'",
	"n > 0", "n <= -1", "n != 0", "n = 9223372036854775807", "n < -9223372036854775807",
	"s = 'abc' AND n <= 0", "f > 0.3 AND s != 'b'",
}

// TestReadWhere_AgreesWithSource: weir read --where keeps exactly the rows
// the source's own SELECT … WHERE returns, over NaN, ±Infinity, -0, NULL,
// strings a collation orders differently from bytes, and integers at the
// edges, for every comparison operator: PostgreSQL (NaN above every
// number), MariaDB (case-insensitive, space-padding collation),
// ClickHouse (IEEE NaN). Iceberg has no SQL of its own: it is held to
// PostgreSQL's answers over the same rows (NaN above every number, strings
// by bytes: the test server's collation is C.UTF-8). weir's client-side
// re-check once dropped NaN rows for `f > 0.3` that PostgreSQL returns.
func TestReadWhere_AgreesWithSource(t *testing.T) {
	ctx := routestest.Context(t, 2*time.Minute)
	pg := cdctest.Open(t, ctx, "postgres")
	pg.Exec(t, ctx, "CREATE TABLE "+pg.Table("w")+" (id int PRIMARY KEY, f float8, s text, n int8)")
	pg.Exec(t, ctx, "INSERT INTO "+pg.Table("w")+" VALUES "+whereValues(whereRows, "postgres"))
	pgAnswer := func(t *testing.T, f string) []string {
		return strings.Split(pg.Query(t, ctx, "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM "+pg.Table("w")+" WHERE "+f), ",")
	}
	check := func(t *testing.T, url, table string, answer func(t *testing.T, f string) []string, skip func(string) bool) {
		for _, f := range whereFilters {
			if skip != nil && skip(f) {
				continue
			}
			want := answer(t, f)
			if len(want) == 1 && want[0] == "" {
				want = nil
			}
			got := readIDs(t, ctx, url, table, f)
			if !slices.Equal(got, want) {
				t.Errorf("--where %q: weir read ids %v, the source's own SELECT %v", f, got, want)
			}
		}
	}
	t.Run("postgres", func(t *testing.T) { check(t, pg.URL, pg.Schema+".w", pgAnswer, nil) })
	t.Run("mysql", func(t *testing.T) {
		my := cdctest.Open(t, ctx, "mysql")
		var finite []whereRow
		for _, r := range whereRows {
			if r.f == nil || !math.IsNaN(*r.f) && !math.IsInf(*r.f, 0) {
				finite = append(finite, r)
			}
		}
		my.Exec(t, ctx, "CREATE TABLE "+my.Table("w")+" (id INT PRIMARY KEY, f DOUBLE, s VARCHAR(10), n BIGINT)")
		my.Exec(t, ctx, "INSERT INTO "+my.Table("w")+" VALUES "+whereValues(finite, "mysql"))
		check(t, my.URL, my.Schema+".w", func(t *testing.T, f string) []string {
			q := "SELECT COALESCE(GROUP_CONCAT(id ORDER BY id SEPARATOR ','), '') FROM " + my.Table("w") + " WHERE " + strings.ReplaceAll(f, "!=", "<>")
			return strings.Split(my.Query(t, ctx, q), ",")
		}, nil)
	})
	t.Run("clickhouse", func(t *testing.T) {
		ch := cdctest.Open(t, ctx, "clickhouse")
		ch.Exec(t, ctx, "CREATE TABLE "+ch.Table("w")+" (id Int32, f Nullable(Float64), s Nullable(String), n Nullable(Int64)) ENGINE = MergeTree ORDER BY id")
		ch.Exec(t, ctx, "INSERT INTO "+ch.Table("w")+" VALUES "+whereValues(whereRows, "clickhouse"))
		check(t, ch.URL, ch.Schema+".w", func(t *testing.T, f string) []string {
			q := "SELECT arrayStringConcat(arrayMap(x -> toString(x), arraySort(groupArray(id))), ',') FROM " + ch.Table("w") + " WHERE " + f
			return strings.Split(ch.Query(t, ctx, q), ",")
		}, nil)
	})
	t.Run("iceberg", func(t *testing.T) {
		url, ns := icebergWhereTable(t, ctx)
		check(t, url, ns+".w", pgAnswer, nil)
	})
}

// whereValues renders rows as a VALUES list in kind's SQL.
func whereValues(rows []whereRow, kind string) string {
	var out []string
	for _, r := range rows {
		f, s, n := "NULL", "NULL", "NULL"
		if r.f != nil {
			switch x := *r.f; {
			case math.IsNaN(x):
				f = map[string]string{"postgres": "'NaN'", "clickhouse": "nan"}[kind]
			case math.IsInf(x, 1):
				f = map[string]string{"postgres": "'Infinity'", "clickhouse": "inf"}[kind]
			case math.IsInf(x, -1):
				f = map[string]string{"postgres": "'-Infinity'", "clickhouse": "-inf"}[kind]
			case x == 0 && math.Signbit(x):
				f = map[string]string{"postgres": "'-0'", "clickhouse": "-0.", "mysql": "-0e0"}[kind]
			default:
				f = strconv.FormatFloat(x, 'g', -1, 64)
			}
		}
		if r.s != nil {
			s = lit(*r.s)
		}
		if r.n != nil {
			n = strconv.FormatInt(*r.n, 10)
		}
		out = append(out, fmt.Sprintf("(%d, %s, %s, %s)", r.id, f, s, n))
	}
	return strings.Join(out, ", ")
}

// readIDs is weir.Read's ids for a filter, sorted as text of numbers.
func readIDs(t *testing.T, ctx context.Context, url, table, filter string) []string {
	t.Helper()
	rdr, err := weir.Read(ctx, url, table, weir.ReadOptions{Columns: []string{"id"}, Where: filter})
	if err != nil {
		t.Fatalf("--where %q: %v", filter, err)
	}
	defer rdr.Release()
	var ids []int
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			v, _ := strconv.Atoi(rec.Column(0).ValueStr(i))
			ids = append(ids, v)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("--where %q: %v", filter, err)
	}
	sort.Ints(ids)
	var out []string
	for _, id := range ids {
		out = append(out, strconv.Itoa(id))
	}
	return out
}

// icebergWhereTable writes whereRows with iceberg-go into a new table w.
func icebergWhereTable(t *testing.T, ctx context.Context) (string, string) {
	f := icebergtest.New(t)
	cat := f.Endpoint().Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 2, Name: "f", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 3, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int64})
	tbl, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, "w"}, sc, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, r := range whereRows {
		b.Field(0).(*array.Int32Builder).Append(int32(r.id))
		if r.f == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(*r.f)
		}
		if r.s == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(*r.s)
		}
		if r.n == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(*r.n)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if _, err := tbl.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	return f.URL(), f.Namespace
}
