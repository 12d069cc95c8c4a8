package objstore

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// readBufferBytes is the read-ahead of one column chunk: a row group is
// never loaded whole, so files written by other tools with 128 MiB row
// groups read in bounded memory too.
const readBufferBytes = 1 << 20

// parquetFile is an open Parquet file.
type parquetFile struct {
	blob blob
	rdr  *file.Reader
	fr   *pqarrow.FileReader
}

func openParquet(ctx context.Context, s store, key string, mem memory.Allocator, read *atomic.Int64) (*parquetFile, error) {
	b, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferBytes
	var ra io.ReaderAt = b
	if read != nil {
		ra = &countReaderAt{r: b, n: read}
	}
	rdr, err := file.NewParquetReader(io.NewSectionReader(ra, 0, b.Size()), file.WithReadProps(props))
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("parquet footer: %w", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		rdr.Close()
		b.Close()
		return nil, err
	}
	return &parquetFile{blob: b, rdr: rdr, fr: fr}, nil
}

func (f *parquetFile) Close() error {
	f.rdr.Close()
	return f.blob.Close()
}

func parquetSchema(ctx context.Context, s store, key string) (*arrow.Schema, error) {
	f, err := openParquet(ctx, s, key, memory.DefaultAllocator, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.fr.Schema()
}

func parquetRowGroups(ctx context.Context, s store, key string) (int, error) {
	f, err := openParquet(ctx, s, key, memory.DefaultAllocator, nil)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.rdr.NumRowGroups(), nil
}

// leaves returns the Parquet leaf columns of the named top-level fields.
func (f *parquetFile) leaves(names []string) ([]int, error) {
	var out []int
	for _, name := range names {
		found := false
		for i := range f.fr.Manifest.Fields {
			sf := &f.fr.Manifest.Fields[i]
			if sf.Field.Name == name {
				out, found = appendLeaves(out, sf), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("file has no column %q", name)
		}
	}
	return out, nil
}

func appendLeaves(dst []int, sf *pqarrow.SchemaField) []int {
	if sf.IsLeaf() {
		return append(dst, sf.ColIndex)
	}
	for i := range sf.Children {
		dst = appendLeaves(dst, &sf.Children[i])
	}
	return dst
}

// batchRows sizes record batches to about chunk bytes of decoded data.
func (f *parquetFile) batchRows(chunk int) int64 {
	md := f.rdr.MetaData()
	var bytes int64
	for i := range md.NumRowGroups() {
		bytes += md.RowGroup(i).TotalByteSize()
	}
	rows := md.NumRows
	if rows <= 0 || bytes <= 0 {
		return 64 << 10
	}
	return min(max(int64(chunk)*rows/bytes, 1024), 1<<20)
}

// parquetBatches reads the needed columns of a file (or of some of its row
// groups) as record batches.
func (e *Endpoint) parquetBatches(ctx context.Context, spec rangeSpec, need []string, opts batchOptions) (batchSource, error) {
	f, err := openParquet(ctx, e.store, spec.File.Key, opts.mem, opts.read)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", e.describe(spec.File.Key), err)
	}
	cols, err := f.leaves(need)
	if err == nil {
		f.fr.Props.BatchSize = f.batchRows(opts.chunk)
		var rr pqarrow.RecordReader
		if rr, err = f.fr.GetRecordReader(ctx, cols, spec.RowGroups); err == nil {
			return &closingBatches{RecordReader: rr, close: f.Close}, nil
		}
	}
	f.Close()
	return nil, fmt.Errorf("read %s: %w", e.describe(spec.File.Key), err)
}

// closingBatches closes the file after its record reader.
type closingBatches struct {
	pqarrow.RecordReader
	close func() error
}

func (c *closingBatches) Release() {
	c.RecordReader.Release()
	c.close()
}

type countReaderAt struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (c *countReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
