package objstore

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// Write encodes one pipe into part files of the run, in the run's staging
// folder, starting a new file once one holds about file_bytes. A pipe that
// reads no row writes no file.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	if err := st.checkSchema(s.Schema()); err != nil {
		return 0, err
	}
	pw := &partWriter{st: st, pipe: int(st.pipes.Add(1)) - 1}
	defer pw.discard()
	var rows int64
	for s.Next() {
		rec := s.RecordBatch()
		if err := pw.write(ctx, rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	if err := s.Err(); err != nil {
		return rows, err
	}
	if err := ctx.Err(); err != nil {
		return rows, err
	}
	return rows, pw.finish()
}

// checkSchema refuses a stream whose columns are not the probed table's.
func (st *stage) checkSchema(s *arrow.Schema) error {
	want := st.in
	if s.NumFields() != want.NumFields() {
		return fmt.Errorf("stream has %d columns, the table %d", s.NumFields(), want.NumFields())
	}
	for i, f := range s.Fields() {
		if !arrow.TypeEqual(f.Type, want.Field(i).Type) {
			return fmt.Errorf("stream column %q is %s, the table's %s", f.Name, f.Type, want.Field(i).Type)
		}
	}
	return nil
}

// partWriter is one pipe's current part file.
type partWriter struct {
	st   *stage
	pipe int
	n    int // files started
	out  objectWriter
	cnt  *countWriter
	enc  fileformat.Encoder
	path string // the file's name in the table folder once published
	rows int64
}

func (pw *partWriter) write(ctx context.Context, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	if pw.enc == nil {
		if err := pw.open(ctx); err != nil {
			return err
		}
	}
	if err := pw.enc.Write(rec); err != nil {
		return fmt.Errorf("encode %s: %w", pw.path, err)
	}
	pw.rows += rec.NumRows()
	if pw.cnt.n.Load() >= pw.st.e.set.fileBytes {
		return pw.finish()
	}
	return nil
}

func (pw *partWriter) open(ctx context.Context) error {
	ext := pw.st.e.set.format
	pw.path = partName(pw.st.runID, pw.pipe, pw.n, ext)
	pw.n++
	out, err := pw.st.e.store.Create(ctx, pw.st.stagedKey(pw.path))
	if err != nil {
		return fmt.Errorf("create %s: %w", pw.st.e.describe(pw.st.stagedKey(pw.path)), err)
	}
	pw.out, pw.cnt = out, &countWriter{w: out}
	pw.enc, err = fileformat.NewEncoder(pw.cnt, pw.st.in, ext, fileformat.EncoderOptions{RowGroupBytes: pw.st.e.set.rowGroupBytes, Allocator: pw.st.alloc, Compression: pw.st.e.set.compression})
	if err != nil {
		out.Abort()
		pw.out, pw.enc = nil, nil
		return fmt.Errorf("encode %s: %w", pw.st.e.describe(pw.st.stagedKey(pw.path)), err)
	}
	return nil
}

// finish closes the current file and records it for the manifest.
func (pw *partWriter) finish() error {
	if pw.enc == nil {
		return nil
	}
	key := pw.st.stagedKey(pw.path)
	err := pw.enc.Close()
	pw.enc = nil
	if err == nil {
		err = pw.out.Close()
	}
	if err != nil {
		pw.out.Abort()
		pw.out = nil
		return fmt.Errorf("write %s: %w", pw.st.e.describe(key), err)
	}
	pw.st.addFile(ManifestFile{Path: pw.path, Rows: pw.rows, Bytes: pw.cnt.n.Load(), RunID: pw.st.runID})
	pw.out, pw.rows = nil, 0
	return nil
}

// discard drops an unfinished file (after an error or cancel).
func (pw *partWriter) discard() {
	if pw.enc != nil {
		pw.enc.Discard()
		pw.enc = nil
	}
	if pw.out != nil {
		pw.out.Abort()
		pw.out = nil
	}
}

type countWriter struct {
	w interface{ Write([]byte) (int, error) }
	n atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
