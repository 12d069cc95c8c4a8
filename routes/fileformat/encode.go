package fileformat

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/weirhq/weir/routes"
)

// Encoder writes record batches as one data file.
type Encoder interface {
	// Write encodes a batch whose columns match the encoder's input schema.
	// It does not take ownership of rec.
	Write(rec arrow.RecordBatch) error
	// Close flushes buffered rows and writes the file's trailer (the Parquet
	// footer, the gzip trailer). It does not close the underlying writer.
	Close() error
	// Discard frees buffered rows without finishing the file.
	Discard()
}

// EncoderOptions tune an Encoder; zero values are the defaults.
type EncoderOptions struct {
	RowGroupBytes int64 // Arrow bytes per Parquet row group (default DefaultRowGroupBytes)
	Allocator     memory.Allocator
	Compression   Compression // Parquet's codec (default DefaultCompression)
}

// NewEncoder returns an encoder of format (Parquet, CSVGzip or
// CSV) writing to w. Parquet columns of types Parquet cannot hold
// (intervals, durations) are written as text (see FileSchema).
func NewEncoder(w io.Writer, schema *arrow.Schema, format string, opts EncoderOptions) (Encoder, error) {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	switch format {
	case Parquet:
		UseLeanZstd()
		e, err := newParquetEncoder(w, schema, opts)
		if err != nil {
			return nil, err // not a typed nil
		}
		return e, nil
	case CSVGzip, CSV:
		return newCSVEncoder(w, schema, format == CSVGzip), nil
	}
	return nil, fmt.Errorf("unknown format %q (use parquet, csv.gz or csv)", format)
}

// FileSchema is the schema of the files NewEncoder writes for schema: the
// same, except that for Parquet a column of a type Parquet cannot store
// becomes a string column holding the value's text.
func FileSchema(schema *arrow.Schema, format string) *arrow.Schema {
	if format != Parquet {
		return schema
	}
	fields := schema.Fields()
	changed := false
	for i, f := range fields {
		if !parquetable(f) {
			fields[i].Type, changed = arrow.BinaryTypes.String, true
		}
	}
	if !changed {
		return schema
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

func parquetable(f arrow.Field) bool {
	_, err := pqarrow.ToParquet(arrow.NewSchema([]arrow.Field{f}, nil), nil, pqarrow.DefaultWriterProps())
	return err == nil
}

// parquetEncoder gathers batches until they hold RowGroupBytes of Arrow
// data, then writes them as one row group: memory stays near one row group.
type parquetEncoder struct {
	w       io.Writer
	opts    EncoderOptions
	fw      *pqarrow.FileWriter // made at the first row group (see writer)
	dict    []bool              // columns written with a dictionary (set by writer)
	schema  *arrow.Schema       // of the file
	text    []bool              // columns written as text
	mem     memory.Allocator
	target  int64
	pending []arrow.RecordBatch
	size    int64
}

// writerOnly hides Close: pqarrow closes a sink that has one.
type writerOnly struct{ io.Writer }

func newParquetEncoder(w io.Writer, schema *arrow.Schema, opts EncoderOptions) (*parquetEncoder, error) {
	fs := FileSchema(schema, Parquet)
	// The writer is made at the first row group; its schema is checked now.
	if _, err := pqarrow.ToParquet(fs, writerProps(fs, opts, DictionaryColumns(fs)), arrowProps(opts)); err != nil {
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	e := &parquetEncoder{w: w, opts: opts, schema: fs, mem: opts.Allocator, target: opts.RowGroupBytes, text: make([]bool, len(fs.Fields()))}
	for i := range e.text {
		e.text[i] = !arrow.TypeEqual(fs.Field(i).Type, schema.Field(i).Type)
	}
	return e, nil
}

func arrowProps(opts EncoderOptions) pqarrow.ArrowWriterProperties {
	return pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(opts.Allocator))
}

// writer is the file's writer, made at the first row group so that its
// dictionaries can be chosen from that row group's values (dictionaryColumns).
func (e *parquetEncoder) writer() (*pqarrow.FileWriter, error) {
	if e.fw != nil {
		return e.fw, nil
	}
	dict := e.dictionaryColumns()
	fw, err := pqarrow.NewFileWriter(e.schema, writerOnly{e.w}, writerProps(e.schema, e.opts, dict), arrowProps(e.opts))
	if err != nil {
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	e.fw, e.dict = fw, make([]bool, len(e.schema.Fields()))
	for _, name := range dict {
		e.dict[e.schema.FieldIndices(name)[0]] = true
	}
	return fw, nil
}

// dictionaryColumns are the DictionaryColumns whose values in the first row
// group (the pending batches) do not fill a dictionary of DictionaryLimit
// bytes, counted as arrow-go counts them (each distinct value's length + 4).
// A column that fills it there would give up its dictionary in every row
// group after hashing a few thousand values into it (TPC-H's l_comment:
// ~5,000 values of each 4 MiB row group, and arrow-go's memo table
// allocates on every lookup); such a column is written plain from the
// start. The values written are the same either way. A column whose first
// row group has few distinct values keeps its dictionary, and gives it up
// by the limit as before if later row groups have more.
func (e *parquetEncoder) dictionaryColumns() []string {
	var out []string
	for _, name := range DictionaryColumns(e.schema) {
		i := e.schema.FieldIndices(name)[0]
		if !fillsDictionary(e.pending, i) {
			out = append(out, name)
		}
	}
	return out
}

// fillsDictionary: the distinct values of column i of recs reach
// DictionaryLimit bytes. It stops hashing as soon as they do.
func fillsDictionary(recs []arrow.RecordBatch, i int) bool {
	seen := map[string]struct{}{}
	size := 0
	for _, r := range recs {
		var value func(int) string
		switch a := r.Column(i).(type) {
		case *array.String:
			value = a.Value
		case *array.LargeString:
			value = a.Value
		default:
			return false
		}
		col := r.Column(i)
		for j := range col.Len() {
			if col.IsNull(j) {
				continue
			}
			v := value(j) // a view of the batch's buffer: seen lives only here
			if _, ok := seen[v]; ok {
				continue
			}
			seen[v] = struct{}{}
			if size += len(v) + 4; size >= DictionaryLimit {
				return true
			}
		}
	}
	return false
}

// writerProps: the codec, statistics, row groups cut by the encoder (not by a
// row count), and dictionary encoding only for the columns dict (top-level
// string columns: DictionaryColumns, less those dictionaryColumns drops).
// Measured on PostgreSQL rows in 4 MiB row groups, dictionaries on
// integers, floats and timestamps cost a third more CPU and made files
// larger than zstd alone; on strings they help readers filter.
// DictionaryLimit is the dictionary size at which a string column chunk
// falls back to plain encoding (arrow-go's default is 1 MiB). A row group of
// 4 MiB rarely fills 1 MiB of distinct strings, so a column of unique
// strings (comments, hashes) was hashed value by value into a dictionary as
// large as its data: 16 % of weir's CPU on TPC-H lineitem. At 128 KiB such
// a column gives up after a few thousand values; columns of few distinct
// values (flags, modes, names) keep their dictionary.
const DictionaryLimit = 128 << 10

// DictionaryColumns are the columns of fs written with a dictionary: the
// top-level strings (see writerProps). The Iceberg route sets the same
// rule as table properties, so both lake writers encode alike.
func DictionaryColumns(fs *arrow.Schema) []string {
	var out []string
	for _, f := range fs.Fields() {
		if id := f.Type.ID(); id == arrow.STRING || id == arrow.LARGE_STRING {
			out = append(out, f.Name)
		}
	}
	return out
}

// Decimals of precision ≤ 9 are written as INT32 and ≤ 18 as INT64 (the
// Parquet spec's integer decimals, read by every Parquet reader and the
// Iceberg spec's own mapping), wider ones as FIXED_LEN_BYTE_ARRAY. The
// integer form skips a big-endian byte array per value: four
// decimal(15,2) columns of 100k rows encoded 2.5× faster (go test
// -bench, 80–108 ms against 202–309 ms a file).
func writerProps(fs *arrow.Schema, eo EncoderOptions, dict []string) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{parquet.WithCompression(eo.Compression.codec()), parquet.WithCompressionLevel(eo.Compression.level()), parquet.WithAllocator(eo.Allocator),
		parquet.WithStats(true), parquet.WithMaxRowGroupLength(1 << 40), parquet.WithDictionaryDefault(false),
		parquet.WithDictionaryPageSizeLimit(DictionaryLimit), parquet.WithStoreDecimalAsInteger(true)}
	for _, name := range dict {
		opts = append(opts, parquet.WithDictionaryFor(name, true))
	}
	return parquet.NewWriterProperties(opts...)
}

func (e *parquetEncoder) Write(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(e.text) {
		return fmt.Errorf("batch has %d columns, the file %d", rec.NumCols(), len(e.text))
	}
	if rec.NumRows() == 0 {
		return nil
	}
	r, err := e.fileBatch(rec)
	if err != nil {
		return err
	}
	e.pending = append(e.pending, r)
	e.size += routes.RecordBytes(r)
	if e.size >= e.target {
		return e.flush()
	}
	return nil
}

// fileBatch rebinds rec's columns to the file schema, turning the text
// columns into strings.
func (e *parquetEncoder) fileBatch(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(e.text))
	for i, col := range rec.Columns() {
		if e.text[i] {
			cols[i] = textArray(col, e.mem)
			defer cols[i].Release()
			continue
		}
		if !arrow.TypeEqual(col.DataType(), e.schema.Field(i).Type) {
			return nil, fmt.Errorf("column %q is %s, the file's %s", e.schema.Field(i).Name, col.DataType(), e.schema.Field(i).Type)
		}
		cols[i] = col
	}
	return array.NewRecordBatch(e.schema, cols, rec.NumRows()), nil
}

// textArray renders a column as strings (NULLs stay NULL).
func textArray(a arrow.Array, mem memory.Allocator) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	app := textAppender(a)
	var buf []byte
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = app(buf[:0], i)
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray()
}

func (e *parquetEncoder) flush() error {
	if len(e.pending) == 0 {
		return nil
	}
	defer e.Discard()
	fw, err := e.writer()
	if err != nil {
		return err
	}
	if err := fw.NewRowGroupChecked(); err != nil {
		return fmt.Errorf("write row group: %w", err)
	}
	chunks := make([]arrow.Array, len(e.pending))
	for i, f := range e.schema.Fields() {
		for j, r := range e.pending {
			chunks[j] = r.Column(i)
		}
		var col *arrow.Chunked
		if d := e.dictionaryArray(i, chunks); d != nil {
			col = arrow.NewChunked(d.DataType(), []arrow.Array{d})
			d.Release()
		} else {
			col = arrow.NewChunked(f.Type, chunks)
		}
		err := fw.WriteColumnChunked(col, 0, int64(col.Len()))
		col.Release()
		if err != nil {
			return fmt.Errorf("write row group: column %q: %w", f.Name, err)
		}
	}
	return nil
}

// dictionaryArray is column i of a row group (its chunks) as one Arrow
// dictionary array, or nil: when the column has no dictionary, is not a
// string, its distinct values reach DictionaryLimit bytes (then arrow-go
// hashes it and gives the dictionary up, as before), it holds no value, or
// it holds the empty string (arrow-go v18.8's ByteArrayStatistics.UpdateFromArrow,
// which takes a dictionary's statistics, skips empty values, so a min of ""
// would be lost; TestParquet_DictionaryOnlyWhereItHolds checks it). arrow-go writes a
// dictionary array's indices as they are and hashes only its dictionary;
// it otherwise hashes every value into its memo table, which allocates on
// each (12 % of weir's CPU on TPC-H lineitem's four short string columns).
// The file is the same: the dictionary holds the values in the order first
// seen, as arrow-go's does, and the statistics are taken from it.
func (e *parquetEncoder) dictionaryArray(i int, chunks []arrow.Array) arrow.Array {
	if !e.dict[i] || e.schema.Field(i).Type.ID() != arrow.STRING {
		return nil
	}
	n := 0
	for _, c := range chunks {
		n += c.Len()
	}
	idx := array.NewInt32Builder(e.mem)
	defer idx.Release()
	idx.Reserve(n)
	vals := array.NewStringBuilder(e.mem)
	defer vals.Release()
	seen := map[string]int32{}
	size := 0
	for _, c := range chunks {
		s := c.(*array.String)
		for j := range s.Len() {
			if s.IsNull(j) {
				idx.UnsafeAppendBoolToBitmap(false)
				continue
			}
			v := s.Value(j) // a view of the batch's buffer: seen lives only here
			if v == "" {
				return nil // arrow-go's statistics of a dictionary skip "": min would be wrong
			}
			k, ok := seen[v]
			if !ok {
				if size += len(v) + 4; size >= DictionaryLimit {
					return nil
				}
				k = int32(len(seen))
				seen[v] = k
				vals.Append(v)
			}
			idx.UnsafeAppend(k)
		}
	}
	if len(seen) == 0 {
		return nil
	}
	ia, va := idx.NewArray(), vals.NewArray()
	defer ia.Release()
	defer va.Release()
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ia, va)
}

func (e *parquetEncoder) Close() error {
	if err := e.flush(); err != nil {
		return err
	}
	fw, err := e.writer() // no rows: a file of no row groups
	if err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquet footer: %w", err)
	}
	return nil
}

// ParquetMetadata is the footer of the Parquet file e wrote: its row
// groups with their column statistics, sizes and value counts (what the
// Iceberg route records of each data file). e must be a Parquet encoder
// whose Close returned nil.
func ParquetMetadata(e Encoder) (*metadata.FileMetaData, error) {
	pe, ok := e.(*parquetEncoder)
	if !ok {
		return nil, fmt.Errorf("parquet metadata: %T is not a Parquet encoder", e)
	}
	if pe.fw == nil {
		return nil, fmt.Errorf("parquet metadata: the encoder was not closed")
	}
	md, err := pe.fw.FileMetadata()
	if err != nil {
		return nil, fmt.Errorf("parquet metadata: %w", err)
	}
	return md, nil
}

func (e *parquetEncoder) Discard() {
	for _, r := range e.pending {
		r.Release()
	}
	e.pending, e.size = e.pending[:0], 0
}

// csvEncoder writes RFC 4180 CSV: a header, CRLF line ends, fields quoted
// when they hold a comma, quote or line break. A NULL is an empty field and
// an empty string a quoted one (""), so both survive a round trip.
type csvEncoder struct {
	gz     *gzip.Writer
	w      *bufio.Writer
	schema *arrow.Schema
	header bool
	buf    []byte
}

func newCSVEncoder(w io.Writer, schema *arrow.Schema, gz bool) *csvEncoder {
	e := &csvEncoder{schema: schema}
	if gz {
		e.gz = gzip.NewWriter(w)
		w = e.gz
	}
	e.w = bufio.NewWriterSize(w, 64<<10)
	return e
}

func (e *csvEncoder) writeHeader() error {
	for i, f := range e.schema.Fields() {
		if i > 0 {
			e.w.WriteByte(',')
		}
		e.writeField([]byte(f.Name))
	}
	_, err := e.w.WriteString("\r\n")
	e.header = true
	return err
}

func (e *csvEncoder) Write(rec arrow.RecordBatch) error {
	if !e.header {
		if err := e.writeHeader(); err != nil {
			return err
		}
	}
	if int(rec.NumCols()) != len(e.schema.Fields()) {
		return fmt.Errorf("batch has %d columns, the file %d", rec.NumCols(), len(e.schema.Fields()))
	}
	apps := make([]appender, rec.NumCols())
	for i, c := range rec.Columns() {
		apps[i] = textAppender(c)
	}
	for row := range int(rec.NumRows()) {
		if err := e.writeRow(rec, apps, row); err != nil {
			return err
		}
	}
	return nil
}

func (e *csvEncoder) writeRow(rec arrow.RecordBatch, apps []appender, row int) error {
	for i, app := range apps {
		if i > 0 {
			e.w.WriteByte(',')
		}
		if rec.Column(i).IsNull(row) {
			continue
		}
		e.buf = app(e.buf[:0], row)
		e.writeField(e.buf)
	}
	_, err := e.w.WriteString("\r\n")
	return err
}

func (e *csvEncoder) writeField(f []byte) {
	if !needsQuotes(f) {
		e.w.Write(f)
		return
	}
	e.w.WriteByte('"')
	for _, c := range f {
		if c == '"' {
			e.w.WriteByte('"')
		}
		e.w.WriteByte(c)
	}
	e.w.WriteByte('"')
}

func needsQuotes(f []byte) bool {
	if len(f) == 0 {
		return true
	}
	for _, c := range f {
		if c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	return false
}

func (e *csvEncoder) Close() error {
	if !e.header {
		if err := e.writeHeader(); err != nil {
			return err
		}
	}
	if err := e.w.Flush(); err != nil {
		return err
	}
	if e.gz != nil {
		return e.gz.Close()
	}
	return nil
}

func (e *csvEncoder) Discard() {}
