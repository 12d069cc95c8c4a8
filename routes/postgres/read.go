package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// Read opens one pipe: a binary COPY of the range, started lazily by the
// first Next (decoded to Arrow) or WriteTo (wire bytes untouched).
func (e *Endpoint) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	return e.read(ctx, r, opts, "")
}

// dialect renders a filter (weir read --where) in this engine's SQL.
var dialect = where.Dialect{QuoteIdent: quoteIdent, QuoteString: quoteLiteral}

var _ where.Pushdown = (*Endpoint)(nil)

// PushDown is the SQL condition ReadWhere adds for x ("" when none).
func (e *Endpoint) PushDown(x where.Expr, schema *arrow.Schema) string {
	cond, _ := where.SQL(x, schema, dialect)
	return cond
}

// Residual is the part of x the client still applies: what the server
// does not evaluate itself (where.SQL).
func (e *Endpoint) Residual(x where.Expr, schema *arrow.Schema) where.Expr {
	return where.SQLResidual(x, schema, dialect)
}

// ReadWhere is Read with the pushable part of x ANDed to the range's own
// condition, so the server sends only the rows it keeps (or a superset).
func (e *Endpoint) ReadWhere(ctx context.Context, r routes.Range, opts routes.ReadOptions, x where.Expr) (routes.Stream, error) {
	return e.read(ctx, r, opts, e.PushDown(x, r.Table.Schema()))
}

// read opens a pipe over r whose WHERE clause also holds cond, when set.
func (e *Endpoint) read(ctx context.Context, r routes.Range, opts routes.ReadOptions, cond string) (routes.Stream, error) {
	list, cols := selectList(r.Table, opts.Columns)
	if len(cols) == 0 {
		return nil, routes.BadInput("%s: no columns selected", r.Table.Ref)
	}
	where, err := whereClause(r, opts)
	if err != nil {
		return nil, err
	}
	if cond != "" {
		where += " AND " + cond
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = routes.DefaultChunkBytes
	}
	s := &stream{
		ctx: ctx, e: e, info: r.Table, cols: wireColumns(cols), opts: opts,
		sql: fmt.Sprintf("COPY (SELECT %s FROM %s WHERE %s) TO STDOUT (FORMAT binary)", list, ident(r.Table.Ref), where),
	}
	schema := (&routes.TableInfo{Columns: s.cols, Scheme: Scheme}).Schema()
	s.Batches = routes.NewBatches(ctx, schema, s.decode)
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

// stream is one COPY TO pipe. It is consumed either as Arrow (Next, from
// the embedded Batches) or as wire bytes (WriteTo), never both.
type stream struct {
	*routes.Batches
	ctx   context.Context // the Read call's, for WriteTo
	e     *Endpoint
	info  *routes.TableInfo
	cols  []routes.Column
	opts  routes.ReadOptions
	sql   string
	bytes atomic.Int64
	// relayRows counts the tuples WriteTo passes on (a passthrough decodes
	// nothing, so Batches counts none).
	relayRows atomic.Int64
}

var (
	_ routes.NativeStream = (*stream)(nil)
	_ routes.Counter      = (*stream)(nil)
)

func (s *stream) Format() string { return NativeFormat }
func (s *stream) Bytes() int64   { return s.bytes.Load() }
func (s *stream) Rows() int64    { return s.Batches.Rows() + s.relayRows.Load() }

// decode runs the COPY into the binary COPY decoder, which emits batches.
func (s *stream) decode(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	dec := newDecoder(s.cols, s.opts.Allocator, s.opts.ChunkBytes, emit)
	err := s.copyOut(ctx, dec)
	// Close always: it frees the builders even when the copy failed.
	if cerr := dec.Close(); err == nil {
		err = cerr
	}
	return s.wrap(err)
}

// WriteTo copies the COPY's wire bytes to w untouched.
func (s *stream) WriteTo(w io.Writer) (int64, error) {
	if !s.Claim() {
		return 0, errors.New("stream already read as Arrow")
	}
	tc := &tupleCounter{rows: &s.relayRows}
	err := s.wrap(s.copyOut(s.ctx, &countingWriter{w: w, n: &s.bytes, tuples: tc}))
	return s.bytes.Load(), err
}

func (s *stream) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return fmt.Errorf("copy out of %s: %w", s.e.url.Identity(), err)
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
		routes.LogSQL(ctx, s.e.url, s.sql)
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
	routes.LogSQL(ctx, s.e.url, s.sql)
	if _, err := conn.Conn().PgConn().CopyTo(ctx, w, s.sql); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

type countingWriter struct {
	w      io.Writer
	n      *atomic.Int64
	tuples *tupleCounter // nil unless relaying
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	if c.tuples != nil {
		c.tuples.Write(p[:n])
	}
	return n, err
}
