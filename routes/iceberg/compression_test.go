package iceberg_test

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/iceberg/icebergtest"
	"github.com/weirhq/weir/routes/routestest"
)

// compression= on an iceberg URL writes the run's data files with that
// codec and records it as the table's write.parquet.compression-codec;
// a run without it writes with the table's property (zstd on a table weir
// created); the values stay exact throughout.
func TestDestination_CompressionOption(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 300))
	run := func(query string, mode routes.Mode) {
		t.Helper()
		spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: mode, Window: noWindow}
		if _, err := copyURLs(ctx, f.URL(), f.URL()+query, spec); err != nil {
			t.Fatalf("copy with %q: %v", query, err)
		}
	}
	for _, c := range []struct {
		query string
		codec compress.Compression
		prop  string
	}{
		{"", compress.Codecs.Zstd, "zstd"},
		{"&compression=snappy", compress.Codecs.Snappy, "snappy"},
		{"", compress.Codecs.Snappy, "snappy"}, // the table keeps what the last run set
		{"&compression=lz4", compress.Codecs.Lz4Raw, "lz4raw"},
		{"&compression=none", compress.Codecs.Uncompressed, "uncompressed"},
		{"&compression=zstd&compression_level=9", compress.Codecs.Zstd, "zstd"},
	} {
		run(c.query, routes.ModeReplace)
		expectRows(t, ctx, f, "dst", routestest.Rows(1, 300))
		tbl := loadTable(t, ctx, f, "dst")
		if got := tbl.Properties()["write.parquet.compression-codec"]; got != c.prop {
			t.Fatalf("after %q the table's codec property is %q, want %q", c.query, got, c.prop)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 0 {
			t.Fatalf("after %q: no data files", c.query)
		}
		for _, task := range tasks {
			u, err := url.Parse(task.File.FilePath())
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(u.Path)
			if err != nil {
				t.Fatal(err)
			}
			checkDataFileCodec(t, b, c.codec)
		}
	}
	if got := loadTable(t, ctx, f, "dst").Properties()["write.parquet.compression-level"]; got != "9" {
		t.Fatalf("compression_level=9 left the table's level property %q", got)
	}
}

func checkDataFileCodec(t *testing.T, b []byte, want compress.Compression) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	for g := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Compression() != want {
				t.Fatalf("data file row group %d column %d is %s, want %s", g, c, cc.Compression(), want)
			}
		}
	}
}

// A codec or level the writer does not take fails the URL as bad input
// (exit 2) naming the parameter.
func TestDestination_CompressionBadValues(t *testing.T) {
	f := icebergtest.New(t)
	for _, q := range []struct{ query, names string }{
		{"&compression=gzip", "compression="},
		{"&compression=zstd&compression_level=23", "compression_level="},
		{"&compression_level=0", "compression_level="},
		{"&compression=snappy&compression_level=2", "compression_level="},
		{"&compression=lz4&compression_level=x", "compression_level="},
	} {
		dst, err := routes.OpenDestination(testContext(t), f.URL()+q.query)
		if err == nil {
			dst.Close()
		}
		if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), q.names) {
			t.Errorf("%s: got %v, want a bad-input error naming %s", q.query, err, q.names)
		}
	}
}

// TestDestination_DictionaryOnlyOnStrings: a table weir creates writes
// dictionaries only for its string columns, as file:// does
// (fileformat.DictionaryColumns): iceberg-go's default dictionary on every
// column cost a fifth of a transfer's CPU.
func TestDestination_DictionaryOnlyOnStrings(t *testing.T) {
	ctx := testContext(t)
	f := icebergtest.New(t)
	f.Create(t, ctx, "src", routestest.Rows(1, 300))
	spec := routes.CopySpec{Table: f.TableRef("src"), DestTable: f.TableRef("dst"), Mode: routes.ModeReplace, Window: noWindow}
	if _, err := copyURLs(ctx, f.URL(), f.URL(), spec); err != nil {
		t.Fatal(err)
	}
	expectRows(t, ctx, f, "dst", routestest.Rows(1, 300))
	tbl := loadTable(t, ctx, f, "dst")
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("data files: %v (%d)", err, len(tasks))
	}
	strings, others := 0, 0
	for _, task := range tasks {
		u, err := url.Parse(task.File.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := file.NewParquetReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		sc := rdr.MetaData().Schema
		for g := range rdr.NumRowGroups() {
			rg := rdr.MetaData().RowGroup(g)
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				col := sc.Column(c)
				isString := col.LogicalType().Equals(schema.StringLogicalType{})
				if isString {
					strings++
				} else {
					others++
				}
				if cc.HasDictionaryPage() != isString {
					t.Errorf("column %s (%s): dictionary %v, want %v", col.Name(), col.LogicalType(), cc.HasDictionaryPage(), isString)
				}
			}
		}
		rdr.Close()
	}
	if strings == 0 || others == 0 {
		t.Fatalf("the fixture rows have %d string and %d other column chunks: want both", strings, others)
	}
}
