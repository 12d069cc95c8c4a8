package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.LogAppender = (*Endpoint)(nil)

// logCols are the changelog columns after the source's, in order.
var logCols = []string{cdc.ColOp, cdc.ColLSN, cdc.ColOrd, cdc.ColCommitTS}

func logTemp(n int) string { return fmt.Sprintf("_weir_cdc_log_%d", n) }

// BeginLog creates the logs (and the state tables) that do not exist yet
// and a temp table per log, all before the transaction (DDL commits in
// MySQL), then begins the run's one InnoDB transaction.
func (e *Endpoint) BeginLog(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("append changelog: %w", err)
	}
	x := &logTx{conn: conn, temps: map[routes.TableRef]int{}}
	if err := x.begin(ctx, e, tables); err != nil {
		x.Rollback()
		return nil, err
	}
	return x, nil
}

// logTx is one changelog run's transaction. Each Flush LOAD DATAs a
// table's ops (with the origin key and the indexes of Unchanged columns)
// into the table's temp table, fills Unchanged columns from the key's
// latest version in the log, then appends with one INSERT … SELECT.
// Nothing in the log is updated or deleted.
type logTx struct {
	conn  *sql.Conn
	tx    *sql.Tx
	temps map[routes.TableRef]int // log → its temp table's number
	used  map[int]bool            // temp tables holding an earlier Flush's ops
}

func (x *logTx) begin(ctx context.Context, e *Endpoint, tables []*cdc.Table) error {
	dests := make([]routes.TableRef, len(tables))
	for i, t := range tables {
		dests[i] = t.Dest
	}
	if err := e.ensureTables(ctx, x.conn, nil, dests); err != nil {
		return err
	}
	for i, t := range tables {
		if err := e.ensureLog(ctx, x.conn, t); err != nil {
			return err
		}
		if err := checkLogTypes(ctx, x.conn, t); err != nil {
			return err
		}
		if err := createLogTemp(ctx, x.conn, t, i); err != nil {
			return fmt.Errorf("append to changelog %s: %w", t.Dest, err)
		}
		x.temps[t.Dest] = i
	}
	tx, err := x.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin append: %w", err)
	}
	x.tx, x.used = tx, map[int]bool{}
	return nil
}

func (x *logTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		n, ok := x.temps[tw.Table.Dest]
		if !ok {
			return fmt.Errorf("append to changelog %s: not a table of this run", tw.Table.Dest)
		}
		if x.used[n] && len(tw.Ops) > 0 {
			if _, err := x.tx.ExecContext(ctx, "DELETE FROM "+logTemp(n)); err != nil {
				return fmt.Errorf("append to changelog %s: empty %s: %w", tw.Table.Dest, logTemp(n), err)
			}
		}
		if err := appendOps(ctx, x.tx, tw, n); err != nil {
			return fmt.Errorf("append to changelog %s: %w", tw.Table.Dest, err)
		}
		x.used[n] = x.used[n] || len(tw.Ops) > 0
	}
	return nil
}

func (x *logTx) Commit(ctx context.Context, states map[routes.TableRef]routes.State) error {
	return commitStates(ctx, x.tx, states, "append")
}

func (x *logTx) Rollback() {
	if x.conn == nil {
		return
	}
	if x.tx != nil {
		x.tx.Rollback()
	}
	dropLogTemps(x.conn, len(x.temps))
	x.conn.Close()
	x.conn = nil
}

// AppendBaseline appends the bootstrap's staged rows to the log as 'B'
// ops and saves the log's state, in one transaction; the staged table is
// dropped after the commit (DROP TABLE would commit), and only then its
// own state row: that row is what tells a later bootstrap the table is
// weir's (cdc.BootstrapLog), so a staged table left by a crash in between
// is replaced by the next bootstrap, never refused as a user's.
func (e *Endpoint) AppendBaseline(ctx context.Context, b cdc.Baseline) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("append baseline: %w", err)
	}
	defer conn.Close()
	t := b.Table
	if err := e.ensureTables(ctx, conn, nil, []routes.TableRef{t.Dest}); err != nil {
		return err
	}
	if err := e.ensureLog(ctx, conn, t); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin baseline: %w", err)
	}
	defer tx.Rollback()
	if !b.Empty {
		cols := joinIdents(t.Columns)
		q := fmt.Sprintf("INSERT INTO %s (%s, %s) SELECT %s, 'B', ?, 0, ? FROM %s",
			ident(t.Dest), cols, joinIdents(logCols), cols, ident(b.Staged))
		if _, err := tx.ExecContext(ctx, q, b.Position, b.At.UTC().Format("2006-01-02 15:04:05.999999")); err != nil {
			return fmt.Errorf("append baseline rows: %w", err)
		}
	}
	if err := saveState(ctx, tx, t.Dest, b.State); err != nil {
		return fmt.Errorf("%s: %w", t.Dest, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit baseline: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+ident(b.Staged)); err != nil {
		return fmt.Errorf("drop %s (the baseline is committed): %w", b.Staged, err)
	}
	q := fmt.Sprintf("DELETE FROM %s WHERE dest_table = ?", ident(stateRef(b.Staged.Schema)))
	if _, err := conn.ExecContext(ctx, q, b.Staged.Name); err != nil {
		return fmt.Errorf("forget %s (the baseline is committed): %w", b.Staged, err)
	}
	return nil
}

// ensureLog creates t's log table (the source's columns, all nullable since
// a delete may carry only the key, then the _weir_ columns, indexed in log
// order) and the __current view. An existing table without _weir_op is a
// replica, not a log: refused.
func (e *Endpoint) ensureLog(ctx context.Context, conn *sql.Conn, t *cdc.Table) error {
	info := t.Info
	if info == nil {
		return fmt.Errorf("changelog %s: no probe of the source table", t.Dest)
	}
	var defs []string
	for _, c := range stagedColumns(info, t.KeyNames()) {
		defs = append(defs, quoteIdent(c.Name)+" "+c.ddl+" NULL")
	}
	defs = append(defs, quoteIdent(cdc.ColOp)+" CHAR(1) NOT NULL", quoteIdent(cdc.ColLSN)+" VARCHAR(255) NOT NULL",
		quoteIdent(cdc.ColOrd)+" INT NOT NULL", quoteIdent(cdc.ColCommitTS)+" DATETIME(6) NOT NULL",
		fmt.Sprintf("KEY `_weir_pos` (%s, %s)", quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd)))
	q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s",
		ident(t.Dest), strings.Join(defs, ",\n  "), e.flavor.binCollation())
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create changelog %s: %w", t.Dest, err)
	}
	var n int
	q = `SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?`
	if err := conn.QueryRowContext(ctx, q, t.Dest.Schema, t.Dest.Name, cdc.ColOp).Scan(&n); err != nil {
		return fmt.Errorf("changelog %s: %w", t.Dest, err)
	}
	if n == 0 {
		return routes.BadInput("changelog: %s exists and is not a changelog (no %s column): name another destination table", t.Dest, cdc.ColOp)
	}
	// Only when missing: replacing it every run would wait for readers. A
	// table or view of that name that is not a view over this log is the
	// user's: refused, never replaced.
	view := cdc.CurrentView(t.Dest, maxIdent)
	var kind, def string
	q = `SELECT t.TABLE_TYPE, COALESCE(v.VIEW_DEFINITION, '') FROM information_schema.TABLES t
LEFT JOIN information_schema.VIEWS v ON v.TABLE_SCHEMA = t.TABLE_SCHEMA AND v.TABLE_NAME = t.TABLE_NAME
WHERE t.TABLE_SCHEMA = ? AND t.TABLE_NAME = ?`
	switch err := conn.QueryRowContext(ctx, q, view.Schema, view.Name).Scan(&kind, &def); {
	case err == nil:
		if kind != "VIEW" || !strings.Contains(def, cdc.ColLSN) {
			return routes.Occupied(view, "the current-state view of changelog "+t.Dest.String())
		}
		return nil
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("changelog %s: view: %w", t.Dest, err)
	}
	if _, err := conn.ExecContext(ctx, cdc.CurrentViewSQL(t, maxIdent, quoteIdent)); err != nil {
		return fmt.Errorf("changelog %s: view: %w", t.Dest, err)
	}
	return nil
}

// checkLogTypes refuses a log whose column no longer holds its source's
// values exactly (holdsMyType: a bigint past 2^53 into a DOUBLE, a double
// into a FLOAT, microseconds into a DATETIME(0) are rounded by the load
// without a warning). A log is never altered, so nothing is widened: the
// user alters it, or resets the pair.
func checkLogTypes(ctx context.Context, conn *sql.Conn, t *cdc.Table) error {
	if t.Info == nil {
		return nil
	}
	have, err := tableColumns(ctx, conn, t.Dest)
	if err != nil {
		return err
	}
	byName := map[string]myColumn{}
	for _, c := range have {
		byName[strings.ToLower(c.name)] = c
	}
	for _, c := range stagedColumns(t.Info, t.KeyNames()) {
		d, ok := byName[strings.ToLower(c.Name)]
		if ok && !holdsMyType(d.typ, c.ddl) {
			return routes.LossyError(t.Dest, d.name, strings.ToLower(c.ddl), d.typ,
				fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s NULL", ident(t.Dest), quoteIdent(d.name), c.ddl))
		}
	}
	return nil
}

// createLogTemp creates the table's staging temp table with the log's
// column types (all nullable) before the transaction begins.
func createLogTemp(ctx context.Context, conn *sql.Conn, t *cdc.Table, n int) error {
	origin := make([]string, len(t.Key))
	for i, k := range t.Key {
		origin[i] = fmt.Sprintf("d.%s AS _weir_o_%d", quoteIdent(t.Columns[k]), i)
	}
	qs := []string{
		"DROP TEMPORARY TABLE IF EXISTS " + logTemp(n),
		fmt.Sprintf("CREATE TEMPORARY TABLE %s SELECT %s, %s, CAST(NULL AS CHAR(4096)) AS _weir_unchanged, %s FROM (SELECT 1) AS x LEFT JOIN %s AS d ON FALSE WHERE FALSE",
			logTemp(n), qualified("d", t.Columns), strings.Join(origin, ", "), qualified("d", logCols), ident(t.Dest)),
	}
	for _, q := range qs {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("temp table: %w", err)
		}
	}
	return nil
}

func dropLogTemps(conn *sql.Conn, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range n {
		conn.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS "+logTemp(i))
	}
}

func appendOps(ctx context.Context, tx *sql.Tx, tw *cdc.TableWindow, n int) error {
	if len(tw.Ops) == 0 {
		return nil
	}
	t := tw.Table
	tmp := logTemp(n)
	partial := false
	vals := make([]any, 0, len(t.Columns)+len(t.Key)+5)
	loads := logLoadFields(t)
	lines := routes.NewLines(len(tw.Ops), func(b []byte, i int) []byte {
		o := &tw.Ops[i]
		vals = vals[:0]
		var unchanged []string
		for c := range t.Columns {
			var v any
			if o.Row != nil {
				v = o.Row[c]
			}
			if cdc.IsUnchanged(v) {
				unchanged = append(unchanged, strconv.Itoa(c))
			}
			vals = append(vals, v)
		}
		for k := range t.Key {
			var v any
			if o.Origin != nil {
				v = o.Origin[k]
			}
			vals = append(vals, v)
		}
		partial = partial || len(unchanged) > 0
		vals = append(vals, strings.Join(unchanged, ","), string(o.Op), o.Position, int64(o.Ord), o.Commit)
		return append(appendLoadFields(b, loadTexts(loads, vals)), '\n')
	})
	cols := append(append(append([]string(nil), t.Columns...), originNames(len(t.Key))...), "_weir_unchanged")
	if err := loadRows(ctx, tx, tmp, append(cols, logCols...), lines, int64(len(tw.Ops))); err != nil {
		return fmt.Errorf("stage ops: %w", err)
	}
	if partial {
		if _, err := tx.ExecContext(ctx, logFillSQL(t, tmp)); err != nil {
			return fmt.Errorf("fill unchanged columns: %w", err)
		}
	}
	all := joinIdents(append(append([]string(nil), t.Columns...), logCols...))
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s ORDER BY %s, %s",
		ident(t.Dest), all, all, tmp, quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd))
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return routes.Checkpoint("apply-after-append")
}

// logLoadFields are the YEAR and BIT positions in a staged op's fields
// (the row's columns, then the origin key's): rendered by loadTexts, as
// the replica apply does.
func logLoadFields(t *cdc.Table) []loadColumn {
	loads := loadColumns(t, t.Columns)
	for _, c := range loadColumns(t, t.Columns) {
		if i := slices.Index(t.Key, c.pos); i >= 0 {
			loads = append(loads, loadColumn{pos: len(t.Columns) + i, bit: c.bit})
		}
	}
	return loads
}

// logFillSQL copies the value of every Unchanged column from the latest
// version of the row in the log, found by its origin key.
func logFillSQL(t *cdc.Table, tmp string) string {
	sets := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		sets[i] = fmt.Sprintf("s.%s = IF(FIND_IN_SET('%d', s._weir_unchanged), p.%[1]s, s.%[1]s)", quoteIdent(c), i)
	}
	keys := joinIdents(t.KeyNames())
	latest := fmt.Sprintf("SELECT %s FROM (SELECT %s, ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s DESC, %s DESC) AS _weir_rn FROM %s WHERE %s IN ('I', 'U', 'B')) z WHERE _weir_rn = 1",
		joinIdents(t.Columns), joinIdents(t.Columns), keys, quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd), ident(t.Dest), quoteIdent(cdc.ColOp))
	return fmt.Sprintf("UPDATE %s AS s JOIN (%s) AS p ON %s SET %s WHERE s._weir_unchanged <> ''",
		tmp, latest, keyMatch(t, "p", "s", true), strings.Join(sets, ", "))
}
