package cdc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// OpBaseline marks a row of the bootstrap's full load in a changelog.
const OpBaseline Op = 'B'

// The columns a changelog adds to the source's.
const (
	ColOp       = "_weir_op"        // I, U, D, T or B
	ColLSN      = "_weir_lsn"       // the transaction's position, as text that sorts in log order
	ColOrd      = "_weir_ord"       // 1-based order of the op within its transaction; 0 for baseline rows
	ColCommitTS = "_weir_commit_ts" // source commit time; the bootstrap time for baseline rows
)

// logColumns are the columns a changelog adds, in the log's order.
var logColumns = []string{ColOp, ColLSN, ColOrd, ColCommitTS}

// checkLogColumns refuses a source column named like one the log adds:
// the log could not hold both (every destination failed creating it,
// after the baseline was loaded).
func checkLogColumns(t *Table) error {
	for _, c := range t.Columns {
		for _, lc := range logColumns {
			if strings.EqualFold(c, lc) {
				return &routes.ProbeError{Table: t.Source.String(), Column: c, Problem: "the changelog adds a column of this name (" + strings.Join(logColumns, ", ") + ")",
					Hint: "rename the source column, or capture the table as a replica (without --changelog)"}
			}
		}
	}
	return nil
}

// CurrentSuffix names the view that derives a changelog's current state.
const CurrentSuffix = "__current"

// BaselineSuffix names the table a changelog bootstrap loads before it
// appends the rows to the log as baseline ops.
const BaselineSuffix = "__weir_base"

// CurrentView is the name of log's __current view: <log>__current, or
// hash-shortened (routes.SideName) when that exceeds the server's limit.
func CurrentView(log routes.TableRef, fits routes.Limit) routes.TableRef {
	return routes.TableRef{Schema: log.Schema, Name: routes.SideName("", log.Name, CurrentSuffix, fits)}
}

// BaselineTable is the name of the table a bootstrap of log loads first.
func BaselineTable(log routes.TableRef, fits routes.Limit) routes.TableRef {
	return routes.TableRef{Schema: log.Schema, Name: routes.SideName("", log.Name, BaselineSuffix, fits)}
}

// LogOp is one operation of a changelog window, kept in commit order.
type LogOp struct {
	Op Op
	// Row is aligned with Table.Columns: the new row of an insert or
	// update (it may hold Unchanged: the appender fills it from the row's
	// previous version in the log), what the source sent of the old row
	// for a delete (the key at least; the rest nil when not sent), nil for
	// a truncate.
	Row []any
	// Origin is the key the row's previous version has: where an appender
	// reads Unchanged values from.
	Origin   []any
	Position string // the transaction's position (Change.Position)
	Ord      int    // 1-based order within the transaction, across tables
	Commit   time.Time
}

// Partial reports whether some column of the op's row is Unchanged.
func (o *LogOp) Partial() bool {
	for _, v := range o.Row {
		if IsUnchanged(v) {
			return true
		}
	}
	return false
}

// NewLogWindow returns an empty changelog window: Add keeps every change,
// in order, instead of folding.
func NewLogWindow() *Window { return &Window{Tables: map[string]*TableWindow{}, Log: true} }

// addLog appends one change to its table's ops. An update that changes the
// key becomes a D of the old key followed by a U of the new row, so a
// log read per key stays right. Unchanged values are taken from the key's
// previous version in this window when there is one (otherwise the
// appender reads them from the log).
func (w *Window) addLog(t *Table, c Change) error {
	tw := w.table(t)
	if tw.last == nil {
		tw.last = map[string]latest{}
	}
	if c.Position != w.txPos || w.ord == 0 {
		w.txPos, w.ord = c.Position, 0
	}
	if t.Logged.holds(c.Position) {
		w.ord += t.opsOf(c)
		return nil
	}
	op := func(o Op, row, origin []any) {
		w.ord++
		w.held++
		w.heldBytes += rowBytes(row)
		w.logged++
		tw.Ops = append(tw.Ops, LogOp{Op: o, Row: row, Origin: origin, Position: c.Position, Ord: w.ord, Commit: c.Commit})
	}
	switch c.Op {
	case OpInsert:
		key, err := t.keyOf(c.After)
		if err != nil {
			return err
		}
		tw.last[encodeKey(key)] = latest{c.After, key}
		op(OpInsert, c.After, key)
	case OpUpdate:
		newKey, err := t.keyOf(c.After)
		if err != nil {
			return err
		}
		oldKey := c.Key
		if oldKey == nil {
			oldKey = newKey
		}
		ko, kn := encodeKey(oldKey), encodeKey(newKey)
		row, origin := append([]any(nil), c.After...), oldKey
		if prev, ok := tw.last[ko]; ok {
			fillFrom(row, prev.row)
			origin = prev.origin // where what is still Unchanged lives in the log
		}
		fillFrom(row, c.Before)
		if ko != kn {
			op(OpDelete, t.deleteRow(oldKey, c.Before), oldKey)
			delete(tw.last, ko)
		}
		tw.last[kn] = latest{row, origin}
		op(OpUpdate, row, origin)
	case OpDelete:
		if len(c.Key) != len(t.Key) {
			return fmt.Errorf("delete carries %d key values for a %d-column key", len(c.Key), len(t.Key))
		}
		delete(tw.last, encodeKey(c.Key))
		op(OpDelete, t.deleteRow(c.Key, c.Before), c.Key)
	case OpTruncate:
		tw.last = map[string]latest{}
		w.truncates++
		op(OpTruncate, nil, nil)
	default:
		return fmt.Errorf("unknown op %q", c.Op)
	}
	return w.flushFull()
}

// opsOf is how many ops a change logs: two for an update that changes
// the key (D, U), else one.
func (t *Table) opsOf(c Change) int {
	if c.Op != OpUpdate || c.Key == nil {
		return 1
	}
	newKey, err := t.keyOf(c.After)
	if err != nil || encodeKey(newKey) == encodeKey(c.Key) {
		return 1
	}
	return 2
}

// latest is a key's latest row in a changelog window and the key its
// first version had before the window (where Unchanged values are read).
type latest struct{ row, origin []any }

// deleteRow is what a delete logs: the whole old row when the source sent
// it, else the key with every other column nil.
func (t *Table) deleteRow(key, before []any) []any {
	if len(before) == len(t.Columns) {
		row := append([]any(nil), before...)
		for i, v := range row {
			if IsUnchanged(v) {
				row[i] = nil
			}
		}
		return row
	}
	row := make([]any, len(t.Columns))
	for i, k := range t.Key {
		row[k] = key[i]
	}
	return row
}

// Baseline is one table's bootstrap in changelog mode: the rows the full
// load put into Staged become baseline ('B') ops of the log at Position.
type Baseline struct {
	Table    *Table
	Staged   routes.TableRef // the loaded copy; dropped by the appender
	Empty    bool            // the source was empty: Staged holds nothing of this run
	Position string          // the log's position text (sorts with the ops')
	At       time.Time       // the bootstrap time: the baseline's commit time
	State    routes.State    // saved in the same transaction
}

// LogAppender is the destination capability changelog mode needs. Both
// methods create the log tables (the source's columns, all nullable, and
// the _weir_ columns) and their __current views when missing; the ops and
// the state commit in ONE transaction. Nothing in a log is updated or
// deleted.
type LogAppender interface {
	// BeginLog opens the destination transaction of one changelog run over
	// tables. Its Flush appends the ops w holds, in order, filling
	// Unchanged values from the row's latest version in the log (by
	// LogOp.Origin; ops this transaction appended before count).
	BeginLog(ctx context.Context, tables []*Table) (Tx, error)
	// AppendBaseline appends the staged full load as baseline ops.
	AppendBaseline(ctx context.Context, b Baseline) error
}

// AsLogAppender returns dst's LogAppender, or ErrUnsupported naming the
// destination.
func AsLogAppender(dst routes.Destination, url string) (LogAppender, error) {
	a, ok := routes.As[LogAppender](dst)
	if !ok {
		return nil, fmt.Errorf("%w: log_based --changelog into %s: the destination cannot append a changelog (postgres, mysql, clickhouse and iceberg can)", routes.ErrUnsupported, routes.Redact(url))
	}
	return a, nil
}

// BootstrapLog is Bootstrap for a changelog: load the table into
// <dest>__weir_base with routes.Copy (replace; the route's bulk path), then
// append those rows to the log as baseline ops at logPos and commit pos as
// the table's position, in one transaction.
func BootstrapLog(ctx context.Context, src routes.Source, dst routes.Destination, la LogAppender, t *Table, pos, logPos string, at time.Time, runID string) (int64, error) {
	if err := checkLogColumns(t); err != nil {
		return 0, err
	}
	// The log itself is not a table routes.Copy writes: its name is
	// checked here, before the baseline's copy.
	if err := routes.CheckDestTable(t.Dest, routes.IdentLimitOf(dst)); err != nil {
		return 0, err
	}
	staged := BaselineTable(t.Dest, routes.IdentLimitOf(dst))
	// The baseline table is weir's only when a bootstrap of this source
	// committed into it (its state row says so); any other table of that
	// name is the user's, and the copy refuses it instead of replacing it.
	owned, err := ownedBy(ctx, dst, staged, t.Info.SourceID)
	if err != nil {
		return 0, fmt.Errorf("bootstrap %s: %w", t.Source, err)
	}
	cr, err := routes.Copy(ctx, src, dst, routes.CopySpec{
		Table: t.Source, DestTable: staged, Mode: routes.ModeReplace, RunID: runID, Position: pos, Fresh: !owned})
	if err != nil {
		return 0, fmt.Errorf("bootstrap %s → %s: %w", t.Source, staged, err)
	}
	b := Baseline{Table: t, Staged: staged, Empty: cr.KeptEmpty, Position: logPos, At: at,
		State: routes.State{SourceID: t.Info.SourceID, Position: pos, RunID: runID, Rows: cr.Rows}}
	if err := la.AppendBaseline(ctx, b); err != nil {
		return 0, fmt.Errorf("bootstrap %s → changelog %s: %w", t.Source, t.Dest, err)
	}
	return cr.Rows, nil
}
