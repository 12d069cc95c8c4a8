package iceberg_test

import (
	"bytes"
	"net/url"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	iceberggo "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
)

// TestAttackS10_DictionaryOnOddlyNamedStrings: the dictionary rule of
// tables weir creates (TestDestination_DictionaryOnlyOnStrings) holds for
// string columns whose names are not plain identifiers. The property key
// write.parquet.dict-encoding-enabled.column.<name> carries the Iceberg
// name, but the writer matches it against the Parquet column path, which
// is the sanitized name ("a.b" is written as a_x2Eb, "sp ace" as
// sp_x20ace): those columns got no dictionary, "UPPER" and "ünï" did.
func TestAttackS10_DictionaryOnOddlyNamedStrings(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	cat := f.Endpoint().Catalog()
	if err := cat.CreateNamespace(ctx, table.Identifier{f.Namespace}, nil); err != nil {
		t.Fatal(err)
	}
	names := []string{"UPPER", "a.b", "sp ace", "ünï"}
	fields := []iceberggo.NestedField{{ID: 1, Name: "id", Type: iceberggo.PrimitiveTypes.Int64, Required: true}}
	for i, n := range names {
		fields = append(fields, iceberggo.NestedField{ID: i + 2, Name: n, Type: iceberggo.PrimitiveTypes.String})
	}
	src, err := cat.CreateTable(ctx, table.Identifier{f.Namespace, "src"}, iceberggo.NewSchema(0, fields...),
		catalog.WithProperties(iceberggo.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(src.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	for i := range 300 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		for c := range names {
			b.Field(c + 1).(*array.StringBuilder).Append([]string{"x", "y", "z"}[i%3])
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	rdr.Release()
	rec.Release()

	spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: routes.ModeReplace, Window: noWindow}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatal(err)
	}
	tasks, err := loadTable(t, ctx, f, "dst").Scan().PlanFiles(ctx)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("data files: %v (%d)", err, len(tasks))
	}
	for _, task := range tasks {
		u, err := url.Parse(task.File.FilePath())
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
		sc := pr.MetaData().Schema
		rg := pr.MetaData().RowGroup(0)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			col := sc.Column(c)
			if isString := col.LogicalType().Equals(schema.StringLogicalType{}); cc.HasDictionaryPage() != isString {
				t.Errorf("column %q (Parquet path %s): dictionary %v, want %v", col.Name(), col.Path(), cc.HasDictionaryPage(), isString)
			}
		}
		pr.Close()
	}
}
