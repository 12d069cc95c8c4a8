package cdc

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Window is one run's changes folded per table and key: the last write wins,
// so each key ends as one upsert or one delete, never both, and a TRUNCATE
// discards what came before it. Applying a Window is idempotent: it states
// the end result for each key, not the steps.
type Window struct {
	Tables  map[string]*TableWindow // by Table.Source.String()
	Changes int                     // changes folded in
	// Log makes Add keep every change in commit order (TableWindow.Ops)
	// instead of folding: changelog mode (NewLogWindow).
	Log   bool
	txPos string // the position of the transaction being added (Log)
	ord   int    // ops added of it so far (Log)
	// Streaming (Open): the changes (ops) held now and where they go every
	// FlushChanges; what earlier flushes handed over, for Result.Count.
	held, heldBytes                     int
	flush                               func() error
	logged, truncates, upserts, deletes int
	lastTW                              *TableWindow // the table window the last change went to
}

// TableWindow is one table's part of a Window.
type TableWindow struct {
	Table     *Table
	Truncated bool // a TRUNCATE happened: clear the table before the rest
	Upserts   map[string]*Upsert
	Deletes   map[string][]any  // key values by encoded key
	Ops       []LogOp           // changelog mode: every change, in order
	last      map[string]latest // changelog mode: each key's latest row in the window
}

// Upsert is the final version of one row in the window.
type Upsert struct {
	Row []any // aligned with Table.Columns; may hold Unchanged
	// Origin is the key under which the destination holds the row's
	// previous version: where Unchanged columns are read from. It differs
	// from the row's key after a key change.
	Origin []any
}

// Partial reports whether some column of the row is Unchanged.
func (u *Upsert) Partial() bool {
	for _, v := range u.Row {
		if IsUnchanged(v) {
			return true
		}
	}
	return false
}

// NewWindow returns an empty window.
func NewWindow() *Window { return &Window{Tables: map[string]*TableWindow{}} }

// Empty reports whether nothing was folded in.
func (w *Window) Empty() bool { return w.Changes == 0 }

// Add folds one change of table t into the window. The window keeps c's
// rows and may change them (an update's Unchanged values filled from the
// key's earlier version): the caller hands them over.
func (w *Window) Add(t *Table, c Change) error {
	if w.Log {
		if err := w.addLog(t, c); err != nil {
			return fmt.Errorf("log %s change of %s: %w", c.Op, t.Source, err)
		}
		w.Changes++
		return nil
	}
	tw := w.table(t)
	var err error
	switch c.Op {
	case OpInsert:
		err = tw.insert(c)
	case OpUpdate:
		err = tw.update(c)
	case OpDelete:
		err = tw.delete(c)
	case OpTruncate:
		tw.truncate()
	default:
		err = fmt.Errorf("unknown op %q", c.Op)
	}
	if err != nil {
		return fmt.Errorf("fold %s change of %s: %w", c.Op, t.Source, err)
	}
	w.Changes++
	w.held++
	w.heldBytes += rowBytes(c.After) + keyBytes(c.Key)
	return w.flushFull()
}

// rowBytes estimates what one held row costs in memory: its values (an
// interface each, plus a string's header and bytes, a []byte's header and
// bytes, a boxed scalar's word) and rowOverhead for the row's slice, its
// Upsert or LogOp and its map entry. It is the measure FlushBytes bounds,
// so that a chunk of wide rows holds about what one of narrow rows does
// (docs/cdc.md, chunks). A change's before image is not counted: the fold
// keeps its key only (keyBytes), the changelog the row it logs.
func rowBytes(row []any) int {
	if row == nil {
		return 0
	}
	return rowOverhead + keyBytes(row)
}

// rowOverhead is a held row's fixed cost: its []any header, the Upsert
// (or LogOp) pointing at it and the map entry holding its encoded key.
const rowOverhead = 96

// keyBytes estimates what values cost in memory, without a row's overhead.
func keyBytes(vals []any) int {
	n := 0
	for _, v := range vals {
		n += 16 // the interface
		switch x := v.(type) {
		case nil:
		case string:
			n += 16 + len(x)
		case []byte:
			n += 24 + len(x)
		default:
			n += 8 // a boxed scalar (a time or a decimal: more, rare in bulk)
		}
	}
	return n
}

// flushFull hands what the window holds to its open transaction once it
// holds FlushChanges changes (ops) or an estimated FlushBytes of rows
// (rowBytes), then
// forgets it: a replica's later
// chunks read what they need (Unchanged values) from the destination, a
// changelog's from the log, both as the same transaction wrote them.
func (w *Window) flushFull() error {
	if w.flush == nil || (w.held < FlushChanges && w.heldBytes < FlushBytes) {
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	for _, tw := range w.Tables {
		w.upserts += len(tw.Upserts)
		w.deletes += len(tw.Deletes)
		if tw.Truncated {
			w.truncates++
		}
		tw.Ops, tw.last, tw.Truncated = nil, nil, false
		// The next chunk is likely the size of this one: its maps start
		// at that size instead of growing to it again.
		if len(tw.Upserts) > 0 {
			tw.Upserts = make(map[string]*Upsert, len(tw.Upserts))
		}
		if len(tw.Deletes) > 0 {
			tw.Deletes = make(map[string][]any, len(tw.Deletes))
		}
	}
	w.held, w.heldBytes = 0, 0
	return nil
}

func (w *Window) table(t *Table) *TableWindow {
	if w.lastTW != nil && w.lastTW.Table == t {
		return w.lastTW // the table of the change before: its name is not rendered again
	}
	name := t.Source.String()
	tw := w.Tables[name]
	if tw == nil {
		tw = &TableWindow{Table: t, Upserts: map[string]*Upsert{}, Deletes: map[string][]any{}}
		w.Tables[name] = tw
	}
	w.lastTW = tw
	return tw
}

// Sorted returns the table windows in name order, for a stable apply order.
func (w *Window) Sorted() []*TableWindow {
	names := make([]string, 0, len(w.Tables))
	for n := range w.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*TableWindow, len(names))
	for i, n := range names {
		out[i] = w.Tables[n]
	}
	return out
}

func (tw *TableWindow) insert(c Change) error {
	key, err := tw.Table.keyOf(c.After)
	if err != nil {
		return err
	}
	k := encodeKey(key)
	delete(tw.Deletes, k)
	tw.Upserts[k] = &Upsert{Row: c.After, Origin: key}
	return nil
}

func (tw *TableWindow) update(c Change) error {
	newKey, err := tw.Table.keyOf(c.After)
	if err != nil {
		return err
	}
	oldKey, kn := c.Key, encodeKey(newKey)
	ko := kn
	if oldKey == nil {
		oldKey = newKey
	} else {
		ko = encodeKey(oldKey)
	}
	up := &Upsert{Row: c.After, Origin: oldKey}
	if prev := tw.Upserts[ko]; prev != nil {
		up.Origin = prev.Origin
		for i, v := range up.Row {
			if IsUnchanged(v) {
				up.Row[i] = prev.Row[i] // may itself be Unchanged: Origin carries it
			}
		}
	}
	fillFrom(up.Row, c.Before)
	if ko != kn {
		delete(tw.Upserts, ko)
		tw.Deletes[ko] = oldKey
	}
	delete(tw.Deletes, kn)
	tw.Upserts[kn] = up
	return nil
}

// fillFrom replaces Unchanged values with the old row's, when the source
// sent the whole old row.
func fillFrom(row, before []any) {
	if len(before) != len(row) {
		return
	}
	for i, v := range row {
		if IsUnchanged(v) && !IsUnchanged(before[i]) {
			row[i] = before[i]
		}
	}
}

func (tw *TableWindow) delete(c Change) error {
	if len(c.Key) != len(tw.Table.Key) {
		return fmt.Errorf("delete carries %d key values for a %d-column key", len(c.Key), len(tw.Table.Key))
	}
	k := encodeKey(c.Key)
	delete(tw.Upserts, k)
	tw.Deletes[k] = c.Key
	return nil
}

func (tw *TableWindow) truncate() {
	tw.Truncated = true
	tw.Upserts = map[string]*Upsert{}
	tw.Deletes = map[string][]any{}
}

// encodeKey renders key values as one map key; each value is tagged with
// its type and length-prefixed so no two distinct keys collide. The common
// key types (integers, strings, bytes) are appended directly: the fold
// encodes one key per change (two for an update), and fmt's reflection
// was a tenth of a 15-column run's CPU (bench/README.md, Batch CDC).
func encodeKey(key []any) string {
	var buf [64]byte // most keys: no buffer of their own, the string the one allocation
	b := buf[:0]
	for _, v := range key {
		b = appendKey(b, v)
	}
	return string(b)
}

// appendKey appends one key value: a tag byte naming its Go type, then
// the value (integers in 8 bytes, text and bytes after their length); any
// other type as its fmt "%T:%v" text after the length, as before.
func appendKey(b []byte, v any) []byte {
	switch x := v.(type) {
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 'q'), uint64(x))
	case int32:
		return binary.BigEndian.AppendUint64(append(b, 'l'), uint64(x))
	case int16:
		return binary.BigEndian.AppendUint64(append(b, 'h'), uint64(x))
	case int8:
		return binary.BigEndian.AppendUint64(append(b, 'c'), uint64(x))
	case int:
		return binary.BigEndian.AppendUint64(append(b, 'n'), uint64(x))
	case uint64:
		return binary.BigEndian.AppendUint64(append(b, 'Q'), x)
	case uint32:
		return binary.BigEndian.AppendUint64(append(b, 'L'), uint64(x))
	case uint16:
		return binary.BigEndian.AppendUint64(append(b, 'H'), uint64(x))
	case uint8:
		return binary.BigEndian.AppendUint64(append(b, 'C'), uint64(x))
	case string:
		return append(binary.AppendUvarint(append(b, 's'), uint64(len(x))), x...)
	case []byte:
		return append(binary.AppendUvarint(append(b, 'b'), uint64(len(x))), x...)
	}
	s := fmt.Sprintf("%T:%v", v, v)
	return append(binary.AppendUvarint(append(b, 'f'), uint64(len(s))), s...)
}
