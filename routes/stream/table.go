package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// ChunkSource is a source whose items are the rows of a table, handed over
// a chunk at a time as Arrow (column types kept: a bigint near 2^63, a
// timestamp with microseconds, a decimal land as they are, not as JSON
// text). The runner commits each chunk as one batch with Cursor(), which
// after NextChunk is the position just after that chunk's last row. Next
// is not used.
type ChunkSource interface {
	Source
	// NextChunk plans and opens the next chunk past the cursor; nil when
	// the table holds no row past it now. The caller reads the stream to
	// its end and releases it.
	NextChunk(ctx context.Context) (routes.Stream, error)
}

// TableOptions name what a table source reads.
type TableOptions struct {
	Table      routes.TableRef
	Cursor     string // the keyset column: integer, decimal, date, timestamp or text
	ChunkSize  int    // rows per chunk, ≥ 1 (ties on a non-unique key may add more)
	ChunkBytes int    // Arrow batch size inside a chunk; 0: routes.DefaultChunkBytes
	Allocator  memory.Allocator
}

// Table is a watermark-chunk source over a SQL table (docs/streams.md):
// keyset paging in the order of (cursor column, primary key columns), one
// chunk of ChunkSize rows per commit. The cursor is the key of the last
// row committed: its one value as text, or a JSON array of the values
// when the key has several columns. Rows inserted behind the cursor (a
// key below the last committed one) are never read: the cursor column
// must grow with new rows.
type Table struct {
	src   routes.Source
	ks    routes.KeysetSource
	info  *routes.TableInfo
	key   []string
	after []string // the key of the last row handed out; nil: the start
	opts  TableOptions
	ended bool // the last NextChunk found nothing past the cursor
}

var (
	_ ChunkSource = (*Table)(nil)
	_ Drainer     = (*Table)(nil)
)

// OpenTable opens a table source on a SQL endpoint URL and probes the
// table: a missing table or cursor column, or a cursor of a type that
// cannot page, is bad input before any row moves.
func OpenTable(ctx context.Context, raw string, opts TableOptions) (*Table, error) {
	if opts.ChunkSize < 1 {
		return nil, routes.BadInput("table source %s: chunk_size %d, want ≥ 1", opts.Table, opts.ChunkSize)
	}
	src, err := routes.OpenSource(ctx, raw)
	if err != nil {
		return nil, err
	}
	t, err := newTable(ctx, src, opts)
	if err != nil {
		src.Close()
		return nil, err
	}
	return t, nil
}

func newTable(ctx context.Context, src routes.Source, opts TableOptions) (*Table, error) {
	ks, ok := src.(routes.KeysetSource)
	if !ok {
		return nil, fmt.Errorf("%w: table source %s: this endpoint cannot page by key (table sources read postgres, mysql and clickhouse)", routes.ErrUnsupported, opts.Table)
	}
	info, err := src.Probe(ctx, opts.Table)
	if err != nil {
		if pe := (*routes.ProbeError)(nil); errors.As(err, &pe) && pe.Column == "" {
			return nil, &routes.ProbeError{Table: opts.Table.String(), Column: opts.Cursor, Problem: "table source: " + pe.Problem, Err: pe.Err,
				Hint: "check table: (schema.table) and cursor: of the stream task, and that the connection's user can read the table"}
		}
		return nil, fmt.Errorf("table source %s: %w", opts.Table, err)
	}
	c, ok := info.Column(opts.Cursor)
	if !ok {
		return nil, &routes.ProbeError{Table: info.Ref.String(), Column: opts.Cursor, Problem: "the cursor column does not exist",
			Hint: "set cursor: to a column of " + info.Ref.String() + " that grows with new rows (an integer id or a created_at timestamp); it has " + columnNames(info)}
	}
	if !pageable(c.Type) {
		return nil, &routes.ProbeError{Table: info.Ref.String(), Column: c.Name, Problem: fmt.Sprintf("a %s cursor cannot page exactly", c.NativeType),
			Hint: "use an integer, decimal, date, timestamp or text column"}
	}
	t := &Table{src: src, ks: ks, info: info, key: keyOf(info, c.Name), opts: opts}
	return t, nil
}

// keyOf is the paging key: the cursor column, then the primary key's
// other columns, so that rows sharing a cursor value are ordered and a
// chunk can end between them. Without a primary key the cursor alone is
// the key and a chunk takes every tie of its last value.
func keyOf(info *routes.TableInfo, cursor string) []string {
	key := []string{cursor}
	for _, k := range info.PrimaryKey {
		if k != cursor {
			key = append(key, k)
		}
	}
	return key
}

// pageable: types whose values the source renders as text that compares
// back exactly (floats do not round-trip on every server).
func pageable(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.STRING, arrow.LARGE_STRING:
		return true
	}
	return false
}

func columnNames(info *routes.TableInfo) string {
	names := make([]string, len(info.Columns))
	for i, c := range info.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// Key returns the columns the source pages on, in order.
func (t *Table) Key() []string { return slices.Clone(t.key) }

// Info returns the probed table.
func (t *Table) Info() *routes.TableInfo { return t.info }

// Seek places the source after a cursor that Cursor returned ("" is the
// table's start).
func (t *Table) Seek(_ context.Context, cursor string) error {
	after, err := decodeKey(cursor, len(t.key))
	if err != nil {
		return routes.BadInput("table source %s: the saved cursor %q does not fit the key (%s): %v; cursor: or the table's primary key changed since it was saved: write to a new sink table",
			t.info.Ref, cursor, strings.Join(t.key, ", "), err)
	}
	t.after = after
	return nil
}

// NextChunk plans the chunk past the cursor and opens its read.
func (t *Table) NextChunk(ctx context.Context) (routes.Stream, error) {
	r, last, ok, err := t.ks.KeysetPage(ctx, t.info, t.key, t.after, t.opts.ChunkSize)
	if err != nil {
		return nil, fmt.Errorf("table source %s: %w", t.info.Ref, err)
	}
	t.ended = !ok
	if !ok {
		return nil, nil
	}
	s, err := t.src.Read(ctx, r, routes.ReadOptions{ChunkBytes: t.opts.ChunkBytes, Allocator: t.opts.Allocator})
	if err != nil {
		return nil, fmt.Errorf("table source %s: read %s: %w", t.info.Ref, r.Label, err)
	}
	t.after = last
	return s, nil
}

// Next is not how a table is read: the runner takes chunks (NextChunk).
func (t *Table) Next(context.Context) (Event, error) {
	return Event{}, fmt.Errorf("%w: table source %s is read in chunks (NextChunk), not as events", routes.ErrUnsupported, t.info.Ref)
}

// Cursor is the key of the last row of the last chunk handed out.
func (t *Table) Cursor() string { return encodeKey(t.after) }

// Commit has nothing to acknowledge: the sink's commit holds the cursor.
func (t *Table) Commit(context.Context, string) error { return nil }

// Drained reports whether the last NextChunk found the table read to its
// current end.
func (t *Table) Drained(context.Context) (bool, error) { return t.ended, nil }

func (t *Table) Close() error { return t.src.Close() }

// encodeKey: one value as it is (readable in weir status, settable by
// hand), several as a JSON array of their texts.
func encodeKey(vals []string) string {
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	}
	data, _ := json.Marshal(vals)
	return string(data)
}

func decodeKey(s string, n int) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if n == 1 {
		return []string{s}, nil
	}
	var vals []string
	if err := json.Unmarshal([]byte(s), &vals); err != nil {
		return nil, fmt.Errorf("want a JSON array of %d values: %w", n, err)
	}
	if len(vals) != n {
		return nil, fmt.Errorf("%d values, want %d", len(vals), n)
	}
	return vals, nil
}
