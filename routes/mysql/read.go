package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/where"
)

// Read opens one pipe: one streaming SELECT of the range on the text
// protocol, started lazily by the first Next and decoded into Arrow.
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
		ctx: ctx, e: e, info: r.Table, cols: cols, opts: opts,
		sql:    fmt.Sprintf("SELECT %s FROM %s WHERE %s", list, ident(r.Table.Ref), where),
		schema: (&routes.TableInfo{Columns: cols, Scheme: Scheme}).Schema(),
	}
	s.Batches = routes.NewBatches(ctx, s.schema, s.run)
	return s, nil
}

// whereClause is the range's predicate and the watermark bounds:
// cursor > After AND cursor <= Until.
func whereClause(r routes.Range, opts routes.ReadOptions) (string, error) {
	where := r.Predicate
	if where == "" {
		where = "TRUE"
	}
	bounds := []struct{ op, v string }{{">", opts.After}, {"<=", opts.Until}}
	for _, b := range bounds {
		if b.v == "" {
			continue
		}
		lit, err := cursorLiteral(r.Table, opts.Cursor, b.v)
		if err != nil {
			return "", err
		}
		where += fmt.Sprintf(" AND %s %s %s", quoteIdent(opts.Cursor), b.op, lit)
	}
	return where, nil
}

// stream is one SELECT pipe decoded into Arrow by a goroutine (the
// embedded Batches), one batch ahead of the consumer.
type stream struct {
	*routes.Batches
	ctx    context.Context // the Read call's, to tell a cancel from a failure
	e      *Endpoint
	info   *routes.TableInfo
	cols   []routes.Column
	opts   routes.ReadOptions
	sql    string
	schema *arrow.Schema
	bytes  atomic.Int64
}

var _ routes.Counter = (*stream)(nil)

func (s *stream) Bytes() int64 { return s.bytes.Load() }

// run queries the range and decodes every row; emit takes the batches.
func (s *stream) run(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	dec := newDecoder(s.info.Ref.String(), s.cols, s.schema, s.opts.Allocator, s.opts.ChunkBytes, s.e.opts, emit)
	defer dec.Release()
	if err := s.query(ctx, dec); err != nil {
		return s.wrap(err)
	}
	return s.wrap(dec.Close())
}

// query runs the SELECT on a connection of its own and feeds every row to
// the decoder. It talks to the driver directly (database/sql's Scan would
// convert each value once more): the driver streams rows off the socket,
// so only one packet is in memory at a time.
func (s *stream) query(ctx context.Context, dec *decoder) error {
	conn, err := s.e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot query", dc)
		}
		qctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rows, err := q.QueryContext(qctx, s.sql, nil)
		if err != nil {
			return err
		}
		if err = s.scan(rows, dec); err != nil {
			cancel() // drop the connection rather than drain the rest of the result
		}
		rows.Close()
		return err
	})
}

func (s *stream) scan(rows driver.Rows, dec *decoder) error {
	vals := make([]driver.Value, len(s.cols))
	before := int64(0)
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := dec.appendRow(vals); err != nil {
			return err
		}
		s.bytes.Add(dec.bytes - before)
		before = dec.bytes
	}
}

func (s *stream) wrap(err error) error {
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	var pe *routes.ProbeError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("read %s: %w", s.info.Ref, err)
}
