package postgres

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes"
)

// Read opens one pipe: a binary COPY of the range, started lazily by the
// first Next (decoded to Arrow) or WriteTo (wire bytes untouched).
func (e *Endpoint) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	list, cols := selectList(r.Table, opts.Columns)
	if len(cols) == 0 {
		return nil, routes.BadInput("%s: no columns selected", r.Table.Ref)
	}
	where, err := whereClause(r, opts)
	if err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = routes.DefaultChunkBytes
	}
	s := &stream{
		ctx: ctx, e: e, info: r.Table, cols: wireColumns(cols), opts: opts,
		sql:    fmt.Sprintf("COPY (SELECT %s FROM %s WHERE %s) TO STDOUT (FORMAT binary)", list, ident(r.Table.Ref), where),
		schema: (&routes.TableInfo{Columns: wireColumns(cols), Scheme: Scheme}).Schema(),
	}
	s.refs.Store(1)
	return s, nil
}

func whereClause(r routes.Range, opts routes.ReadOptions) (string, error) {
	where := r.Predicate
	if where == "" {
		where = "true"
	}
	if opts.After == "" && opts.Until == "" {
		return where, nil
	}
	if _, ok := r.Table.Column(opts.Cursor); !ok {
		return "", &routes.ProbeError{Table: r.Table.Ref.String(), Column: opts.Cursor, Problem: "cursor column does not exist", Hint: "name an existing column with --cursor"}
	}
	c := quoteIdent(opts.Cursor)
	if opts.After != "" {
		where += fmt.Sprintf(" AND %s > %s", c, quoteLiteral(opts.After))
	}
	if opts.Until != "" {
		where += fmt.Sprintf(" AND %s <= %s", c, quoteLiteral(opts.Until))
	}
	return where, nil
}

// stream is one COPY TO pipe. It is consumed either as Arrow (Next) or as
// wire bytes (WriteTo), never both.
type stream struct {
	ctx    context.Context // the Read call's context: RecordReader has no ctx parameter
	e      *Endpoint
	info   *routes.TableInfo
	cols   []routes.Column
	opts   routes.ReadOptions
	sql    string
	schema *arrow.Schema

	refs    atomic.Int64
	rows    atomic.Int64
	bytes   atomic.Int64
	started sync.Once
	cancel  context.CancelFunc
	batches chan arrow.RecordBatch
	done    chan struct{}
	err     error // set before done is closed
	cur     arrow.RecordBatch
}

var (
	_ routes.NativeStream = (*stream)(nil)
	_ routes.Counter      = (*stream)(nil)
)

func (s *stream) Schema() *arrow.Schema { return s.schema }
func (s *stream) Format() string        { return NativeFormat }
func (s *stream) Rows() int64           { return s.rows.Load() }
func (s *stream) Bytes() int64          { return s.bytes.Load() }
func (s *stream) Retain()               { s.refs.Add(1) }

// Release frees the stream at its last reference: stops the COPY if it is
// still running and drops undelivered batches.
func (s *stream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.cancel != nil {
		s.cancel()
		for b := range s.batches {
			b.Release()
		}
		<-s.done
	}
	s.releaseCur()
}

func (s *stream) releaseCur() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Next decodes the next batch; false at the end or on error (see Err).
func (s *stream) Next() bool {
	s.started.Do(s.startDecode)
	s.releaseCur()
	b, ok := <-s.batches
	if !ok {
		<-s.done
		return false
	}
	s.cur = b
	return true
}

func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }

// Record is the deprecated name of RecordBatch, kept for the interface.
func (s *stream) Record() arrow.RecordBatch { return s.cur }

func (s *stream) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

func (s *stream) startDecode() {
	ctx, cancel := context.WithCancel(s.ctx)
	s.cancel = cancel
	s.batches = make(chan arrow.RecordBatch, 1)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		defer close(s.batches)
		dec := newDecoder(s.cols, s.opts.Allocator, s.opts.ChunkBytes, func(b arrow.RecordBatch) error {
			s.rows.Add(b.NumRows())
			select {
			case s.batches <- b:
				return nil
			case <-ctx.Done():
				b.Release()
				return ctx.Err()
			}
		})
		err := s.copyOut(ctx, dec)
		// Close always: it frees the builders even when the copy failed.
		if cerr := dec.Close(); err == nil {
			err = cerr
		}
		s.err = s.wrap(err)
	}()
}

// WriteTo copies the COPY's wire bytes to w untouched.
func (s *stream) WriteTo(w io.Writer) (int64, error) {
	var n int64
	s.started.Do(func() {
		s.done = make(chan struct{})
		defer close(s.done)
		cw := &countingWriter{w: w, n: &s.bytes}
		s.err = s.wrap(s.copyOut(s.ctx, cw))
		n = s.bytes.Load()
	})
	return n, s.err
}

func (s *stream) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return fmt.Errorf("copy out: %w", err)
}

// copyOut runs the COPY on its own connection, inside the plan's exported
// snapshot when there is one.
func (s *stream) copyOut(ctx context.Context, w io.Writer) error {
	conn, err := s.e.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	cw, ok := w.(*countingWriter)
	if !ok {
		cw = &countingWriter{w: w, n: &s.bytes}
	}
	snap := s.e.snap.id(s.info)
	if snap == "" {
		_, err = conn.Conn().PgConn().CopyTo(ctx, cw, s.sql)
		return err
	}
	return s.copyInSnapshot(ctx, conn, snap, cw)
}

func (s *stream) copyInSnapshot(ctx context.Context, conn *pgxpool.Conn, snap string, w io.Writer) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	_, err = tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snap))
	s.e.snap.imported(s.info)
	if err != nil {
		return fmt.Errorf("import snapshot: %w", err)
	}
	if _, err := conn.Conn().PgConn().CopyTo(ctx, w, s.sql); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
