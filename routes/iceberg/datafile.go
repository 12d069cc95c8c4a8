package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/weirhq/weir/routes/fileformat"
)

// dataWriter writes a table's data files with weir's own Parquet encoder
// (routes/fileformat, the one file://, s3:// and gcs:// write with: 4 MiB
// row groups of Arrow data, decimals as INT32/INT64, dictionaries only on
// top-level strings) and leaves iceberg-go only the metadata: each file's
// DataFile (record count, size, per-field-id column sizes, value and null
// counts, bounds truncated by the table's metrics mode) comes from
// table.DataFileFromMetadata over the footer the encoder wrote, the same
// extraction iceberg-go's own writer runs. iceberg-go's writer
// (WriteBuffered into 32 MiB row groups) spent 1.66× the CPU of a
// file:// transfer of the same table (bench/README.md, "Iceberg data files
// written by weir's encoder").
//
// The files are those iceberg-go would write but for the encoding: the
// table's schema with its field ids on every Arrow field (nested ones too,
// written as PARQUET:field_id), column names sanitized as iceberg-go and
// Java do (a.b as a_x2Eb), named <location>/data/00000-0-<write id>-<n>.parquet.
type dataWriter struct {
	fsys       icebergio.WriteFileIO
	loc        table.LocationProvider
	schema     *iceberg.Schema // as written: the names sanitized
	fileSchema *arrow.Schema   // schema's Arrow form, with field ids
	props      iceberg.Properties
	version    int
	enc        fileformat.EncoderOptions
	target     int64 // write.target-file-size-bytes: a file is closed past it
}

// newDataWriter returns the writer of st's data files, or nil when the
// table asks for what fileformat does not write (a partition spec, format
// version 3's row lineage, a codec other than zstd, snappy, lz4raw or
// uncompressed): those tables keep iceberg-go's writer.
func (st *stage) newDataWriter(ctx context.Context) (*dataWriter, error) {
	tbl := st.tbl
	props := tbl.Properties()
	comp, ok := tableCompression(props)
	if !ok || !tbl.Spec().IsUnpartitioned() || tbl.Metadata().Version() != 2 {
		return nil, nil
	}
	if f := props.Get(table.WriteFormatDefaultKey, table.WriteFormatDefaultDefault); f != table.WriteFormatDefaultDefault {
		return nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("the warehouse's file system %T cannot write files", fsys)
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil, fmt.Errorf("data file locations: %w", err)
	}
	written, err := iceberg.SanitizeColumnNames(tbl.Schema())
	if err != nil {
		return nil, fmt.Errorf("iceberg column names: %w", err)
	}
	fs, err := table.SchemaToArrowSchema(written, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", st.dest, err)
	}
	return &dataWriter{
		fsys: wfs, loc: loc, schema: written, fileSchema: fs, props: props, version: tbl.Metadata().Version(),
		enc:    fileformat.EncoderOptions{Allocator: st.opts.Allocator, Compression: comp},
		target: props.GetInt64(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault),
	}, nil
}

// tableCompression reads the table's Parquet codec properties (the ones
// compression= sets, iceberg-go's names) as fileformat's; false for a codec
// or level fileformat does not write.
func tableCompression(props iceberg.Properties) (fileformat.Compression, bool) {
	codec, ok := map[string]string{"zstd": fileformat.CodecZstd, "snappy": fileformat.CodecSnappy,
		"lz4raw": fileformat.CodecLZ4, "uncompressed": fileformat.CodecNone}[props.Get(table.ParquetCompressionKey, table.ParquetCompressionDefault)]
	if !ok {
		return fileformat.Compression{}, false
	}
	c := fileformat.Compression{Codec: codec}
	level := props.GetInt(table.ParquetCompressionLevelKey, table.ParquetCompressionLevelDefault)
	if codec != fileformat.CodecZstd || level == table.ParquetCompressionLevelDefault {
		return c, true // iceberg-go hands the others' level to codecs that ignore it
	}
	c, err := fileformat.ParseCompression(codec, fmt.Sprint(level))
	return c, err == nil
}

// write encodes records (batches of st.target, released here) into data
// files named with writeID, a new file after each one that reached the
// target size. On an error the open file is removed; the files finished
// before it are returned with the error, for Abort.
func (w *dataWriter) write(ctx context.Context, writeID uuid.UUID, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	var cur *dataFile
	fail := func(err error) ([]iceberg.DataFile, error) {
		if cur != nil {
			err = errors.Join(err, cur.abort())
		}
		return files, err
	}
	for rec, err := range records {
		if err != nil {
			return fail(err)
		}
		if cur == nil {
			if cur, err = w.create(writeID, len(files)); err != nil {
				rec.Release()
				return fail(err)
			}
		}
		err = cur.write(rec, w.fileSchema)
		rec.Release()
		if err != nil {
			return fail(err)
		}
		if cur.size.n >= w.target {
			df, err := cur.close(w)
			if err != nil {
				return fail(err)
			}
			files, cur = append(files, df), nil
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
	}
	if cur != nil {
		df, err := cur.close(w)
		if err != nil {
			return fail(err)
		}
		files = append(files, df)
	}
	return files, nil
}

// dataFile is one data file being written.
type dataFile struct {
	path string
	f    icebergio.FileWriter
	size *countingWriter
	enc  fileformat.Encoder
	fsys icebergio.WriteFileIO
	rows int64
}

func (w *dataWriter) create(writeID uuid.UUID, n int) (*dataFile, error) {
	path := w.loc.NewDataLocation(fmt.Sprintf("00000-0-%s-%05d.parquet", writeID, n))
	f, err := w.fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", path, err)
	}
	size := &countingWriter{w: f}
	enc, err := fileformat.NewEncoder(size, w.fileSchema, fileformat.Parquet, w.enc)
	if err != nil {
		f.Close()
		w.fsys.Remove(path)
		return nil, err
	}
	return &dataFile{path: path, f: f, size: size, enc: enc, fsys: w.fsys}, nil
}

// write hands the encoder rec's columns under the file's schema: the same
// types, but for nested fields whose names were sanitized.
func (d *dataFile) write(rec arrow.RecordBatch, fs *arrow.Schema) error {
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		cols[i] = retype(c, fs.Field(i).Type)
		defer cols[i].Release()
	}
	out := array.NewRecordBatch(fs, cols, rec.NumRows())
	defer out.Release()
	if err := d.enc.Write(out); err != nil {
		return fmt.Errorf("data file %s: %w", d.path, err)
	}
	d.rows += rec.NumRows()
	return nil
}

// close finishes the file and describes it from its footer.
func (d *dataFile) close(w *dataWriter) (iceberg.DataFile, error) {
	if err := d.enc.Close(); err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.path, err)
	}
	md, err := fileformat.ParquetMetadata(d.enc)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.path, err)
	}
	if err := d.f.Close(); err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.path, err)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: w.schema, Spec: *iceberg.UnpartitionedSpec, Format: iceberg.ParquetFile, Metadata: md,
		FilePath: d.path, FileSize: d.size.n, Content: iceberg.EntryContentData,
		Properties: w.props, FormatVersion: w.version,
	})
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.path, err)
	}
	if df.Count() != d.rows {
		return nil, fmt.Errorf("data file %s: its footer counts %d rows, %d were written", d.path, df.Count(), d.rows)
	}
	return df, nil
}

// abort drops the file's buffered rows and removes what was written.
func (d *dataFile) abort() error {
	d.enc.Discard()
	d.f.Close()
	if err := d.fsys.Remove(d.path); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("remove data file %s: %w", d.path, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// retype returns a with type dt, which differs from a's at most in the
// names (and metadata) of nested fields: the buffers are shared.
func retype(a arrow.Array, dt arrow.DataType) arrow.Array {
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a
	}
	d := retypeData(a.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var childTypes []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case arrow.ListLikeType:
		childTypes = []arrow.DataType{t.Elem()}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		if i < len(childTypes) {
			children[i] = retypeData(c, childTypes[i])
			defer children[i].Release()
		} else {
			children[i] = c
		}
	}
	return array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
}
