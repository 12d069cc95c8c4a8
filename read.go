package weir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

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
	schema *arrow.Schema // the output's
	need   []string      // columns read: the output's (schema), then the filter's
	filter *where.Filter
	expr   where.Expr // the filter, when the source takes a part of it
	pushed string     // the part the source applies, as it states it
	budget routes.Budget
	mem    memory.Allocator

	*routes.Parallel // the reader, once started
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

// start runs the pipes: at most Parallel at once, merged into the reader
// (routes.Parallel), which closes the source at its last Release.
func (r *plannedRead) start(ctx context.Context) {
	pipes := make([]routes.Produce, len(r.ranges))
	for i, rg := range r.ranges {
		pipes[i] = r.pipe(rg)
	}
	r.Parallel = routes.NewParallel(ctx, r.schema, r.budget.Parallel, pipes, func() { r.src.Close() })
}

// pipe reads one range, filtered and shaped to the output columns.
func (r *plannedRead) pipe(rg routes.Range) routes.Produce {
	return func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
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
			if err := emit(rec); err != nil {
				return err
			}
		}
		if err := s.Err(); err != nil {
			return fmt.Errorf("%s: %w", rg.Label, err)
		}
		return nil
	}
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
	rep.Rows, rep.Bytes, rep.ElapsedMS = r.Rows(), cw.n, time.Since(start).Milliseconds()
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
