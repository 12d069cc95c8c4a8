package incremental

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// Config sets up one consumer: one source table of one task.
type Config struct {
	Task      string            // the consumer group (task name)
	Name      string            // the source's name in the task: its view ("input")
	Source    routes.Source     // the table's endpoint
	Table     routes.TableRef   // the table
	Cursor    string            // the cursor column; "" = the source's default
	Start     Start             // where to begin without a committed mark
	Committed *Mark             // the committed mark, when there is one
	Allocator memory.Allocator  // for the read streams
	Budget    routes.Budget     // chunk size of the read streams
	Probe     *routes.TableInfo // the probed table, when the caller has it
}

// Consumer reads a table incrementally, Kafka-style: Poll returns the rows
// past its position, Commit hands the new position to the sink's commit,
// Seek moves it, Lag says how far it is behind the table's head.
type Consumer struct {
	cfg       Config
	info      *routes.TableInfo
	cursor    string
	pos       string
	page      string // the place inside a snapshot a first read pages through (Mark.Page)
	committed *Mark
}

// NewConsumer probes the table and places the consumer at the committed
// mark, else at cfg.Start.
func NewConsumer(ctx context.Context, cfg Config) (*Consumer, error) {
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	info := cfg.Probe
	if info == nil {
		var err error
		if info, err = cfg.Source.Probe(ctx, cfg.Table); err != nil {
			return nil, fmt.Errorf("source %s of task %s: %w", cfg.Table, cfg.Task, err)
		}
	}
	c := &Consumer{cfg: cfg, info: info, committed: cfg.Committed}
	var err error
	if c.cursor, err = consumerCursor(info, cfg.Cursor); err != nil {
		return nil, err
	}
	return c, c.place(ctx)
}

// consumerCursor picks the cursor: given, Iceberg's snapshot sequence, or
// the single-column primary key.
func consumerCursor(info *routes.TableInfo, cursor string) (string, error) {
	switch {
	case cursor != "":
	case strings.HasPrefix(info.Scheme, "iceberg"):
		return routes.SnapshotCursor, nil
	case len(info.PrimaryKey) == 1:
		cursor = info.PrimaryKey[0]
	default:
		return "", &routes.ProbeError{Table: info.Ref.String(), Problem: "no cursor to read it incrementally: the table has no single-column primary key",
			Hint: "set the model's cursor: to a column that grows with every insert or update (e.g. updated_at), give the table an increasing integer primary key, or use mode: replace"}
	}
	if _, ok := info.Column(cursor); !ok {
		return "", &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist"}
	}
	return cursor, nil
}

func (c *Consumer) place(ctx context.Context) error {
	switch {
	case c.committed != nil:
		c.pos, c.page = c.committed.Offset, c.committed.Page
	case c.cfg.Start.Latest:
		head, _, err := c.Head(ctx)
		c.pos = head
		return err
	default:
		c.pos = c.cfg.Start.Offset
	}
	return nil
}

// NoNullCursor refuses a nullable cursor column that holds NULLs, as an
// append or merge transfer does (window.go): a row with a NULL cursor is
// past no offset, so no batch would ever read it. An incremental run calls
// it once; status and reset do not.
func (c *Consumer) NoNullCursor(ctx context.Context) error {
	if c.cursor == routes.SnapshotCursor {
		return nil
	}
	return noNullCursor(ctx, c.cfg.Source, c.info, c.cursor)
}

// Info is the probed source table.
func (c *Consumer) Info() *routes.TableInfo { return c.info }

// Cursor is the column (or pseudo-column) the offsets are values of.
func (c *Consumer) Cursor() string { return c.cursor }

// Name is the source's name in its task.
func (c *Consumer) Name() string { return c.cfg.Name }

// Position is the offset the next Poll reads past.
func (c *Consumer) Position() string { return c.pos }

// Committed returns the mark committed in the sink, if any.
func (c *Consumer) Committed() (Mark, bool) {
	if c.committed == nil {
		return Mark{Rows: -1}, false
	}
	return *c.committed, true
}

// Seek moves the position; "" is the start of the table. It takes effect
// in the sink only when a batch read from there is committed.
func (c *Consumer) Seek(offset string) { c.pos, c.page = offset, "" }

// Page is the place inside a snapshot where a first read that pages
// (PollOptions.MaxRows over a routes.SnapshotPager) goes on: "" when none
// is under way.
func (c *Consumer) Page() string { return c.page }

// Head returns the table's highest offset now; ok is false for an empty table.
func (c *Consumer) Head(ctx context.Context) (string, bool, error) {
	cs, ok := routes.As[routes.CursorSource](c.cfg.Source)
	if !ok {
		return "", false, fmt.Errorf("%w: %s source cannot be read incrementally (no cursor maximum)", routes.ErrUnsupported, c.info.Scheme)
	}
	head, ok, err := cs.MaxCursor(ctx, c.info, c.cursor)
	if err != nil {
		return "", false, fmt.Errorf("head of %s: %w", c.info.Ref, err)
	}
	return head, ok, nil
}

// Batch is what one Poll read: the rows with From < cursor <= To.
type Batch struct {
	Source    string        // the source's name in the task
	From, To  string        // the window; To is the new position once committed
	Empty     bool          // nothing past From (Stream still carries the schema)
	Regressed bool          // the head fell below From: rows past it were deleted
	Base      int64         // rows at or below From now (PollOptions.Count); -1 when not counted
	Head      string        // the table's head when polled ("" for an empty table or At)
	Stream    routes.Stream // the rows; the caller releases it
	// Paging: a page of a first read of one snapshot (routes.SnapshotPager).
	// Its end is known once Stream is drained: To becomes the snapshot when
	// the page reached the snapshot's last row, else Page is the place the
	// next page starts at (and To stays From).
	Paging bool
	Page   string
	// Cut: PollOptions.Settled stopped the batch below the head, at To
	// (the rest waits for a later batch); not when MaxRows ended it first.
	Cut bool
}

// Mark is the mark committing b records: To, and the rows at or below it
// when b was counted.
func (b *Batch) Mark() Mark {
	if b.Base < 0 {
		return Mark{Offset: b.To, Rows: -1, Page: b.Page}
	}
	return Mark{Offset: b.To, Rows: b.Base + b.Rows(), Page: b.Page}
}

// Rows returns the rows the stream has delivered so far.
func (b *Batch) Rows() int64 { return StreamRows(b.Stream) }

// PollOptions bound one Poll.
type PollOptions struct {
	MaxRows int64  // at most this many rows (more only when rows tie on the last cursor value); 0: no bound
	Until   string // never read past this offset; "" = the head
	Count   bool   // count the rows at or below the position (Batch.Base): the delete signal of SQL sources
	// Settled, when set, is asked after the head is read and before any
	// row is: bounded says no row past offset is known to be whole (a
	// backfill under way on the table, Settled), and the batch stops there
	// (offset "": at the start). See Poll for why the order matters.
	Settled func(ctx context.Context) (offset string, bounded bool, err error)
}

// Poll returns the next batch past the position, up to the head (or
// opts.Until), at most opts.MaxRows rows. The position moves only with
// Commit. An empty table or nothing new is an Empty batch whose stream
// has the table's schema and no rows.
func (c *Consumer) Poll(ctx context.Context, opts PollOptions) (*Batch, error) {
	if err := routes.Checkpoint("poll"); err != nil {
		return nil, err
	}
	b := &Batch{Source: c.cfg.Name, From: c.pos, To: c.pos, Base: -1}
	if c.cursor == routes.SnapshotCursor && c.pos == "" {
		if p, ok := routes.As[routes.SnapshotPager](c.cfg.Source); ok && (c.page != "" || opts.MaxRows > 0) {
			return c.pollPage(ctx, b, p, opts.MaxRows) // a pending batch (Until) is the same page again
		}
		if opts.Until == "" {
			return c.pollSnapshot(ctx, b)
		}
	}
	head, ok, err := c.Head(ctx)
	if err != nil {
		return nil, err
	}
	b.Head = head
	if opts.Count {
		if b.Base, err = c.RowsThrough(ctx, c.pos); err != nil {
			return nil, err
		}
	}
	if opts.Until != "" && (!ok || Compare(opts.Until, head) < 0) {
		head, ok = opts.Until, true
	}
	if opts.Settled != nil && ok {
		// Race-free because of the order: the head was read before the
		// settled offset, and the rows are read after it. The settled
		// offset only grows (a bucket's progress only grows; a plan starts
		// after the table's committed offset, at or past every row there,
		// and ends at its head), and every row at or below it was
		// committed when it was read. So with a plan under way when
		// Settled reads, the rows read, at or below its offset, are all
		// there; with none, a plan made later begins past the offset the
		// table's rows are committed to, at or past the head read before,
		// and a plan made and finished since the head was read committed
		// all its rows before Settled read: either way no row at or below
		// the batch's end can still arrive.
		offset, bounded, err := opts.Settled(ctx)
		if err != nil {
			return nil, err
		}
		if bounded && (offset == "" || Compare(offset, head) < 0) {
			b.Cut = true
			if offset == "" || (c.pos != "" && Compare(offset, c.pos) <= 0) {
				b.Empty = true // nothing whole past the position yet
				b.Stream, err = c.open(ctx, b.From, b.To, nil)
				return b, err
			}
			head = offset
		}
	}
	switch {
	case !ok:
		b.Empty, b.Regressed = true, c.pos != ""
	case c.pos != "" && Compare(head, c.pos) <= 0:
		b.Empty, b.Regressed = true, Compare(head, c.pos) < 0
	default:
		if b.To, err = c.bound(ctx, head, opts.MaxRows); err != nil {
			return nil, err
		}
		// a batch MaxRows ended below the settled offset was not stopped
		// by it: the next batch reads on towards it
		b.Cut = b.Cut && b.To == head
	}
	b.Stream, err = c.open(ctx, b.From, b.To, nil)
	return b, err
}

// At returns an empty batch at the position: committing it records just
// the position (Seek, At and Commit are how `weir reset` moves a task).
func (c *Consumer) At(ctx context.Context) (*Batch, error) {
	b := &Batch{Source: c.cfg.Name, From: c.pos, To: c.pos, Empty: true, Base: -1, Page: c.page}
	var err error
	b.Stream, err = c.open(ctx, c.pos, c.pos, nil)
	return b, err
}

// pollSnapshot reads a whole Iceberg table from its start: every live row
// of its current snapshot (an incremental read from the start would skip
// the files a compaction or a copy-on-write delete rewrote). The plan pins
// a snapshot; the head read before and after it must agree, so the batch's
// end is the snapshot the plan pinned.
func (c *Consumer) pollSnapshot(ctx context.Context, b *Batch) (*Batch, error) {
	for range 5 {
		before, _, err := c.Head(ctx)
		if err != nil {
			return nil, err
		}
		ranges, err := c.cfg.Source.Plan(ctx, c.info, routes.PlanOptions{Pipes: 1})
		if err != nil {
			return nil, fmt.Errorf("plan %s: %w", c.info.Ref, err)
		}
		head, ok, err := c.Head(ctx)
		if err != nil {
			return nil, err
		}
		if head != before {
			continue // a commit landed meanwhile: plan again
		}
		b.To, b.Head, b.Empty = head, head, !ok
		if !ok {
			b.Stream, err = emptyStream(c.info.Schema(), nil)
			return b, err
		}
		b.Stream, err = routes.NewSerial(ctx, c.cfg.Source, ranges, routes.ReadOptions{ChunkBytes: c.cfg.Budget.ChunkBytes, Allocator: c.cfg.Allocator})
		return b, err
	}
	return nil, fmt.Errorf("%s kept changing while its snapshot was planned; retry", c.info.Ref)
}

// Commit commits the batch's end as the position, in stage's commit (the
// sink's own transaction), with the task's other sources' marks and st's
// RunID and Rows. The consumer never writes state by itself.
func (c *Consumer) Commit(ctx context.Context, stage routes.Stage, b *Batch, st routes.State) error {
	return CommitAll(ctx, stage, st, map[*Consumer]*Batch{c: b})
}

// CommitAll commits the batches of one task's consumers in one stage
// commit, then advances each consumer's position.
func CommitAll(ctx context.Context, stage routes.Stage, st routes.State, batches map[*Consumer]*Batch) error {
	marks, task, cursor := Marks{}, "", ""
	for c, b := range batches {
		marks[c.cfg.Name] = b.Mark()
		task, cursor = c.cfg.Task, c.cursor
	}
	full := TaskState(task, cursor, marks, st.RunID, st.Rows)
	if err := stage.Commit(ctx, full); err != nil {
		return err
	}
	for c, b := range batches {
		mk := b.Mark()
		c.pos, c.page, c.committed = b.To, mk.Page, &mk
	}
	return nil
}

// open reads (from, to] as one stream (the plan's ranges one after another).
// from == to is an empty window that still carries the source's schema; an
// empty table (to == "") is read as no rows at all, so rows that arrive
// after its head was taken wait for the next Poll.
func (c *Consumer) open(ctx context.Context, from, to string, cols []string) (routes.Stream, error) {
	if to == "" {
		return emptyStream(c.info.Schema(), cols)
	}
	plan := routes.PlanOptions{Pipes: 1, Cursor: c.cursor, After: from}
	ranges, err := c.cfg.Source.Plan(ctx, c.info, plan)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", c.info.Ref, err)
	}
	ro := routes.ReadOptions{Columns: cols, Cursor: c.cursor, After: from, Until: to,
		ChunkBytes: c.cfg.Budget.ChunkBytes, Allocator: c.cfg.Allocator}
	return routes.NewSerial(ctx, c.cfg.Source, ranges, ro)
}

// ReadTable reads a whole table as one stream, the plan's ranges one after
// another: for full recomputes over tables without a cursor.
func ReadTable(ctx context.Context, src routes.Source, info *routes.TableInfo, budget routes.Budget, mem memory.Allocator) (routes.Stream, error) {
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", info.Ref, err)
	}
	return routes.NewSerial(ctx, src, ranges, routes.ReadOptions{ChunkBytes: budget.ChunkBytes, Allocator: mem})
}

// StreamRows returns the rows a stream from Poll or ReadTable delivered.
func StreamRows(s routes.Stream) int64 {
	switch s := s.(type) {
	case *routes.Serial:
		return s.Rows()
	case *pageStream:
		return s.rows
	}
	return 0
}

// emptyStream has the table's schema (projected on cols) and no rows.
func emptyStream(schema *arrow.Schema, cols []string) (routes.Stream, error) {
	if len(cols) > 0 {
		var fields []arrow.Field
		for _, name := range cols {
			if i := schema.FieldIndices(name); len(i) > 0 {
				fields = append(fields, schema.Field(i[0]))
			}
		}
		schema = arrow.NewSchema(fields, nil)
	}
	r, err := array.NewRecordReader(schema, nil)
	if err != nil {
		return nil, fmt.Errorf("empty stream: %w", err)
	}
	return r, nil
}

// RowsThrough counts the rows whose cursor is at or below offset, by
// reading the cursor column: the delete signal of SQL sources (a count that
// fell since it was committed means rows below the offset were deleted).
func (c *Consumer) RowsThrough(ctx context.Context, offset string) (int64, error) {
	if offset == "" {
		return 0, nil
	}
	s, err := c.open(ctx, "", offset, []string{c.cursor})
	if err != nil {
		return 0, err
	}
	defer s.Release()
	var n int64
	for s.Next() {
		n += s.RecordBatch().NumRows()
	}
	return n, s.Err()
}
