package weir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
	"github.com/weirhq/weir/routes/where"
)

// ReadOptions shape a Read. Zero values are the defaults.
type ReadOptions struct {
	Columns    []string // projection, in this order; nil means every column
	Where      string   // filter, e.g. "amount > 100 AND status IS NOT NULL" (package where)
	Parallel   int      // pipes (default: CPU and memory aware)
	ChunkBytes int      // bytes per batch and pipe (default 4 MiB, thinned under a memory cap)
	Allocator  memory.Allocator
}

// Read streams a table of src (a URL) as Arrow record batches, from the
// source's parallel pipes: probe, plan, one Read per range, merged into one
// reader that holds at most one batch per pipe in flight. Batches arrive in
// no particular order. Where is applied on the client, except the part a
// source that implements where.Pushdown (postgres, mysql, clickhouse,
// iceberg) evaluates itself: that part follows the source's own rules
// (collation, NaN order), so the rows are those of the server's own
// SELECT … WHERE (docs/objstore.md, Filters). Errors in Columns or
// Where are bad input (routes.ErrBadInput), found before a row moves.
// Release the reader when done: it closes the source.
func Read(ctx context.Context, src, table string, opts ReadOptions) (array.RecordReader, error) {
	r, err := openRead(ctx, src, table, opts)
	if err != nil {
		return nil, err
	}
	r.start(ctx)
	return r, nil
}

// tableRef parses a table name; a path with more dots than schema.table
// ("in/orders.csv.gz") is kept whole for object stores.
func tableRef(table string) routes.TableRef {
	ref, err := routes.ParseTableRef(strings.TrimSpace(table))
	if err != nil {
		return routes.TableRef{Name: strings.TrimSpace(table)}
	}
	return ref
}

// plannedRead is a probed and planned Read, before its pipes start.
type plannedRead struct {
	src    routes.Source
	info   *routes.TableInfo
	ranges []routes.Range
	need   []string // columns read: the output's (mergedReader.schema), then the filter's
	filter *where.Filter
	expr   where.Expr // the filter, when the source takes a part of it
	pushed string     // the part the source applies, as it states it
	budget routes.Budget
	mem    memory.Allocator
	mergedReader
}

func openRead(ctx context.Context, src, table string, opts ReadOptions) (*plannedRead, error) {
	s, err := routes.OpenSource(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	r := &plannedRead{src: s, budget: routes.Budget{Parallel: opts.Parallel, ChunkBytes: opts.ChunkBytes}.Fill(), mem: opts.Allocator}
	if r.mem == nil {
		r.mem = memory.DefaultAllocator
	}
	if err := r.plan(ctx, tableRef(table), opts); err != nil {
		s.Close()
		return nil, err
	}
	return r, nil
}

func (r *plannedRead) plan(ctx context.Context, ref routes.TableRef, opts ReadOptions) error {
	info, err := r.src.Probe(ctx, ref)
	if err != nil {
		return err
	}
	r.info = info
	if err := r.project(opts.Columns); err != nil {
		return err
	}
	if err := r.compileWhere(opts.Where); err != nil {
		return err
	}
	r.ranges, err = r.src.Plan(ctx, info, routes.PlanOptions{Pipes: r.budget.Parallel})
	if err != nil {
		return fmt.Errorf("plan %s: %w", ref, err)
	}
	return nil
}

// project checks the columns and sets the output schema.
func (r *plannedRead) project(cols []string) error {
	if len(cols) == 0 {
		for _, c := range r.info.Columns {
			cols = append(cols, c.Name)
		}
	}
	sub := &routes.TableInfo{Scheme: r.info.Scheme}
	for _, name := range cols {
		c, ok := r.info.Column(name)
		if !ok {
			return &routes.ProbeError{Table: r.info.Ref.String(), Column: name, Problem: "no such column", Hint: "list columns that exist with --columns"}
		}
		if slices.Contains(r.need, name) {
			return routes.BadInput("column %q is listed twice", name)
		}
		sub.Columns = append(sub.Columns, c)
		r.need = append(r.need, name)
	}
	r.schema = sub.Schema()
	return nil
}

func (r *plannedRead) compileWhere(text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	e, err := where.Parse(text)
	if err != nil {
		return err
	}
	if r.filter, err = where.Compile(e, r.info.Schema()); err != nil {
		return err
	}
	for _, c := range r.filter.Columns() {
		if !slices.Contains(r.need, c) {
			r.need = append(r.need, c)
		}
	}
	if pd, ok := routes.As[where.Pushdown](r.src); ok {
		r.expr, r.pushed = e, pd.PushDown(e, r.info.Schema())
	}
	// what the source evaluates itself is its to judge (its collation, its
	// NaN order): the client applies only the rest
	if res, ok := routes.As[where.Residualer](r.src); ok && r.pushed != "" {
		rest := res.Residual(e, r.info.Schema())
		if rest == nil {
			r.filter = nil
		} else if r.filter, err = where.Compile(rest, r.info.Schema()); err != nil {
			return err
		}
	}
	return nil
}

// openPipe opens one range, pushing the filter down when the source takes it.
func (r *plannedRead) openPipe(ctx context.Context, rg routes.Range) (routes.Stream, error) {
	opts := routes.ReadOptions{Columns: r.need, ChunkBytes: r.budget.ChunkBytes, Allocator: r.mem}
	if pd, ok := routes.As[where.Pushdown](r.src); ok && r.pushed != "" {
		return pd.ReadWhere(ctx, rg, opts, r.expr)
	}
	return r.src.Read(ctx, rg, opts)
}

// shape filters a batch and rebinds it to the output columns; nil when no
// row is left.
func (r *plannedRead) shape(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if r.filter != nil {
		kept, err := r.filter.Apply(ctx, rec, r.mem)
		if err != nil || kept == nil {
			return nil, err
		}
		defer kept.Release()
		rec = kept
	}
	cols := make([]arrow.Array, r.schema.NumFields())
	for i, f := range r.schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("the source returned no column %q", f.Name)
		}
		cols[i] = rec.Column(idx[0])
	}
	return array.NewRecordBatch(r.schema, cols, rec.NumRows()), nil
}

// start runs the pipes: at most Parallel at once, each handing its batches
// to the reader through a channel of one slot per pipe.
func (r *plannedRead) start(ctx context.Context) {
	ctx, r.cancel = context.WithCancel(ctx)
	r.batches = make(chan arrow.RecordBatch, r.budget.Parallel)
	r.done = make(chan struct{})
	r.refs.Store(1)
	go func() {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(r.budget.Parallel)
		for _, rg := range r.ranges {
			g.Go(func() error { return r.pipe(gctx, rg) })
		}
		err := g.Wait()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		r.finish(err)
	}()
}

func (r *plannedRead) pipe(ctx context.Context, rg routes.Range) error {
	s, err := r.openPipe(ctx, rg)
	if err != nil {
		return fmt.Errorf("read %s: %w", rg.Label, err)
	}
	defer s.Release()
	for s.Next() {
		rec, err := r.shape(ctx, s.RecordBatch())
		if err != nil {
			return fmt.Errorf("%s: %w", rg.Label, err)
		}
		if rec == nil || rec.NumRows() == 0 {
			if rec != nil {
				rec.Release()
			}
			continue
		}
		select {
		case r.batches <- rec:
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s: %w", rg.Label, err)
	}
	return nil
}

// Release frees the reader at its last reference: it stops the pipes,
// drops undelivered batches and closes the source.
func (r *plannedRead) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.stop()
	r.src.Close()
}

// mergedReader is the array.RecordReader side of a Read.
type mergedReader struct {
	schema  *arrow.Schema
	batches chan arrow.RecordBatch
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
	err     error // set before batches is closed
	cur     arrow.RecordBatch
	refs    atomic.Int64
	rows    atomic.Int64
}

func (m *mergedReader) finish(err error) {
	m.err = err
	close(m.batches)
	close(m.done)
}

func (m *mergedReader) Schema() *arrow.Schema          { return m.schema }
func (m *mergedReader) RecordBatch() arrow.RecordBatch { return m.cur }
func (m *mergedReader) Record() arrow.RecordBatch      { return m.cur }
func (m *mergedReader) Retain()                        { m.refs.Add(1) }

// Next waits for the next batch from any pipe.
func (m *mergedReader) Next() bool {
	m.releaseCur()
	b, ok := <-m.batches
	if !ok {
		return false
	}
	m.cur = b
	m.rows.Add(b.NumRows())
	return true
}

// Err is the first pipe's error (or the context's), once Next is false.
func (m *mergedReader) Err() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

func (m *mergedReader) releaseCur() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

func (m *mergedReader) stop() {
	m.once.Do(func() {
		m.cancel()
		for b := range m.batches {
			b.Release()
		}
		<-m.done
		m.releaseCur()
	})
}

// ReadReport is what ReadTo wrote; it is `weir read --json`'s output.
type ReadReport struct {
	Source    string   `json:"source"`
	Table     string   `json:"table"`
	Format    string   `json:"format"`
	Columns   []string `json:"columns"`
	Where     string   `json:"where,omitempty"`
	Pushed    string   `json:"pushed_down,omitempty"` // the part of Where the source applied
	Rows      int64    `json:"rows"`
	Bytes     int64    `json:"bytes"` // written
	Parallel  int      `json:"parallel"`
	ElapsedMS int64    `json:"elapsed_ms"`
}

// ReadTo streams Read's rows into w as a file of format
// (fileformat.Parquet, CSVGzip or CSV), in constant memory.
func ReadTo(ctx context.Context, src, table string, w io.Writer, format string, opts ReadOptions) (*ReadReport, error) {
	start := time.Now()
	r, err := openRead(ctx, src, table, opts)
	if err != nil {
		return nil, err
	}
	rep := &ReadReport{Source: routes.Redact(src), Table: r.info.Ref.String(), Format: format, Columns: r.need[:r.schema.NumFields()],
		Where: opts.Where, Pushed: r.pushed, Parallel: r.budget.Parallel}
	cw := &countingWriter{w: w}
	enc, err := fileformat.NewEncoder(cw, r.schema, format, fileformat.EncoderOptions{RowGroupBytes: int64(r.budget.ChunkBytes), Allocator: r.mem})
	if err != nil {
		r.src.Close()
		return nil, routes.BadInput("%v", err)
	}
	r.start(ctx)
	err = encodeAll(r, enc)
	r.Release()
	rep.Rows, rep.Bytes, rep.ElapsedMS = r.rows.Load(), cw.n, time.Since(start).Milliseconds()
	return rep, err
}

func encodeAll(r *plannedRead, enc fileformat.Encoder) error {
	for r.Next() {
		if err := enc.Write(r.RecordBatch()); err != nil {
			enc.Discard()
			return fmt.Errorf("encode: %w", err)
		}
	}
	if err := r.Err(); err != nil {
		enc.Discard()
		return err
	}
	return enc.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.ErrShortWrite) {
		return n, fmt.Errorf("write output: %w", err)
	}
	return n, err
}
