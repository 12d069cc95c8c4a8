package cdc

import (
	"fmt"
	"time"

	"github.com/weirhq/weir/routes"
)

// Op is the kind of one change, as the changelog spells it in _weir_op.
type Op byte

// The operations a source reports.
const (
	OpInsert   Op = 'I'
	OpUpdate   Op = 'U'
	OpDelete   Op = 'D'
	OpTruncate Op = 'T'
)

func (o Op) String() string { return string(o) }

// unchanged is the type of Unchanged.
type unchanged struct{}

// Unchanged stands for a column value the source did not send because it
// did not change (PostgreSQL's unchanged TOAST datum, 'u' in pgoutput). The
// destination keeps its current value for it.
var Unchanged any = unchanged{}

// IsUnchanged reports whether v is Unchanged.
func IsUnchanged(v any) bool { _, ok := v.(unchanged); return ok }

// Pair is one captured table and where its changes go.
type Pair struct {
	Source routes.TableRef // schema-qualified source table
	Dest   routes.TableRef // schema-qualified destination table
}

// Table is a captured table: its columns in order and the positions of its
// key columns among them. Values of a Change line up with Columns.
type Table struct {
	Source  routes.TableRef // the table at the source
	Dest    routes.TableRef // where its rows are applied
	Columns []string
	Types   []string // native types, aligned with Columns (optional)
	Key     []int    // indexes into Columns
	// Info is the source's probe of the table (Arrow types, native types,
	// primary key): a destination creates a missing table from it, as its
	// bulk route would.
	Info *routes.TableInfo
	// Logged is the last op a changelog destination holds for this table,
	// when its LogAppender's BeginLog sets it: a destination that commits
	// table by table (Iceberg) is handed again the transactions a table
	// committed before the run died, since a capture restarts from the
	// lowest position over its tables. The window numbers their ops (so
	// ordinals stay the same) but keeps neither them nor their rows.
	Logged *LogPoint
}

// LogPoint is an op's place in a changelog: (_weir_lsn, _weir_ord).
type LogPoint struct {
	Position string `json:"position"`
	Ord      int    `json:"ord"`
}

// holds reports whether a log whose last op is p holds the transaction at
// position pos: one before p, or p itself unless p is a baseline (ordinal
// 0: a binlog's first transaction after a bootstrap starts at the
// baseline's own coordinate).
func (p *LogPoint) holds(pos string) bool {
	if p == nil {
		return false
	}
	return pos < p.Position || (pos == p.Position && p.Ord > 0)
}

// KeyNames returns the key column names.
func (t *Table) KeyNames() []string {
	names := make([]string, len(t.Key))
	for i, k := range t.Key {
		names[i] = t.Columns[k]
	}
	return names
}

// Change is one row operation. Values are Arrow-friendly Go values: nil
// (NULL), string, []byte, int64, float64, bool, time.Time, or Unchanged.
// A source that knows only its text output (pgoutput) sends strings.
type Change struct {
	Op Op
	// Key identifies the row the change applies to as the destination holds
	// it before the change: the old key for an update that changes the key.
	// Nil for an insert (the key is read from After) and for a truncate.
	Key []any
	// Before is the whole old row when the source sends it (REPLICA
	// IDENTITY FULL, binlog FULL images); nil otherwise.
	Before []any
	// After is the new row of an insert or update, aligned with
	// Table.Columns; a column may be Unchanged in an update.
	After    []any
	Position string    // the source's position of the transaction's commit
	Commit   time.Time // commit time at the source
}

// keyOf returns the key values of a full row.
func (t *Table) keyOf(row []any) ([]any, error) {
	if len(row) != len(t.Columns) {
		return nil, fmt.Errorf("%s: row has %d values for %d columns", t.Source, len(row), len(t.Columns))
	}
	key := make([]any, len(t.Key))
	for i, k := range t.Key {
		if IsUnchanged(row[k]) {
			return nil, fmt.Errorf("%s: key column %s is unchanged-toast", t.Source, t.Columns[k])
		}
		key[i] = row[k]
	}
	return key, nil
}
