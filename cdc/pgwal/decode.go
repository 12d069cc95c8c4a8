package pgwal

import (
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
	changelog bool          // ops are numbered across tables: a log skips its own (see change)
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
	case *pglogrepl.InsertMessage:
		return d.change(w, m.RelationID, cdc.OpInsert, 0, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return d.change(w, m.RelationID, cdc.OpUpdate, m.OldTupleType, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return d.change(w, m.RelationID, cdc.OpDelete, m.OldTupleType, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if err := d.change(w, id, cdc.OpTruncate, 0, nil, nil); err != nil {
				return err
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

// change folds one row change. The old tuple is 'K' (replica identity
// DEFAULT: the key columns, the rest NULL) or 'O' (FULL: the whole row,
// kept as Before).
func (d *decoder) change(w *cdc.Window, relID uint32, op cdc.Op, oldType uint8, old, new *pglogrepl.TupleData) error {
	if d.skip {
		return nil
	}
	rel := d.relations[relID]
	if rel == nil {
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
	c := cdc.Change{Op: op, Position: d.commitPos, Commit: d.commitAt}
	if new != nil {
		c.After = rel.row(new)
	}
	if old != nil {
		row := rel.row(old)
		c.Key = rel.key(row)
		if oldType == pglogrepl.UpdateMessageTupleTypeOld {
			c.Before = row
		}
	}
	return w.Add(&rel.t.Table, c)
}

// row lines a tuple up with the table's columns: 'n' is nil, 't' the text
// output, 'u' (an unchanged TOAST value) cdc.Unchanged; columns the tuple
// lacks are Unchanged too.
func (r *relation) row(tup *pglogrepl.TupleData) []any {
	row := make([]any, len(r.t.Columns))
	for i := range row {
		row[i] = cdc.Unchanged
	}
	for i, col := range tup.Columns {
		if i >= len(r.idx) {
			break
		}
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
			row[r.idx[i]] = nil
		case pglogrepl.TupleDataTypeText, pglogrepl.TupleDataTypeBinary:
			row[r.idx[i]] = r.t.value(r.idx[i], string(col.Data))
		}
	}
	return row
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
