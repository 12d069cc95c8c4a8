package pgwal

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/weirhq/weir/cdc"
)

// decoder turns pgoutput (protocol 1) messages into cdc changes.
type decoder struct {
	tables    map[string]*table // by source "schema.name"
	relations map[uint32]*relation
	start     pglogrepl.LSN // transactions committed before it are applied already
	changelog bool          // ops are numbered across tables: a log skips its own (see captured)
	inTx      bool
	skip      bool // the open transaction is before start
	commitLSN pglogrepl.LSN
	commitPos string // logLSN(commitLSN), rendered once per transaction
	commitAt  time.Time
}

// relation maps one Relation message's columns onto a captured table.
type relation struct {
	t   *table
	idx []int // relation column → table column
}

func newDecoder(tables []*table, start pglogrepl.LSN, changelog bool) *decoder {
	d := &decoder{tables: map[string]*table{}, relations: map[uint32]*relation{}, start: start, changelog: changelog}
	for _, t := range tables {
		d.tables[t.Source.String()] = t
	}
	return d
}

func (d *decoder) decode(data []byte, w *cdc.Window) error {
	if len(data) == 0 {
		return fmt.Errorf("parse pgoutput message: empty")
	}
	switch data[0] {
	case 'I', 'U', 'D': // most of the stream: decoded here, without pglogrepl's per-column copies
		return d.rowMessage(data, w)
	}
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("parse pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		d.inTx, d.skip, d.commitLSN, d.commitAt = true, m.FinalLSN < d.start, m.FinalLSN, m.CommitTime
		d.commitPos = logLSN(m.FinalLSN)
	case *pglogrepl.CommitMessage:
		d.inTx, d.skip = false, false
	case *pglogrepl.RelationMessage:
		return d.relation(m)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if rel := d.captured(id); rel != nil {
				if err := w.Add(&rel.t.Table, cdc.Change{Op: cdc.OpTruncate, Position: d.commitPos, Commit: d.commitAt}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// relation records a table's column layout. A column the destination does
// not have is a schema change this version does not follow.
func (d *decoder) relation(m *pglogrepl.RelationMessage) error {
	name := m.Namespace + "." + m.RelationName
	t := d.tables[name]
	if t == nil {
		return nil // not captured (the publication lists only ours)
	}
	rel := &relation{t: t, idx: make([]int, len(m.Columns))}
	for i, c := range m.Columns {
		rel.idx[i] = columnIndex(t.Columns, c.Name)
		if rel.idx[i] < 0 {
			return fmt.Errorf("%s: column %s was added at the source after the bootstrap; add it to %s or re-bootstrap (weir reset)", name, c.Name, t.Dest)
		}
	}
	d.relations[m.RelationID] = rel
	return nil
}

func columnIndex(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}

// rowMessage folds an Insert ('I'), Update ('U') or Delete ('D')
// message (protocol 1), decoded straight from its bytes: the relation id, then the
// tuples, each after its kind: 'N' the new row, 'K' the old key (replica
// identity DEFAULT: the key columns, the rest NULL), 'O' the whole old row
// (FULL, kept as Before). Insert is 'N'; Update an optional 'K' or 'O',
// then 'N'; Delete 'K' or 'O'. A truncated or malformed message is an
// error.
func (d *decoder) rowMessage(data []byte, w *cdc.Window) error {
	rel, c, err := d.rowChange(data)
	if err != nil || rel == nil {
		return err
	}
	return w.Add(&rel.t.Table, c)
}

// rowChange decodes a row message into the change of its relation; a nil
// relation when the change is not folded (see captured).
func (d *decoder) rowChange(data []byte) (*relation, cdc.Change, error) {
	kind := data[0]
	if len(data) < 6 {
		return nil, cdc.Change{}, malformed(kind, "%d bytes", len(data))
	}
	rel := d.captured(binary.BigEndian.Uint32(data[1:5]))
	if rel == nil {
		return nil, cdc.Change{}, nil
	}
	c := cdc.Change{Position: d.commitPos, Commit: d.commitAt}
	p, tag := data[6:], data[5]
	if kind != 'I' && (tag == 'K' || tag == 'O') {
		old, rest, err := rel.tuple(p)
		if err != nil {
			return nil, c, malformed(kind, "old tuple: %v", err)
		}
		c.Key = rel.key(old)
		if tag == 'O' {
			c.Before = old
		}
		p, tag = rest, 0
		if kind == 'U' {
			if len(p) == 0 {
				return nil, c, malformed(kind, "no new tuple")
			}
			p, tag = p[1:], p[0]
		}
	}
	switch kind {
	case 'I', 'U':
		if tag != 'N' {
			return nil, c, malformed(kind, "tuple kind %q, want N", tag)
		}
		var err error
		if c.After, p, err = rel.tuple(p); err != nil {
			return nil, c, malformed(kind, "new tuple: %v", err)
		}
		c.Op = cdc.OpInsert
		if kind == 'U' {
			c.Op = cdc.OpUpdate
		}
	case 'D':
		if c.Key == nil {
			return nil, c, malformed(kind, "tuple kind %q, want K or O", tag)
		}
		c.Op = cdc.OpDelete
	}
	if len(p) != 0 {
		return nil, c, malformed(kind, "%d bytes after the last tuple", len(p))
	}
	return rel, c, nil
}

func malformed(kind byte, format string, args ...any) error {
	return fmt.Errorf("parse pgoutput message %q: malformed: %s", kind, fmt.Sprintf(format, args...))
}

// captured returns the relation whose changes the open transaction folds,
// or nil: a relation not captured, or a transaction to skip.
func (d *decoder) captured(relID uint32) *relation {
	rel := d.relations[relID]
	if d.skip || rel == nil {
		return nil
	}
	// A replica table saved ahead of the run's start (committed alone,
	// then the run died before the other tables' commits) holds this
	// transaction already: re-applying it would fill an unchanged TOAST
	// value from the table's later state. A changelog gets every op, so
	// that ordinals number a transaction's ops the same on every run; its
	// destination skips the ops it holds.
	if !d.changelog && d.commitLSN < rel.t.saved {
		return nil
	}
	return rel
}

// tuple decodes one TupleData (a column count, then per column its kind:
// 'n' NULL, 'u' an unchanged TOAST value, 't' text or 'b' binary after a
// length) into a row lined up with the table's columns: NULL is nil, 'u'
// cdc.Unchanged, as are columns the tuple lacks; text and binary values
// are substrings of one string, the tuple copied once. It returns the
// bytes after the tuple.
func (r *relation) tuple(b []byte) (row []any, rest []byte, err error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("%d bytes for the column count", len(b))
	}
	n := int(binary.BigEndian.Uint16(b))
	// The extent first, every length checked, so that the values below
	// come out of one string.
	end := 2
	for i := 0; i < n; i++ {
		if end >= len(b) {
			return nil, nil, fmt.Errorf("column %d of %d: truncated", i+1, n)
		}
		switch b[end] {
		case pglogrepl.TupleDataTypeNull, pglogrepl.TupleDataTypeToast:
			end++
		case pglogrepl.TupleDataTypeText, pglogrepl.TupleDataTypeBinary:
			if len(b)-end < 5 {
				return nil, nil, fmt.Errorf("column %d of %d: truncated length", i+1, n)
			}
			l := binary.BigEndian.Uint32(b[end+1:])
			if uint64(l) > uint64(len(b)-end-5) {
				return nil, nil, fmt.Errorf("column %d of %d: %d bytes of value, %d left", i+1, n, l, len(b)-end-5)
			}
			end += 5 + int(l)
		default:
			return nil, nil, fmt.Errorf("column %d of %d: unknown kind %q", i+1, n, b[end])
		}
	}
	s := string(b[:end]) // b's offsets are s's
	row = make([]any, len(r.t.Columns))
	for i := range row {
		row[i] = cdc.Unchanged
	}
	texts := make([]string, len(row)) // the text values' headers (see boxString)
	for i, p := 0, 2; i < n; i++ {
		kind := b[p]
		p++
		switch kind {
		case pglogrepl.TupleDataTypeNull:
			if i < len(r.idx) {
				row[r.idx[i]] = nil
			}
			continue
		case pglogrepl.TupleDataTypeToast:
			continue
		}
		l := int(binary.BigEndian.Uint32(b[p:]))
		p += 4
		if i < len(r.idx) {
			k := r.idx[i]
			if v, ok, err := r.t.value(k, s[p:p+l]); err != nil {
				return nil, nil, err
			} else if ok {
				row[k] = v
			} else {
				texts[k] = s[p : p+l]
				row[k] = boxString(texts, k)
			}
		}
		p += l
	}
	return row, b[end:], nil
}

// key picks the key columns out of an old tuple ('K' carries the replica
// identity columns, 'O' the whole row).
func (r *relation) key(row []any) []any {
	key := make([]any, len(r.t.Key))
	for i, k := range r.t.Key {
		key[i] = row[k]
	}
	return key
}
