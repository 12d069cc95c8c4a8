package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// Read opens one pipe over a range, started lazily by the first Next
// (Native blocks decoded into Arrow) or, when the HTTP interface answers,
// WriteTo (the Native bytes of SELECT … FORMAT Native, untouched).
func (e *Endpoint) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	return e.read(ctx, r, opts, "")
}

// dialect renders a filter (weir read --where) in this engine's SQL.
var dialect = where.Dialect{QuoteIdent: quoteIdent, QuoteString: quoteLiteral, IntegerLiterals: true}

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
	cols := selectColumns(r.Table, opts.Columns)
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
	s := &stream{ctx: ctx, e: e, info: r.Table, cols: cols, opts: opts, where: where,
		schema: (&routes.TableInfo{Columns: cols, Scheme: r.Table.Scheme}).Schema()}
	s.Batches = routes.NewBatches(ctx, s.schema, s.decode)
	if e.relayReady(ctx) {
		return &relayStream{stream: s}, nil
	}
	return s, nil
}

func selectColumns(info *routes.TableInfo, only []string) []routes.Column {
	if only == nil {
		return info.Columns
	}
	var cols []routes.Column
	for _, c := range info.Columns {
		for _, o := range only {
			if c.Name == o {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

func whereClause(r routes.Range, opts routes.ReadOptions) (string, error) {
	where := r.Predicate
	if where == "" {
		where = "1"
	}
	if opts.After == "" && opts.Until == "" {
		return where, nil
	}
	c, ok := r.Table.Column(opts.Cursor)
	if !ok {
		return "", &routes.ProbeError{Table: r.Table.Ref.String(), Column: opts.Cursor, Problem: "cursor column does not exist", Hint: "name an existing column with --cursor"}
	}
	if opts.After != "" {
		where += fmt.Sprintf(" AND %s > %s", quoteIdent(c.Name), cursorLiteral(c, opts.After))
	}
	if opts.Until != "" {
		where += fmt.Sprintf(" AND %s <= %s", quoteIdent(c.Name), cursorLiteral(c, opts.Until))
	}
	return where, nil
}

// stream is one range read as Arrow batches (decoded by the embedded
// Batches' goroutine, one batch ahead of the consumer).
type stream struct {
	*routes.Batches
	ctx    context.Context // the Read call's, to tell a cancel from a failure
	e      *Endpoint
	info   *routes.TableInfo
	cols   []routes.Column
	opts   routes.ReadOptions
	where  string
	schema *arrow.Schema

	bytes     atomic.Int64
	relayRows atomic.Int64 // rows counted as Native bytes pass by (WriteTo)
}

var _ routes.Counter = (*stream)(nil)

func (s *stream) Rows() int64  { return s.Batches.Rows() + s.relayRows.Load() }
func (s *stream) Bytes() int64 { return s.bytes.Load() }

// sql selects the columns as exprs renders them, in blocks sized so one
// holds about a chunk.
func (s *stream) sql(exprs func(routes.Column) string) string {
	list := make([]string, len(s.cols))
	for i, c := range s.cols {
		list[i] = exprs(c)
	}
	block := min(max(s.opts.ChunkBytes/(16*len(s.cols)), 1024), 65536)
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s SETTINGS max_block_size = %d",
		strings.Join(list, ", "), ident(s.info.Ref), s.where, block)
}

func rawExpr(c routes.Column) string { return quoteIdent(c.Name) }

// decode runs the SELECT and turns its Native blocks into Arrow batches.
func (s *stream) decode(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	b := newBatcher(s.opts.Allocator, s.schema, s.opts.ChunkBytes, func(_ context.Context, rec arrow.RecordBatch, bytes int64) error {
		s.bytes.Add(bytes)
		return emit(rec)
	})
	defer b.release()
	err := s.e.conn.query(ctx, s.sql(selectExpr), b)
	if err == nil {
		err = b.flush(ctx)
	}
	return s.wrap(err)
}

func (s *stream) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return fmt.Errorf("read %s: %w", s.info.Ref, err)
}

// relayStream is a stream that can also hand over Native bytes.
type relayStream struct{ *stream }

var _ routes.NativeStream = (*relayStream)(nil)

func (s *relayStream) Format() string { return NativeFormat }

// WriteTo copies SELECT … FORMAT Native to w untouched, counting rows as
// the bytes pass (block headers are parsed, column data skipped).
func (s *relayStream) WriteTo(w io.Writer) (int64, error) {
	if !s.Claim() {
		return 0, errors.New("stream already read as Arrow")
	}
	err := s.wrap(s.relay(w))
	return s.bytes.Load(), err
}

func (s *relayStream) relay(w io.Writer) error {
	body, err := s.e.http.selectNative(s.ctx, s.sql(rawExpr))
	if err != nil {
		return err
	}
	defer body.Close()
	cw := &atomicCountWriter{w: w, n: &s.bytes}
	return scanNative(io.TeeReader(body, cw), &s.relayRows)
}

type atomicCountWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *atomicCountWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
