package bigquery

import (
	"context"
	"errors"
	"fmt"
	"io"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/api/googleapi"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// errLoadEnded unblocks the encoder when the load stopped reading.
var errLoadEnded = errors.New("load job ended before the file did")

// Write streams one pipe as one Parquet file (objstore's encoder; or
// newline-delimited JSON with format=json) into a load job on the staging
// table: a media upload that reads the pipe the encoder writes into. Memory stays near one row group plus one upload
// chunk. A pipe that reads no row starts no load job. A failed pipe leaves
// nothing in the staging table: a load job is all or nothing.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	if err := st.checkSchema(s.Schema()); err != nil {
		return 0, err
	}
	up := &upload{st: st}
	defer up.abort(errors.New("write stopped"))
	var rows int64
	for s.Next() {
		rec := s.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		if err := up.write(ctx, rec); err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	if err := errors.Join(s.Err(), ctx.Err()); err != nil {
		return rows, err
	}
	if err := up.finish(); err != nil {
		return rows, fmt.Errorf("load into staging table %s: %w", st.table.Name, err)
	}
	return rows, nil
}

// checkSchema refuses a stream whose columns are not the probed table's.
func (st *stage) checkSchema(s *arrow.Schema) error {
	cols := st.info.Columns
	if s.NumFields() != len(cols) {
		return fmt.Errorf("stream has %d columns, the table %d", s.NumFields(), len(cols))
	}
	for i, f := range s.Fields() {
		if !arrow.TypeEqual(f.Type, cols[i].Type) {
			return fmt.Errorf("stream column %q is %s, the table's %s", f.Name, f.Type, cols[i].Type)
		}
	}
	return nil
}

// upload is one pipe's load file on its way into a load job.
type upload struct {
	st     *stage
	enc    fileformat.Encoder
	pw     *io.PipeWriter
	loaded chan error
	cancel context.CancelFunc
}

func (u *upload) write(ctx context.Context, rec arrow.RecordBatch) error {
	if u.enc == nil {
		if err := u.start(ctx); err != nil {
			return err
		}
	}
	conv, err := u.st.lay.convert(ctx, rec, u.st.mem)
	if err != nil {
		return err
	}
	defer conv.Release()
	if err := u.enc.Write(conv); err != nil {
		return u.failed(fmt.Errorf("encode %s: %w", u.st.e.cfg.Format, err))
	}
	return nil
}

// start opens the pipe and the load job that reads it. The load starts
// first: the Parquet encoder writes the file's magic bytes as it is
// created, which blocks until someone reads the pipe.
func (u *upload) start(ctx context.Context) error {
	pr, pw := io.Pipe()
	lctx, cancel := context.WithCancel(ctx)
	u.pw, u.cancel, u.loaded = pw, cancel, make(chan error, 1)
	go func() {
		err := u.st.load(lctx, pr)
		pr.CloseWithError(errLoadEnded)
		u.loaded <- err
	}()
	if u.st.e.cfg.Format != fileformat.Parquet {
		u.enc = newNDJSONEncoder(pw, u.st.lay.arrow)
		return nil
	}
	enc, err := fileformat.NewEncoder(pw, u.st.lay.arrow, fileformat.Parquet, fileformat.EncoderOptions{Allocator: u.st.mem})
	if err != nil {
		return u.failed(fmt.Errorf("encode parquet: %w", err))
	}
	u.enc = enc
	return nil
}

// failed returns the load's error when the encoder failed because the
// load ended first (it says why), else err.
func (u *upload) failed(err error) error {
	if errors.Is(err, errLoadEnded) || errors.Is(err, io.ErrClosedPipe) {
		if lerr := <-u.loaded; lerr != nil {
			u.loaded = nil
			return lerr
		}
	}
	return err
}

// finish completes the file and waits for its load job.
func (u *upload) finish() error {
	if u.enc == nil {
		return nil
	}
	err := u.enc.Close()
	u.enc = nil
	if err != nil {
		return u.failed(fmt.Errorf("encode %s: %w", u.st.e.cfg.Format, err))
	}
	u.pw.Close()
	lerr := <-u.loaded
	u.loaded = nil
	return lerr
}

// abort stops an unfinished upload: the upload fails, so no load job runs.
func (u *upload) abort(why error) {
	if u.enc != nil {
		u.enc.Discard()
		u.enc = nil
	}
	if u.pw == nil {
		return
	}
	u.pw.CloseWithError(why)
	u.cancel()
	if u.loaded != nil {
		<-u.loaded
		u.loaded = nil
	}
}

// load runs one load job from r into the staging table. The schema rides
// along (the table's own): list inference makes Parquet LISTs REPEATED.
func (st *stage) load(ctx context.Context, r io.Reader) error {
	src := bq.NewReaderSource(r)
	src.Schema = st.lay.schema
	src.SourceFormat = bq.JSON
	if st.e.cfg.Format == fileformat.Parquet {
		src.SourceFormat = bq.Parquet
		src.ParquetOptions = &bq.ParquetOptions{EnableListInference: true}
	}
	l := st.e.table(st.table).LoaderFrom(src)
	l.WriteDisposition = bq.WriteAppend
	l.CreateDisposition = bq.CreateNever
	l.MediaOptions = []googleapi.MediaOption{googleapi.ChunkSize(st.e.cfg.ChunkBytes), googleapi.ContentType("application/octet-stream")}
	job, err := l.Run(ctx)
	return runJob(ctx, job, err)
}
