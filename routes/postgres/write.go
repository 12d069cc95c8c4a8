package postgres

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirhq/weir/routes"
)

var _ routes.NativeWriter = (*stage)(nil)

func (st *stage) copySQL() string {
	return fmt.Sprintf("COPY %s (%s) FROM STDIN (FORMAT binary)", ident(st.table), columnNames(st.info.Columns))
}

// AcceptsNative: a Postgres source's binary COPY matches the staging table
// exactly, since both use the source's own column types.
func (st *stage) AcceptsNative(format string) bool {
	return format == NativeFormat && st.info.Scheme == Scheme
}

// relayBuffer batches the source's CopyData messages (one per row) into
// large writes, so the destination sends big CopyData messages instead of a
// syscall per row.
const relayBuffer = 256 << 10

// WriteNative relays the source's binary COPY bytes into the staging table.
func (st *stage) WriteNative(ctx context.Context, s routes.NativeStream) (int64, error) {
	return st.copyIn(ctx, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, relayBuffer)
		if _, err := s.WriteTo(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// Write encodes Arrow batches into binary COPY for the staging table.
func (st *stage) Write(ctx context.Context, s routes.Stream) (int64, error) {
	cols := destColumns(st.info)
	return st.copyIn(ctx, func(w io.Writer) error {
		enc := newEncoder(cols, w)
		if err := enc.WriteHeader(); err != nil {
			return err
		}
		for s.Next() {
			if err := enc.Encode(s.RecordBatch()); err != nil {
				return err
			}
		}
		if err := s.Err(); err != nil {
			return err
		}
		return enc.Close()
	})
}

// destColumns are the staging table's columns, typed as created.
func destColumns(info *routes.TableInfo) []routes.Column {
	cols := make([]routes.Column, len(info.Columns))
	for i, c := range info.Columns {
		c.NativeType = stageType(c, info.Scheme)
		cols[i] = c
	}
	return cols
}

// copyIn runs COPY FROM STDIN on its own connection, fed by produce through
// a pipe. A producer failure aborts the COPY (CopyFail) and is the error
// reported; a COPY failure stops the producer.
func (st *stage) copyIn(ctx context.Context, produce func(io.Writer) error) (int64, error) {
	conn, err := st.e.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	pr, pw := io.Pipe()
	perr := make(chan error, 1)
	go func() {
		err := produce(pw)
		pw.CloseWithError(err)
		perr <- err
	}()
	routes.LogSQL(ctx, st.e.url, st.copySQL())
	tag, cerr := conn.Conn().PgConn().CopyFrom(ctx, pr, st.copySQL())
	pr.CloseWithError(errCopyEnded)
	if err := <-perr; err != nil && !errors.Is(err, errCopyEnded) {
		return 0, err
	}
	if cerr != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("copy into %s on %s: %w", st.table, st.e.url.Identity(), cerr)
	}
	return tag.RowsAffected(), nil
}

var errCopyEnded = errors.New("copy into staging ended")
