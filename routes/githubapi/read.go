package githubapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
)

// cursorTime is how a timestamptz cursor is written as text: UTC with the
// offset, as PostgreSQL writes its timestamptz maximum, so a watermark
// bootstrapped from a destination compares with this source's maximum.
const cursorTime = "2006-01-02 15:04:05.000000+00"

var timestamptz = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

func arrowType(k kind) arrow.DataType {
	switch k {
	case kindInt:
		return arrow.PrimitiveTypes.Int64
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindTime:
		return timestamptz
	}
	return arrow.BinaryTypes.String
}

func nativeType(k kind) string {
	return [...]string{kindInt: "bigint", kindText: "text", kindBool: "boolean", kindTime: "timestamptz", kindRaw: "json"}[k]
}

// value reads column c of obj: nil for a JSON null or a missing field,
// else an int64, string, bool or time.Time.
func value(c column, raw json.RawMessage, obj map[string]any) (any, error) {
	if c.kind == kindRaw {
		return string(raw), nil
	}
	var v any = obj
	for _, p := range c.path {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[p]
	}
	if v == nil {
		if c.required {
			return nil, routes.BadInput("column %s: the API sent no %s", c.name, strings.Join(c.path, "."))
		}
		return nil, nil
	}
	bad := func() (any, error) {
		return nil, routes.BadInput("column %s: the API sent %v for %s, not a %s", c.name, v, strings.Join(c.path, "."), nativeType(c.kind))
	}
	switch c.kind {
	case kindInt:
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		i, err := n.Int64()
		if err != nil {
			return bad()
		}
		return i, nil
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return b, nil
	case kindTime:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return bad()
		}
		return t.UTC(), nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, _ := json.Marshal(v) // a number or object where text is documented: keep its JSON
	return string(b), nil
}

// cursorText writes a cursor value as text the source compares back.
func cursorText(v any) string {
	switch v := v.(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case time.Time:
		return v.UTC().Format(cursorTime)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

// parseBound reads a watermark bound for column c (as cursorText wrote
// it, or as a destination's maximum of the column reads).
func parseBound(c column, s string) (any, error) {
	switch c.kind {
	case kindInt:
		return strconv.ParseInt(s, 10, 64)
	case kindTime:
		for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999-07"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), nil
			}
		}
		return nil, fmt.Errorf("%q is not a timestamp", s)
	case kindBool:
		return strconv.ParseBool(s)
	}
	return s, nil
}

// compare orders two values of one column's kind.
func compare(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmpOrdered(a, b.(int64))
	case time.Time:
		return a.Compare(b.(time.Time))
	case bool:
		x, y := 0, 0
		if a {
			x = 1
		}
		if b.(bool) {
			y = 1
		}
		return cmpOrdered(x, y)
	}
	return strings.Compare(a.(string), b.(string))
}

func cmpOrdered[T int | int64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func columnOf(t *table, name string) (column, error) {
	for _, c := range t.columns {
		if c.name == name {
			return c, nil
		}
	}
	return column{}, &routes.ProbeError{Table: t.name, Column: name, Problem: "no such column", Hint: "github+api's " + t.name + " has " + columnNames(t)}
}

func columnNames(t *table) string {
	var names []string
	for _, c := range t.columns {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// window is an incremental read's bounds on one column: after < v <= until.
type window struct {
	col          column
	after, until any // nil: unbounded
}

func newWindow(t *table, opts routes.ReadOptions) (*window, error) {
	if opts.Cursor == "" || opts.After == "" && opts.Until == "" {
		return nil, nil
	}
	c, err := columnOf(t, opts.Cursor)
	if err != nil {
		return nil, err
	}
	w := &window{col: c}
	if opts.After != "" {
		if w.after, err = parseBound(c, opts.After); err != nil {
			return nil, routes.BadInput("%s: watermark on %s: %v", t.name, c.name, err)
		}
	}
	if opts.Until != "" {
		if w.until, err = parseBound(c, opts.Until); err != nil {
			return nil, routes.BadInput("%s: bound on %s: %v", t.name, c.name, err)
		}
	}
	return w, nil
}

// admits reports whether v is inside the window; past reports a value at
// or below the lower bound (on a listing sorted newest first, the end of
// what the window wants).
func (w *window) admits(v any) (in, past bool) {
	if v == nil {
		return false, false
	}
	if w.after != nil && compare(v, w.after) <= 0 {
		return false, true
	}
	return w.until == nil || compare(v, w.until) <= 0, false
}

// serverFilter is the listing's own filter for the window: since= where
// the endpoint has it (the server sends the rows updated at or after it:
// the window drops the ones at the watermark).
func (w *window) serverFilter(t *table) map[string][]string {
	if w == nil || w.after == nil || t.since != w.col.name {
		return nil
	}
	return map[string][]string{"since": {w.after.(time.Time).Truncate(time.Second).Format(time.RFC3339)}}
}

// stopsAtWatermark: a listing sorted by updated_at newest first ends the
// window at the first row at or below the watermark.
func (w *window) stopsAtWatermark(t *table) bool {
	return w != nil && t.updatedDesc && w.col.name == "updated_at"
}

// stream is one table's rows as Arrow batches, a page at a time.
type stream struct {
	*routes.Batches
	bytes atomic.Int64
}

// Bytes counts the JSON bytes of the rows read.
func (s *stream) Bytes() int64 { return s.bytes.Load() }

// Read streams the table, one record batch per page: rows inside the
// watermark window (since= on the server where the endpoint has it), each
// key once (a row updated while the listing pages moves to its front and
// would show again on a later page).
func (s *Source) Read(ctx context.Context, r routes.Range, opts routes.ReadOptions) (routes.Stream, error) {
	t, err := s.table(r.Table)
	if err != nil {
		return nil, err
	}
	w, err := newWindow(t, opts)
	if err != nil {
		return nil, err
	}
	names := opts.Columns
	if names == nil {
		for _, c := range r.Table.Columns {
			names = append(names, c.Name)
		}
	}
	var cols []column
	var fields []arrow.Field
	full := r.Table.Schema()
	for _, n := range names {
		c, err := columnOf(t, n)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
		idx := full.FieldIndices(n)
		fields = append(fields, full.Field(idx[0]))
	}
	md := full.Metadata()
	schema := arrow.NewSchema(fields, &md)
	key, _ := columnOf(t, t.key)
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	st := &stream{}
	st.Batches = routes.NewBatches(ctx, schema, func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		seen := map[any]bool{}
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		rows := 0
		flush := func() error {
			if rows == 0 {
				return nil
			}
			rows = 0
			return emit(b.NewRecordBatch())
		}
		err := s.list(ctx, t, w.serverFilter(t), func(raw json.RawMessage, obj map[string]any) (bool, error) {
			if w != nil {
				v, err := value(w.col, raw, obj)
				if err != nil {
					return false, fmt.Errorf("%s: %w", t.name, err)
				}
				in, past := w.admits(v)
				if past && w.stopsAtWatermark(t) {
					return true, nil
				}
				if !in {
					return false, nil
				}
			}
			k, err := value(key, raw, obj)
			if err != nil {
				return false, fmt.Errorf("%s: %w", t.name, err)
			}
			if seen[k] {
				return false, nil
			}
			seen[k] = true
			for i, c := range cols {
				v, err := value(c, raw, obj)
				if err != nil {
					return false, fmt.Errorf("%s: %w", t.name, err)
				}
				appendValue(b.Field(i), v)
			}
			rows++
			st.bytes.Add(int64(len(raw)))
			if rows >= perPage {
				return false, flush()
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
	return st, nil
}

func appendValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.StringBuilder:
		b.Append(v.(string))
	}
}

// MaxCursor is the cursor's highest value now: the first row of a listing
// sorted by updated_at newest first, else a scan of the listing.
func (s *Source) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	t, err := s.table(info)
	if err != nil {
		return "", false, err
	}
	c, err := columnOf(t, cursor)
	if err != nil {
		return "", false, err
	}
	var max any
	err = s.list(ctx, t, nil, func(raw json.RawMessage, obj map[string]any) (bool, error) {
		v, err := value(c, raw, obj)
		if err != nil || v == nil {
			return false, err
		}
		if max == nil || compare(v, max) > 0 {
			max = v
		}
		return t.updatedDesc && cursor == "updated_at", nil
	})
	if err != nil || max == nil {
		return "", false, err
	}
	return cursorText(max), true, nil
}

// NullCount counts the rows whose column is NULL (a scan; none for a
// column the API always sends).
func (s *Source) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	t, err := s.table(info)
	if err != nil {
		return 0, err
	}
	c, err := columnOf(t, column)
	if err != nil || c.required {
		return 0, err
	}
	var n int64
	err = s.list(ctx, t, nil, func(raw json.RawMessage, obj map[string]any) (bool, error) {
		v, err := value(c, raw, obj)
		if v == nil && err == nil {
			n++
		}
		return false, err
	})
	return n, err
}
