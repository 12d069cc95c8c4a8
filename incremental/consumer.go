package incremental

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// A model task is a consumer group, Kafka-style: its position in each source
// table is committed into its sink, in the sink's own commit, as the
// routes.State row keyed by StateKey(task) — in SQL sinks the _weir_state
// row (dest_table = the sink table, source = "task:<name>"), in Iceberg the
// snapshot summary and table properties. The position becomes current only
// when the data does: a run killed before its commit re-reads the same rows.
//
// The State of a task's commit:
//
//	SourceID   "task:<name>"
//	Cursor     the cursor column of a single-source task ("" for several)
//	Watermark  the offset of a single-source task ("" for several)
//	Position   every source's mark, URL-query encoded and sorted:
//	           "input=1200&input.rows=1200" or "c=7&o=12"
//
// An offset is the text-encoded cursor value up to which rows were
// consumed, inclusive: an integer or timestamp cursor value for SQL
// sources, the snapshot sequence number for Iceberg. The empty offset is
// the start of the table.

// StatePrefix starts the SourceID of every task's state.
const StatePrefix = "task:"

// StateKey is the routes.State.SourceID under which a task's position is
// committed into its sink (and loaded back with routes.StateReader).
func StateKey(task string) string { return StatePrefix + task }

// Mark is a task's committed place in one source.
type Mark struct {
	Offset string // consumed through this offset, inclusive; "" = nothing yet
	Rows   int64  // rows at or below Offset when committed; -1 when not counted
	// Page is the place inside the snapshot a first read is paging
	// through (routes.SnapshotPager), "<snapshot>:<rows consumed>"; ""
	// when no first read is under way. Offset stays "" until the last
	// page, whose commit moves it to the snapshot.
	Page string
}

// Marks are a task's places in its sources, by source (view) name.
type Marks map[string]Mark

// Encode renders the marks as sorted URL query text: "input=12&input.rows=40".
func (m Marks) Encode() string {
	q := url.Values{}
	for name, mk := range m {
		q.Set(name, mk.Offset)
		if mk.Page != "" {
			q.Set(name+".page", mk.Page)
		}
		if mk.Rows >= 0 {
			q.Set(name+".rows", strconv.FormatInt(mk.Rows, 10))
		}
	}
	return q.Encode() // url.Values.Encode sorts by key
}

// DecodeMarks parses Encode's text.
func DecodeMarks(s string) (Marks, error) {
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("decode offsets %q: %w", s, err)
	}
	m := Marks{}
	for k, v := range q {
		if !strings.HasSuffix(k, ".rows") && !strings.HasSuffix(k, ".page") && len(v) > 0 {
			m[k] = Mark{Offset: v[0], Rows: rowsOf(q, k), Page: q.Get(k + ".page")}
		}
	}
	return m, nil
}

func rowsOf(q url.Values, name string) int64 {
	n, err := strconv.ParseInt(q.Get(name+".rows"), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// Names returns the sources of m, sorted.
func (m Marks) Names() []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TaskState builds the routes.State a task commits with its data.
func TaskState(task, cursor string, marks Marks, runID string, rows int64) routes.State {
	st := routes.State{SourceID: StateKey(task), Position: marks.Encode(), RunID: runID, Rows: rows}
	if len(marks) == 1 {
		for _, mk := range marks {
			st.Cursor, st.Watermark = cursor, mk.Offset
		}
	}
	return st
}

// LoadMarks reads the marks a task last committed into table; found is
// false before its first commit.
func LoadMarks(ctx context.Context, dst routes.Destination, table routes.TableRef, task string) (Marks, bool, error) {
	sr, ok := routes.As[routes.StateReader](dst)
	if !ok {
		return nil, false, fmt.Errorf("%w: the sink keeps no state, so a task cannot keep its offsets there", routes.ErrUnsupported)
	}
	st, found, err := sr.LoadState(ctx, table, StateKey(task))
	if err != nil || !found {
		return Marks{}, false, err
	}
	m, err := DecodeMarks(st.Position)
	if err != nil {
		return nil, false, fmt.Errorf("state of task %s in %s: %w", task, table, err)
	}
	return m, true, nil
}

// Start is where a consumer begins when its group has committed nothing:
// auto.offset.reset.
type Start struct {
	Latest bool   // skip history: begin at the source's head
	Offset string // begin after this offset; "" with !Latest = earliest
}

// ParseStart parses earliest, latest or an offset.
func ParseStart(s string) (Start, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "earliest":
		return Start{}, nil
	case "latest":
		return Start{Latest: true}, nil
	}
	if strings.ContainsAny(s, "\n\r") {
		return Start{}, routes.BadInput("bad offset %q: use earliest, latest or an offset", s)
	}
	return Start{Offset: s}, nil
}

// String renders the start as ParseStart reads it.
func (s Start) String() string {
	switch {
	case s.Latest:
		return "latest"
	case s.Offset == "":
		return "earliest"
	}
	return s.Offset
}

// SnapshotCursor is the pseudo-column whose values are Iceberg snapshot
// sequence numbers (the Iceberg route's iceberg.SnapshotCursor).
const SnapshotCursor = "_weir_snapshot"

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
		return SnapshotCursor, nil
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
	if c.cursor == SnapshotCursor {
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

// Lag is how far a consumer is behind its table's head.
type Lag struct {
	Position string `json:"position"`
	Head     string `json:"head"`
	Behind   int64  `json:"behind"` // in Unit
	Unit     string `json:"unit"`   // "rows" (counted, or the row estimate from the start), "offsets" (integer cursor distance), "seconds" (time cursors)
	Known    bool   `json:"known"`  // false when Behind could not be computed
}

// The units of a Lag.
const (
	UnitRows    = "rows"
	UnitOffsets = "offsets"
	UnitSeconds = "seconds"
)

// Lag compares the position with the head. Where the source counts the
// rows of a cursor window (routes.RangeCounter: PostgreSQL's count(*),
// Iceberg's snapshot summaries) it is the rows past the position; else the
// difference of integer offsets, seconds for time cursors, the table's
// row estimate from the start of the table.
func (c *Consumer) Lag(ctx context.Context) (Lag, error) {
	head, ok, err := c.Head(ctx)
	if err != nil {
		return Lag{Position: c.pos, Unit: UnitOffsets, Known: true}, err
	}
	if !ok {
		head = ""
	}
	return c.LagTo(ctx, head)
}

// LagTo is Lag against a head already read ("" for an empty table).
func (c *Consumer) LagTo(ctx context.Context, head string) (Lag, error) {
	return CountLag(ctx, c.cfg.Source, c.info, c.cursor, c.pos, head)
}

// CountLag is how far position is behind head in a table of src: the rows
// between them where src counts them (routes.RangeCounter), else as
// LagBetween.
func CountLag(ctx context.Context, src routes.Source, info *routes.TableInfo, cursor, position, head string) (Lag, error) {
	l := Lag{Position: position, Head: head, Unit: UnitOffsets, Known: true}
	if rc, ok := routes.As[routes.RangeCounter](src); ok && cursor != "" {
		l.Unit = UnitRows
		if head == "" || Compare(head, position) <= 0 {
			return l, nil
		}
		n, err := rc.CountRange(ctx, info, cursor, position, head)
		if err == nil {
			l.Behind = n
			return l, nil
		}
		if !errors.Is(err, routes.ErrUnsupported) {
			return l, err
		}
	}
	return LagBetween(position, head, info.RowEstimate), nil
}

// LagBetween compares two offsets of a table as Lag does; estimate is the
// table's row estimate, used when position is the start of the table.
func LagBetween(position, head string, estimate int64) Lag {
	l := Lag{Position: position, Head: head, Unit: "offsets", Known: true}
	if head == "" || Compare(head, position) <= 0 {
		return l
	}
	return lagBetween(l, estimate)
}

func lagBetween(l Lag, estimate int64) Lag {
	h, errH := strconv.ParseInt(l.Head, 10, 64)
	p, errP := strconv.ParseInt(l.Position, 10, 64)
	switch {
	case errH == nil && errP == nil:
		l.Behind = h - p
	case l.Position == "" && estimate > 0:
		l.Behind, l.Unit = estimate, UnitRows
	case l.Position == "" && errH == nil:
		l.Behind = h
	default:
		ht, okH := parseTime(l.Head)
		pt, okP := parseTime(l.Position)
		l.Behind, l.Unit, l.Known = int64(ht.Sub(pt).Seconds()), UnitSeconds, okH && okP
	}
	return l
}

var timeLayouts = []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999", "2006-01-02"}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
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
}

// Poll returns the next batch past the position, up to the head (or
// opts.Until), at most opts.MaxRows rows. The position moves only with
// Commit. An empty table or nothing new is an Empty batch whose stream
// has the table's schema and no rows.
func (c *Consumer) Poll(ctx context.Context, opts PollOptions) (*Batch, error) {
	routes.Checkpoint("poll")
	b := &Batch{Source: c.cfg.Name, From: c.pos, To: c.pos, Base: -1}
	if c.cursor == SnapshotCursor && c.pos == "" {
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
	switch {
	case !ok:
		b.Empty, b.Regressed = true, c.pos != ""
	case c.pos != "" && Compare(head, c.pos) <= 0:
		b.Empty, b.Regressed = true, Compare(head, c.pos) < 0
	default:
		if b.To, err = c.bound(ctx, head, opts.MaxRows); err != nil {
			return nil, err
		}
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
		b.Stream, err = newChain(ctx, c.cfg.Source, ranges, routes.ReadOptions{ChunkBytes: c.cfg.Budget.ChunkBytes, Allocator: c.cfg.Allocator})
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
	return newChain(ctx, c.cfg.Source, ranges, ro)
}

// ReadTable reads a whole table as one stream, the plan's ranges one after
// another: for full recomputes over tables without a cursor.
func ReadTable(ctx context.Context, src routes.Source, info *routes.TableInfo, budget routes.Budget, mem memory.Allocator) (routes.Stream, error) {
	ranges, err := src.Plan(ctx, info, routes.PlanOptions{Pipes: 1})
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", info.Ref, err)
	}
	return newChain(ctx, src, ranges, routes.ReadOptions{ChunkBytes: budget.ChunkBytes, Allocator: mem})
}

// StreamRows returns the rows a stream from Poll or ReadTable delivered.
func StreamRows(s routes.Stream) int64 {
	switch s := s.(type) {
	case *chainStream:
		return s.rows.Load()
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
	s := &chainStream{ctx: context.Background(), cur: r, schema: schema}
	s.refs.Store(1)
	return s, nil
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

// bound returns the offset that ends a batch of at most maxRows rows past
// the position (rows tying on it all included), or head.
func (c *Consumer) bound(ctx context.Context, head string, maxRows int64) (string, error) {
	if maxRows <= 0 {
		return head, nil
	}
	if rc, ok := routes.As[routes.RangeCounter](c.cfg.Source); ok {
		// A count (an index range scan) is cheaper than the cursor column.
		if n, err := rc.CountRange(ctx, c.info, c.cursor, c.pos, head); err == nil && n <= maxRows {
			return head, nil
		}
	}
	s, err := c.open(ctx, c.pos, head, []string{c.cursor})
	if err != nil {
		return "", err
	}
	defer s.Release()
	h := &int64Heap{}
	var format func(int64) string
	var n int64
	for s.Next() {
		col := s.RecordBatch().Column(0)
		if format == nil {
			if format, err = cursorFormat(col.DataType()); err != nil {
				return "", fmt.Errorf("max_batch_rows on %s.%s: %w", c.info.Ref, c.cursor, err)
			}
		}
		n += int64(col.Len())
		pushSmallest(h, col, maxRows)
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if n <= maxRows || h.Len() == 0 {
		return head, nil
	}
	return format((*h)[0]), nil
}

// pushSmallest keeps the maxRows smallest cursor values of col in h.
func pushSmallest(h *int64Heap, col arrow.Array, maxRows int64) {
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			continue
		}
		v := int64Value(col, i)
		switch {
		case int64(h.Len()) < maxRows:
			heap.Push(h, v)
		case v < (*h)[0]:
			(*h)[0] = v
			heap.Fix(h, 0)
		}
	}
}

// int64Heap is a max-heap.
type int64Heap []int64

func (h int64Heap) Len() int           { return len(h) }
func (h int64Heap) Less(i, j int) bool { return h[i] > h[j] }
func (h int64Heap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *int64Heap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *int64Heap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func int64Value(col arrow.Array, i int) int64 {
	switch a := col.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return int64(a.Value(i))
	case *array.Uint16:
		return int64(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Date32:
		return int64(a.Value(i))
	}
	return 0
}

// Boundable reports whether max_batch_rows can bound a batch of the
// table by its cursor column: an integer, timestamp or date column.
func Boundable(info *routes.TableInfo, cursor string) bool {
	s := info.Schema()
	i := s.FieldIndices(cursor)
	if len(i) == 0 {
		return false
	}
	_, err := cursorFormat(s.Field(i[0]).Type)
	return err == nil
}

// cursorFormat renders a cursor value the way sources encode offsets:
// integers in decimal, times as "2006-01-02 15:04:05.000000" in UTC (with
// "+00" when zoned), dates as "2006-01-02".
func cursorFormat(t arrow.DataType) (func(int64) string, error) {
	switch t := t.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type:
		return func(v int64) string { return strconv.FormatInt(v, 10) }, nil
	case *arrow.TimestampType:
		zone := ""
		if t.TimeZone != "" {
			zone = "+00"
		}
		return func(v int64) string {
			return arrow.Timestamp(v).ToTime(t.Unit).UTC().Format("2006-01-02 15:04:05.000000") + zone
		}, nil
	case *arrow.Date32Type:
		return func(v int64) string { return arrow.Date32(v).ToTime().Format("2006-01-02") }, nil
	}
	return nil, fmt.Errorf("%w: a batch bound needs an integer, timestamp or date cursor, not %s", routes.ErrUnsupported, t)
}

// chainStream reads ranges one after another as one stream, opening each
// only when the previous one ends, and counts the rows it delivers.
type chainStream struct {
	ctx    context.Context
	src    routes.Source
	ranges []routes.Range
	opts   routes.ReadOptions
	cur    routes.Stream
	schema *arrow.Schema
	refs   atomic.Int64
	rows   atomic.Int64
	err    error
}

func newChain(ctx context.Context, src routes.Source, ranges []routes.Range, opts routes.ReadOptions) (*chainStream, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("plan returned no range")
	}
	s := &chainStream{ctx: ctx, src: src, ranges: ranges, opts: opts}
	s.refs.Store(1)
	if err := s.openNext(); err != nil {
		return nil, err
	}
	s.schema = s.cur.Schema()
	return s, nil
}

func (s *chainStream) openNext() error {
	r := s.ranges[0]
	s.ranges = s.ranges[1:]
	st, err := s.src.Read(s.ctx, r, s.opts)
	if err != nil {
		return fmt.Errorf("read %s: %w", r.Label, err)
	}
	s.cur = st
	return nil
}

func (s *chainStream) Schema() *arrow.Schema { return s.schema }
func (s *chainStream) Retain()               { s.refs.Add(1) }

// Release frees the open range's stream at the last reference.
func (s *chainStream) Release() {
	if s.refs.Add(-1) == 0 && s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

// Next moves to the next batch, across ranges.
func (s *chainStream) Next() bool {
	for s.cur != nil && s.err == nil {
		if s.cur.Next() {
			s.rows.Add(s.cur.RecordBatch().NumRows())
			return true
		}
		if s.err = s.cur.Err(); s.err != nil || len(s.ranges) == 0 {
			return false
		}
		s.cur.Release()
		s.cur = nil
		s.err = s.openNext()
	}
	return false
}

func (s *chainStream) RecordBatch() arrow.RecordBatch {
	if s.cur == nil {
		return nil
	}
	return s.cur.RecordBatch()
}

// Record is the deprecated name of RecordBatch.
func (s *chainStream) Record() arrow.RecordBatch { return s.RecordBatch() }

func (s *chainStream) Err() error {
	if s.err == nil && s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return s.err
}

var _ routes.Stream = (*chainStream)(nil)
