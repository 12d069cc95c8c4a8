package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/duck"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Options tune a Runner. Zero values are the defaults.
type Options struct {
	Budget    routes.Budget    // pipes and chunk size of transfers and reads
	Engine    duck.Options     // DuckDB memory limit, threads, spill folder
	Log       io.Writer        // warnings (on_change: warn); default os.Stderr
	Allocator memory.Allocator // Arrow memory; default memory.DefaultAllocator
	// SlotWALWarn: log_based tasks from PostgreSQL warn when their slot
	// retains more WAL (bytes; 0: pgwal.DefaultSlotWALWarn).
	SlotWALWarn int64
	Progress    *routes.Progress // counts transfers' rows for a progress line; nil counts nothing
	RunID       string           // Once's run id (weir once: the CLI's, so logs and the report agree); default a new one
	// ModelMemory is a model run's memory budget in bytes (0:
	// DefaultModelMemory, at most half a cgroup cap): DuckDB's memory_limit
	// is half of it, and it sizes the default max_batch_rows (bounded.go).
	ModelMemory int64
}

// Runner executes the tasks of one dagfile. It keeps one endpoint per
// connection open until Close; it is not safe for concurrent use.
type Runner struct {
	file *dagfile.File
	opts Options
	mu   sync.Mutex
	eps  map[string]routes.Endpoint
	// engine is the DuckDB kept between model runs (perhaps still opening)
	engine *engineFuture
}

// Load reads a dagfile (expanding the ${VAR} it finds in the environment)
// and returns a Runner for it. A malformed dagfile is bad input (errors.Is
// routes.ErrBadInput, exit 2); its error lists every problem with
// file:line:col. An unset variable is bad input only for the tasks whose
// connections use it, when they are selected or run (dagfile.File.Resolve).
func Load(path string, opts Options) (*Runner, error) {
	f, err := dagfile.LoadLazy(path, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", routes.ErrBadInput, err)
	}
	return New(f, opts), nil
}

// New returns a Runner for a parsed dagfile.
func New(f *dagfile.File, opts Options) *Runner {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	opts.Budget = opts.Budget.Fill()
	if opts.Engine.MemoryLimit == "" {
		opts.Engine.MemoryLimit = engineMemoryLimit(modelMemory(opts))
	}
	return &Runner{file: f, opts: opts, eps: map[string]routes.Endpoint{}}
}

// File is the dagfile the runner executes.
func (r *Runner) File() *dagfile.File { return r.file }

// Close closes every endpoint the runner opened.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for name, ep := range r.eps {
		errs = append(errs, ep.Close())
		delete(r.eps, name)
	}
	if r.engine != nil {
		errs = append(errs, r.engine.close())
		r.engine = nil
	}
	return errors.Join(errs...)
}

// task returns the named task, or bad input naming the defined ones or
// the unset variables of its connections.
func (r *Runner) task(name string) (*dagfile.Task, error) {
	if t := r.file.Task(name); t != nil {
		if err := r.file.Resolve(t); err != nil {
			return nil, fmt.Errorf("%w: task %s: %w", routes.ErrBadInput, name, err)
		}
		return t, nil
	}
	var names []string
	for _, t := range r.file.Tasks {
		names = append(names, t.Name)
	}
	return nil, routes.BadInput("%s has no task %q (tasks: %v)", r.file.Path, name, names)
}

// Once runs one batch of one task and reports it: a transfer copies its
// tables; a model reads what is new since its committed offsets, runs its
// SQL and commits the result with the new offsets; a stream commits batches
// of events until its source is drained (available_now) or ctx ends
// (continuous). The report is returned even with an error, as far as the
// run got.
func (r *Runner) Once(ctx context.Context, name string) (*Report, error) {
	t, err := r.task(name)
	if err != nil {
		return nil, err
	}
	rep := newReport(t)
	if r.opts.RunID != "" {
		rep.RunID = r.opts.RunID
	}
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	switch t.Kind {
	case dagfile.KindTransfer:
		err = r.runTransfer(ctx, t, rep)
	case dagfile.KindModel:
		err = r.runModel(ctx, t, rep)
	case dagfile.KindStream:
		err = r.runStream(ctx, t, rep)
	default:
		err = fmt.Errorf("%w: task %s: unknown kind %s", routes.ErrUnsupported, t.Name, t.Kind)
	}
	if rep.LagUnit == "" {
		rep.LagUnit = ranToHead(t)
	}
	rep.finish(err)
	if err != nil {
		return rep, fmt.Errorf("task %s: %w", t.Name, err)
	}
	return rep, nil
}

// ranToHead is the unit of the lag a transfer run reports: 0, as it read
// up to the head it polled (rows; a log_based transfer's WAL or binlog
// bytes). weir status measures the lag against the source's head now. A
// stream's run says no unit: its lag is often unknown (weir status).
func ranToHead(t *dagfile.Task) string {
	switch {
	case t.Kind == dagfile.KindTransfer && t.Transfer != nil && t.Transfer.Mode == string(routes.ModeLogBased):
		return "bytes"
	case t.Kind == dagfile.KindTransfer:
		return incremental.UnitRows
	}
	return ""
}

// endpoint opens a connection once per runner (a model whose source and
// sink share a connection uses one endpoint for both).
func (r *Runner) endpoint(ctx context.Context, conn string) (routes.Endpoint, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ep, ok := r.eps[conn]; ok {
		return ep, nil
	}
	c := r.file.Connections[conn]
	if c == nil {
		return nil, routes.BadInput("unknown connection %q", conn)
	}
	ep, err := routes.Open(ctx, ResolveURL(c.URL(), r.file.Dir))
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", conn, err)
	}
	r.eps[conn] = ep
	return ep, nil
}

// source opens a connection as a Source.
func (r *Runner) source(ctx context.Context, conn string) (routes.Source, error) {
	ep, err := r.endpoint(ctx, conn)
	if err != nil {
		return nil, err
	}
	if s, ok := routes.As[routes.Source](ep); ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: connection %s cannot be read from", routes.ErrUnsupported, conn)
}

// destination opens a connection as a Destination.
func (r *Runner) destination(ctx context.Context, conn string) (routes.Destination, error) {
	ep, err := r.endpoint(ctx, conn)
	if err != nil {
		return nil, err
	}
	if d, ok := routes.As[routes.Destination](ep); ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: connection %s cannot be written to", routes.ErrUnsupported, conn)
}

// tableRef turns a dagfile address into a routes table: schema and name
// (an object path, for file and object-store connections).
func tableRef(a dagfile.TableAddr) routes.TableRef {
	return routes.TableRef{Schema: a.Schema, Name: a.Table}
}

// warnf writes a warning line to the log.
func (r *Runner) warnf(format string, args ...any) {
	fmt.Fprintf(r.opts.Log, "weir: warning: "+format+"\n", args...)
}
