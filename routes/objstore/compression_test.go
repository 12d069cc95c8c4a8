package objstore_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/objstore/objstoretest"
	"github.com/weirhq/weir/routes/routestest"
)

// compression= and compression_level= choose the codec of every column
// chunk of every file, on each store, and the values read back exact with
// arrow-go's own reader; without them the files are zstd.
func TestCompression_CodecOfEveryChunk(t *testing.T) {
	ctx := testContext(t)
	stores := map[string]func(testing.TB, ...string) *objstoretest.Fixture{
		"file": objstoretest.NewFile, "s3": objstoretest.NewS3, "gcs": objstoretest.NewGCS}
	for store, fixture := range stores {
		for _, c := range []struct {
			query []string
			want  compress.Compression
		}{
			{nil, compress.Codecs.Zstd},
			{[]string{"compression=zstd"}, compress.Codecs.Zstd},
			{[]string{"compression=ZSTD", "compression_level=1"}, compress.Codecs.Zstd},
			{[]string{"compression=zstd", "compression_level=22"}, compress.Codecs.Zstd},
			{[]string{"compression_level=9"}, compress.Codecs.Zstd},
			{[]string{"compression=snappy"}, compress.Codecs.Snappy},
			{[]string{"compression=lz4"}, compress.Codecs.Lz4Raw},
			{[]string{"compression=none"}, compress.Codecs.Uncompressed},
		} {
			t.Run(store+"/"+strings.Join(c.query, "&"), func(t *testing.T) {
				f := fixture(t, append([]string{"row_group_bytes=8192"}, c.query...)...)
				want := routestest.Rows(1, 700)
				mustCopy(t, ctx, f, "t", want, routes.ModeReplace)
				m, _ := objstoretest.ReadManifest(t, ctx, f.Endpoint(t, ctx), "t")
				var got int
				for _, mf := range m.Files {
					b := f.Get(t, "t/"+mf.Path)
					checkCodec(t, b, c.want)
					rows := readParquetFile(t, ctx, b)
					for _, r := range rows {
						if w := want[r.ID-1]; r.String() != w.String() {
							t.Fatalf("row %d: got %s want %s", r.ID, r, w)
						}
					}
					got += len(rows)
				}
				if got != len(want) {
					t.Fatalf("files hold %d rows, want %d", got, len(want))
				}
			})
		}
	}
}

func checkCodec(t *testing.T, b []byte, want compress.Compression) {
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
				t.Fatalf("row group %d column %d is %s, want %s", g, c, cc.Compression(), want)
			}
		}
	}
}

// A codec or level the writer does not take is bad input (exit 2) when
// the destination opens, and the message names the parameter.
func TestCompression_BadValuesNameTheOption(t *testing.T) {
	ctx := testContext(t)
	for _, c := range []struct{ query, names string }{
		{"compression=gzip", "compression="},
		{"compression=", ""}, // empty: the default
		{"compression=zstd&compression_level=0", "compression_level="},
		{"compression=zstd&compression_level=23", "compression_level="},
		{"compression=zstd&compression_level=-1", "compression_level="},
		{"compression=zstd&compression_level=fast", "compression_level="},
		{"compression=snappy&compression_level=3", "compression_level="},
		{"compression=none&compression_level=1", "compression_level="},
		{"format=csv.gz&compression=zstd", "compression="},
		{"format=csv&compression_level=3", "compression_level="},
	} {
		for _, fixture := range []func(testing.TB, ...string) *objstoretest.Fixture{objstoretest.NewFile, objstoretest.NewS3, objstoretest.NewGCS} {
			f := fixture(t, c.query)
			dst, err := routes.OpenDestination(ctx, f.URL())
			if c.names == "" {
				if err != nil {
					t.Errorf("%s: %v", f.URL(), err)
				} else {
					dst.Close()
				}
				continue
			}
			if err == nil {
				dst.Close()
			}
			if !errors.Is(err, routes.ErrBadInput) || !strings.Contains(err.Error(), c.names) {
				t.Errorf("%s: got %v, want a bad-input error naming %s", f.URL(), err, c.names)
			}
		}
	}
}
