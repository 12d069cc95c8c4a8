package iceberg_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	iceberggo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
	wice "github.com/weirhq/weir/routes/iceberg"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
	"github.com/weirhq/weir/routes/where"
)

// TestDataFiles_WeirEncoder: weir writes a table's data files with its own
// Parquet encoder (routes/fileformat). The files carry the Iceberg field id
// on every field (list elements too) and the Iceberg spec's physical types
// (decimals by precision as INT32, INT64 or FIXED_LEN_BYTE_ARRAY,
// timestamps in micros adjusted to UTC only for timestamptz, uuid as a
// 16-byte UUID, binary, date); iceberg-go reads every value back as it
// reads the files its own writer wrote; and the DataFile statistics
// (value and null counts, lower and upper bounds, strings and binaries
// truncated to 16) equal those of iceberg-go's writer, which a table whose
// codec fileformat does not write (gzip) still gets. --where pushdown
// prunes by them.
func TestDataFiles_WeirEncoder(t *testing.T) {
	pg, ice := postgrestest.New(t), icebergtest.New(t)
	ctx := testContext(t)
	long := "ünïcødé and then some more text ✓"
	pg.Exec(t, ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, n9 numeric(9,2), n18 numeric(18,4), n38 numeric(38,10),
  ts timestamp, tz timestamptz, u uuid, b bytea, d date, s text, i int, arr int[], f double precision, flag boolean)`, pg.Ref("src")),
		fmt.Sprintf(`INSERT INTO %s VALUES
  (1, -9999999.99, 12345678901234.5678, 1234567890123456789012345678.0123456789, '2024-01-01 12:34:56.789012', '2024-01-01 12:34:56.789012+02',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\xdeadbeef00112233445566778899aabbccddeeff', '2024-02-29', '%s', -5, '{1,NULL,3}', -2.5, true),
  (2, 0.01, -1, -0.0000000001, '1969-12-31 23:59:59.999999', '1900-01-01 00:00:00+00',
   '00000000-0000-0000-0000-000000000001', '\x00', '0001-01-01', 'abc', 2147483647, '{}', 1e300, false),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`, pg.Ref("src"), long))
	copyOne := func(dst string) {
		t.Helper()
		spec := routes.CopySpec{Table: ref(pg.Ref("src")), DestTable: ice.TableRef(dst), Mode: routes.ModeReplace,
			Budget: routes.Budget{Parallel: 1, ChunkBytes: 64 << 10}}
		if _, err := copyURLs(ctx, pg.URL(), ice.URL(), spec); err != nil {
			t.Fatalf("copy into %s: %v", dst, err)
		}
	}
	copyOne("weir")
	copyOne("igo")
	igo := loadTable(t, ctx, ice, "igo")
	tx := igo.NewTransaction()
	if err := tx.SetProperties(iceberggo.Properties{table.ParquetCompressionKey: "gzip"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	copyOne("igo") // iceberg-go's writer: fileformat writes no gzip

	weirFile, weirMeta := onlyDataFile(t, ctx, ice, "weir")
	igoFile, igoMeta := onlyDataFile(t, ctx, ice, "igo")
	if c := codec(t, weirMeta); c != compress.Codecs.Zstd {
		t.Fatalf("weir's file is compressed with %s, want zstd", c)
	}
	if c := codec(t, igoMeta); c != compress.Codecs.Gzip {
		t.Fatalf("the gzip table's file is compressed with %s: not iceberg-go's writer", c)
	}

	sc := loadTable(t, ctx, ice, "weir").Schema()
	checkFieldIDs(t, sc, weirMeta.Schema)
	for name, want := range map[string]string{
		"n9": "INT32 Decimal(precision=9, scale=2)", "n18": "INT64 Decimal(precision=18, scale=4)",
		"n38": "FIXED_LEN_BYTE_ARRAY Decimal(precision=38, scale=10)",
		"ts":  "INT64 Timestamp(isAdjustedToUTC=false, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
		"tz":  "INT64 Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
		"u":   "FIXED_LEN_BYTE_ARRAY UUID", "b": "BYTE_ARRAY None", "d": "INT32 Date", "s": "BYTE_ARRAY String",
	} {
		col := weirMeta.Schema.Column(weirMeta.Schema.ColumnIndexByName(name))
		if got := col.PhysicalType().String() + " " + col.LogicalType().String(); got != want {
			t.Errorf("column %s is %s, want %s", name, got, want)
		}
	}

	// The same statistics as iceberg-go's writer, field by field.
	stats := func(df iceberggo.DataFile) map[string]any {
		return map[string]any{"count": df.Count(), "values": df.ValueCounts(), "nulls": df.NullValueCounts(),
			"lower": df.LowerBoundValues(), "upper": df.UpperBoundValues()}
	}
	w, g := stats(weirFile), stats(igoFile)
	for k := range w {
		if !reflect.DeepEqual(w[k], g[k]) {
			t.Errorf("%s: weir's file has\n %v\niceberg-go's\n %v", k, w[k], g[k])
		}
	}
	sField, _ := sc.FindFieldByName("s")
	if lo, hi := string(weirFile.LowerBoundValues()[sField.ID]), string(weirFile.UpperBoundValues()[sField.ID]); lo != "abc" || hi != string([]rune(long)[:15])+"o" {
		t.Errorf("s's bounds are %q..%q, want abc..%q (16 characters, the last one incremented)", lo, hi, string([]rune(long)[:15])+"o")
	}
	iField, _ := sc.FindFieldByName("i")
	lo, _ := iceberggo.LiteralFromBytes(iField.Type, weirFile.LowerBoundValues()[iField.ID])
	hi, _ := iceberggo.LiteralFromBytes(iField.Type, weirFile.UpperBoundValues()[iField.ID])
	if fmt.Sprint(lo, hi) != "-5 2147483647" {
		t.Errorf("i's bounds are %v..%v, want -5..2147483647", lo, hi)
	}

	// iceberg-go reads every value of weir's file as it reads its own.
	if a, b := scanText(t, ctx, loadTable(t, ctx, ice, "weir")), scanText(t, ctx, loadTable(t, ctx, ice, "igo")); !slices.Equal(a, b) {
		t.Errorf("weir's file reads back as\n %q\niceberg-go's as\n %q", a, b)
	}

	// --where pushdown prunes by the bounds.
	ep := ice.Endpoint()
	info, err := ep.Probe(ctx, ice.TableRef("weir"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		where string
		files int
	}{{"i = 2", 1}, {"i > 2147483646", 1}, {"i < -5", 0}, {"s = 'abc'", 1}, {"s < 'abc'", 0}, {"s > 'ünïcødé and theo'", 0}, {"s > 'ünïcødé and then'", 1}, {"flag IS NULL", 1}, {"id > 3", 0}} {
		x, err := where.Parse(tc.where)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := wice.ScanFiles(ctx, loadTable(t, ctx, ice, "weir"), info, x); err != nil || n != tc.files {
			t.Errorf("--where %s plans %d files (%v), want %d", tc.where, n, err, tc.files)
		}
	}
}

// onlyDataFile is the one data file of a table's current snapshot, with
// its Parquet footer.
func onlyDataFile(t *testing.T, ctx context.Context, f *icebergtest.Fixture, name string) (iceberggo.DataFile, *metadata.FileMetaData) {
	t.Helper()
	tasks, err := loadTable(t, ctx, f, name).Scan().PlanFiles(ctx)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("%s: %d data files (%v), want 1", name, len(tasks), err)
	}
	u, err := url.Parse(tasks[0].File.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	return tasks[0].File, pr.MetaData()
}

func codec(t *testing.T, md *metadata.FileMetaData) compress.Compression {
	t.Helper()
	cc, err := md.RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	return cc.Compression()
}

// checkFieldIDs: every Iceberg field (nested ones included) is a node of
// the Parquet schema with its field id and its (sanitized) name, and no
// other node but the root and LIST/MAP's repeated groups.
func checkFieldIDs(t *testing.T, sc *iceberggo.Schema, ps *schema.Schema) {
	t.Helper()
	want := map[int]string{}
	written, err := iceberggo.SanitizeColumnNames(sc)
	if err != nil {
		t.Fatal(err)
	}
	for id, f := range mustIndex(t, written) {
		want[id] = f.Name
	}
	got := map[int]string{}
	var walk func(n schema.Node, repeatedGroup bool)
	walk = func(n schema.Node, repeatedGroup bool) {
		if id := n.FieldID(); id >= 0 {
			got[int(id)] = n.Name()
		} else if !repeatedGroup {
			t.Errorf("Parquet node %s has no field id", n.Path())
		}
		if g, ok := n.(*schema.GroupNode); ok {
			for i := range g.NumFields() {
				c := g.Field(i)
				walk(c, c.RepetitionType() == parquet.Repetitions.Repeated && c.Type() == schema.Group)
			}
		}
	}
	root := ps.Root()
	for i := range root.NumFields() {
		walk(root.Field(i), false)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parquet field ids %v, want the Iceberg schema's %v", got, want)
	}
}

func mustIndex(t *testing.T, sc *iceberggo.Schema) map[int]iceberggo.NestedField {
	t.Helper()
	idx, err := iceberggo.IndexByID(sc)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// scanText reads a table with iceberg-go, every value as text, rows in
// file order.
func scanText(t *testing.T, ctx context.Context, tbl *table.Table) []string {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []string
	tr := array.NewTableReader(at, -1)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for r := range int(rec.NumRows()) {
			row := ""
			for c := range int(rec.NumCols()) {
				row += fmt.Sprintf("%s=%s(%s) ", rec.ColumnName(c), rec.Column(c).ValueStr(r), rec.Column(c).DataType())
			}
			out = append(out, row)
		}
	}
	return out
}

// TestDataFiles_NestedFieldIDs: a struct and a list of structs, with
// nested names Iceberg sanitizes ("a.b"), copied from one Iceberg table
// into another by weir's encoder: every nested Parquet field carries its
// Iceberg id and iceberg-go reads the values back unchanged.
func TestDataFiles_NestedFieldIDs(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	cat := f.Endpoint().Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil); err != nil {
		t.Fatal(err)
	}
	inner := &iceberggo.StructType{FieldList: []iceberggo.NestedField{
		{ID: 4, Name: "a.b", Type: iceberggo.PrimitiveTypes.String},
		{ID: 5, Name: "n", Type: iceberggo.PrimitiveTypes.Int32},
	}}
	sc := iceberggo.NewSchemaWithIdentifiers(0, []int{1},
		iceberggo.NestedField{ID: 1, Name: "id", Type: iceberggo.PrimitiveTypes.Int64, Required: true},
		iceberggo.NestedField{ID: 2, Name: "st", Type: inner},
		iceberggo.NestedField{ID: 3, Name: "l", Type: &iceberggo.ListType{ElementID: 6, Element: &iceberggo.StructType{FieldList: []iceberggo.NestedField{
			{ID: 7, Name: "x y", Type: iceberggo.PrimitiveTypes.Int64}}}}})
	src, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, "src"}, sc, catalog.WithProperties(iceberggo.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(src.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, bytes.NewReader([]byte(`[
  {"id": 1, "st": {"a.b": "x", "n": 1}, "l": [{"x y": 10}, {"x y": null}]},
  {"id": 2, "st": null, "l": null},
  {"id": 3, "st": {"a.b": null, "n": -7}, "l": []}]`)))
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	rec.Release()
	spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: routes.ModeReplace, Window: noWindow,
		Budget: routes.Budget{Parallel: 1, ChunkBytes: 64 << 10}}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatal(err)
	}
	dst := loadTable(t, ctx, f, "dst")
	_, md := onlyDataFile(t, ctx, f, "dst")
	checkFieldIDs(t, dst.Schema(), md.Schema)
	if a, b := scanText(t, ctx, loadTable(t, ctx, f, "src")), scanText(t, ctx, dst); !slices.Equal(a, b) {
		t.Errorf("copied rows read back as\n %q\nthe source's are\n %q", b, a)
	}
}

// TestDataFiles_IcebergGoWriterKept: tables fileformat does not write for
// (partitioned, format v1) keep iceberg-go's writer, whose decimals
// are FIXED_LEN_BYTE_ARRAY (weir's encoder writes decimal(12,2) as INT64);
// the rows land either way.
func TestDataFiles_IcebergGoWriterKept(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 300))
	cat := f.Endpoint().Catalog()
	byID := iceberggo.NewPartitionSpec(iceberggo.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_b", Transform: iceberggo.BucketTransform{NumBuckets: 2}})
	for _, tc := range []struct {
		name string
		opts []catalog.CreateTableOpt
	}{
		{"v1", []catalog.CreateTableOpt{catalog.WithProperties(iceberggo.Properties{"format-version": "1"})}},
		{"partitioned", []catalog.CreateTableOpt{catalog.WithProperties(iceberggo.Properties{"format-version": "2"}), catalog.WithPartitionSpec(&byID)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, tc.name}, icebergtest.Schema(), tc.opts...); err != nil {
				t.Fatal(err)
			}
			spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef(tc.name), Mode: routes.ModeAppend, Window: noWindow}
			if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
				t.Fatal(err)
			}
			expectRows(t, ctx, f, tc.name, routestest.Rows(1, 300))
			tasks, err := loadTable(t, ctx, f, tc.name).Scan().PlanFiles(ctx)
			if err != nil || len(tasks) == 0 {
				t.Fatalf("data files: %v (%d)", err, len(tasks))
			}
			for _, task := range tasks {
				u, _ := url.Parse(task.File.FilePath())
				data, err := os.ReadFile(u.Path)
				if err != nil {
					t.Fatal(err)
				}
				pr, err := file.NewParquetReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				ps := pr.MetaData().Schema
				if pt := ps.Column(ps.ColumnIndexByName("amount")).PhysicalType(); pt != parquet.Types.FixedLenByteArray {
					t.Errorf("%s: amount is %s: not iceberg-go's writer", task.File.FilePath(), pt)
				}
				pr.Close()
			}
		})
	}
}
