package objstore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

const sampleCSV = "id,code,price,at,zoned,mixed,note\r\n" +
	"1,007,1.5,2024-01-02,2024-01-02T03:04:05Z,2024-01-02,plain\r\n" +
	"2,12,-2,2024-01-02 03:04:05.25,2024-01-02 04:04:05+01:00,2024-01-02T00:00:00Z,\"with, comma\"\r\n" +
	"3,,3e2,,,x,\"line\nbreak \"\"quoted\"\"\"\r\n" +
	"4,5,,2024-02-29T23:59:59,2024-02-29T23:59:59Z,,\"\"\r\n"

func TestProbe_CSVInference(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t)
	f.Put(t, "in/sample.csv", []byte(sampleCSV))
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(sampleCSV))
	w.Close()
	f.Put(t, "in/sample.csv.gz", gz.Bytes())
	for _, table := range []string{"in/sample.csv", "in/sample.csv.gz"} {
		info := probe(t, ctx, f, table)
		want := "id:int64 code:utf8 price:float64 at:timestamp[us] zoned:timestamp[us, tz=UTC] mixed:utf8 note:utf8"
		if got := describeColumns(info); got != want {
			t.Fatalf("%s: columns\n got %s\nwant %s", table, got, want)
		}
		got := readText(t, ctx, f, info)
		wantRows := []string{
			"1|007|1.5|2024-01-02 00:00:00|2024-01-02 03:04:05Z|2024-01-02|plain",
			"2|12|-2|2024-01-02 03:04:05.25|2024-01-02 03:04:05Z|2024-01-02T00:00:00Z|with, comma",
			"3|NULL|300|NULL|NULL|x|line\nbreak \"quoted\"",
			"4|5|NULL|2024-02-29 23:59:59|2024-02-29 23:59:59Z|NULL|",
		}
		if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
			t.Fatalf("%s: rows\n got %q\nwant %q", table, got, wantRows)
		}
	}
}

func probe(t *testing.T, ctx context.Context, f *objstoretest.Fixture, table string) *routes.TableInfo {
	t.Helper()
	info, err := f.Endpoint(t, ctx).Probe(ctx, routes.TableRef{Name: table})
	if err != nil {
		t.Fatalf("probe %s: %v", table, err)
	}
	return info
}

func describeColumns(info *routes.TableInfo) string {
	var parts []string
	for _, c := range info.Columns {
		parts = append(parts, c.Name+":"+c.Type.String())
	}
	return strings.Join(parts, " ")
}

// readText reads a table into "a|b|c" lines, NULL for nulls.
func readText(t *testing.T, ctx context.Context, f *objstoretest.Fixture, info *routes.TableInfo) []string {
	t.Helper()
	var out []string
	err := objstoretest.ReadAll(ctx, f.Endpoint(t, ctx), info, func(rec arrow.RecordBatch) error {
		for i := range int(rec.NumRows()) {
			var cells []string
			for _, c := range rec.Columns() {
				cells = append(cells, cellText(c, i))
			}
			out = append(out, strings.Join(cells, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return out
}

func cellText(c arrow.Array, i int) string {
	if c.IsNull(i) {
		return "NULL"
	}
	if ts, ok := c.(*array.Timestamp); ok {
		typ := ts.DataType().(*arrow.TimestampType)
		s := ts.Value(i).ToTime(typ.Unit).Format("2006-01-02 15:04:05.999999")
		if typ.TimeZone != "" {
			s += "Z"
		}
		return s
	}
	return c.ValueStr(i)
}

// A Parquet file written by another tool, with several row groups: the
// plan splits it by row groups across pipes, and every row is read once.
func TestPlan_ForeignParquetSplitsRowGroups(t *testing.T) {
	ctx := testContext(t)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			f := s.new(t)
			rec := routestest.Batch(memory.DefaultAllocator, routestest.Rows(1, 1000))
			defer rec.Release()
			var buf bytes.Buffer
			props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100))
			tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
			defer tbl.Release()
			if err := pqarrow.WriteTable(tbl, &buf, 100, props, pqarrow.DefaultWriterProps()); err != nil {
				t.Fatal(err)
			}
			f.Put(t, "lake/orders.parquet", buf.Bytes())
			info := probe(t, ctx, f, "lake/orders.parquet")
			ranges, err := f.Endpoint(t, ctx).Plan(ctx, info, routes.PlanOptions{Pipes: 4})
			if err != nil || len(ranges) != 4 {
				t.Fatalf("plan: %d ranges, %v; want 4", len(ranges), err)
			}
			got, _ := f.Read(t, ctx, "lake/orders.parquet")
			if len(got) != 1000 || got[999].String() != routestest.Rows(1000, 1000)[0].String() {
				t.Fatalf("read %d rows", len(got))
			}
		})
	}
}

// Read honours the cursor window, and MaxCursor finds the maximum.
func TestRead_CursorWindow(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t)
	f.Create(t, ctx, "t", routestest.Rows(1, 300))
	ep := f.Endpoint(t, ctx)
	info := probe(t, ctx, f, "t")
	for _, c := range []struct{ col, want string }{{"id", "300"}, {"amount", "9999999999.99"}, {"ts", "2024-01-21 03:23:00.000000"}, {"name", "ünïcødé ✓ 日本"}} {
		got, ok, err := ep.MaxCursor(ctx, info, c.col)
		if err != nil || !ok || got != c.want {
			t.Errorf("MaxCursor(%s) = %q, %v, %v; want %q", c.col, got, ok, err, c.want)
		}
	}
	ranges, _ := ep.Plan(ctx, info, routes.PlanOptions{Pipes: 2})
	var ids []int64
	for _, r := range ranges {
		s, err := ep.Read(ctx, r, routes.ReadOptions{Columns: []string{"name"}, Cursor: "id", After: "120", Until: "125"})
		if err != nil {
			t.Fatal(err)
		}
		for s.Next() {
			if s.RecordBatch().NumCols() != 1 {
				t.Fatalf("projection kept %d columns", s.RecordBatch().NumCols())
			}
			ids = append(ids, s.RecordBatch().NumRows())
		}
		s.Release()
	}
	var n int64
	for _, k := range ids {
		n += k
	}
	if n != 5 {
		t.Fatalf("window (120, 125] read %d rows, want 5", n)
	}
}

// An inferred float64 or int64 column never rounds or rewrites a value: a
// number a float64 cannot hold exactly keeps its column text, and a row past
// the first InferRows that does not fit its column fails the read.
func TestProbe_CSVInferenceExact(t *testing.T) {
	ctx := testContext(t)
	f := objstoretest.NewFile(t)
	f.Put(t, "in/exact.csv", []byte("id,big,long,short,tiny,shortest\n"+
		"1,18446744073709551615,12345678901234567.5,0.1,1e-400,0.30000000000000004\n"+
		"2,1,1,19.99,5e-324,1e20\n"))
	info := probe(t, ctx, f, "in/exact.csv")
	want := "id:int64 big:utf8 long:utf8 short:float64 tiny:utf8 shortest:float64"
	if got := describeColumns(info); got != want {
		t.Fatalf("columns\n got %s\nwant %s", got, want)
	}
	wantRows := "1|18446744073709551615|12345678901234567.5|0.1|1e-400|0.30000000000000004\n" +
		"2|1|1|19.99|5e-324|1e+20"
	if got := strings.Join(readText(t, ctx, f, info), "\n"); got != wantRows {
		t.Fatalf("rows\n got %q\nwant %q", got, wantRows)
	}

	for _, tc := range []struct{ name, first, late, want string }{
		{"float", "1.5", "12345678901234567.5", `"12345678901234567.5" does not fit float64 exactly`},
		{"int", "7", "007", `"007" does not fit int64 exactly`},
	} {
		var b strings.Builder
		b.WriteString("id,v\n")
		for i := range objstore.InferRows {
			fmt.Fprintf(&b, "%d,%s\n", i, tc.first)
		}
		fmt.Fprintf(&b, "%d,%s\n", objstore.InferRows, tc.late)
		name := "in/late_" + tc.name + ".csv"
		f.Put(t, name, []byte(b.String()))
		info := probe(t, ctx, f, name)
		err := objstoretest.ReadAll(ctx, f.Endpoint(t, ctx), info, func(arrow.RecordBatch) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: a late row that does not fit: got %v, want an error with %s", tc.name, err, tc.want)
		}
	}
}
