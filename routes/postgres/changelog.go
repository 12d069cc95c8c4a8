package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.LogAppender = (*Endpoint)(nil)

// logCols are the changelog columns after the source's, in order.
var logCols = []string{cdc.ColOp, cdc.ColLSN, cdc.ColOrd, cdc.ColCommitTS}

// BeginLog creates the logs (and the state tables) that do not exist yet
// and opens the run's one transaction on a connection of its own.
func (e *Endpoint) BeginLog(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("append changelog: %w", err)
	}
	x := &logTx{conn: conn}
	if err := x.begin(ctx, tables); err != nil {
		conn.Release()
		return nil, err
	}
	return x, nil
}

// logTx is one changelog run's transaction. Each Flush COPYs a table's
// ops (with the origin key and the names of Unchanged columns) into a temp
// table, fills Unchanged columns from the key's latest version in the log,
// then appends with one INSERT … SELECT. Nothing in the log is updated or
// deleted.
type logTx struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
	n    int // temp tables made so far
}

func (x *logTx) begin(ctx context.Context, tables []*cdc.Table) error {
	dests := make([]routes.TableRef, len(tables))
	for i, t := range tables {
		dests[i] = t.Dest
	}
	if err := ensureTables(ctx, x.conn.Conn(), nil, dests); err != nil {
		return err
	}
	for _, t := range tables {
		if err := ensureLog(ctx, x.conn.Conn(), t); err != nil {
			return err
		}
	}
	tx, err := x.conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin append: %w", err)
	}
	for _, t := range tables {
		if err := checkLogTypes(ctx, tx, t); err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
			return err
		}
	}
	x.tx = tx
	return nil
}

// checkLogTypes holds a log's columns to its source's as this run reads
// them: a log is never altered, so a type of another family
// (checkFamilies), or one the log's column does not hold exactly (holds:
// the COPY's input functions round a bigint past 2^53 into a double, a
// decimal to a numeric(p,s)'s scale, microseconds into a timestamp(3),
// and drop a timestamptz's offset, all without an error), is refused
// before an op is appended.
func checkLogTypes(ctx context.Context, tx pgx.Tx, t *cdc.Table) error {
	if t.Info == nil {
		return nil
	}
	staged, err := sourceColumns(ctx, tx, t.Info)
	if err != nil {
		return fmt.Errorf("changelog %s: %w", t.Dest, err)
	}
	have, err := relColumns(ctx, tx, t.Dest)
	if err != nil {
		return err
	}
	if err := checkFamilies(t, "changelog", staged, have); err != nil {
		return err
	}
	byName := map[string]string{}
	for _, c := range have {
		byName[c.name] = c.typ
	}
	for _, s := range staged {
		if d, ok := byName[s.name]; ok && !holds(d, s.typ) {
			return routes.LossyError(t.Dest, s.name, s.typ, d,
				fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", ident(t.Dest), quoteIdent(s.name), s.typ))
		}
	}
	return nil
}

func (x *logTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		x.n++
		if err := appendOps(ctx, x.tx, tw, x.n); err != nil {
			return fmt.Errorf("append to changelog %s: %w", tw.Table.Dest, err)
		}
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
	x.tx.Rollback(context.Background())
	x.conn.Release()
	x.conn = nil
}

// AppendBaseline appends the bootstrap's staged rows to the log as 'B'
// ops, forgets the staged table's own state row, drops it and saves the
// log's state: one transaction (DDL is transactional here).
func (e *Endpoint) AppendBaseline(ctx context.Context, b cdc.Baseline) error {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("append baseline: %w", err)
	}
	defer conn.Release()
	t := b.Table
	if err := ensureTables(ctx, conn.Conn(), nil, []routes.TableRef{t.Dest}); err != nil {
		return err
	}
	if err := ensureLog(ctx, conn.Conn(), t); err != nil {
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin baseline: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if !b.Empty {
		cols := joinIdents(t.Columns)
		q := fmt.Sprintf("INSERT INTO %s (%s, %s) SELECT %s, 'B', $1, 0, $2 FROM %s",
			ident(t.Dest), cols, joinIdents(logCols), cols, ident(b.Staged))
		if _, err := tx.Exec(ctx, q, b.Position, b.At); err != nil {
			return fmt.Errorf("append baseline rows: %w", err)
		}
	}
	stateTable := ident(routes.TableRef{Schema: b.Staged.Schema, Name: StateTable})
	if _, err := tx.Exec(ctx, "DELETE FROM "+stateTable+" WHERE dest_table = $1", b.Staged.Name); err != nil {
		return fmt.Errorf("forget %s: %w", b.Staged, err)
	}
	if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+ident(b.Staged)); err != nil {
		return fmt.Errorf("drop %s: %w", b.Staged, err)
	}
	if err := saveState(ctx, tx, t.Dest, b.State); err != nil {
		return fmt.Errorf("%s: %w", t.Dest, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit baseline: %w", err)
	}
	return nil
}

// ensureLog creates t's log table (the source's columns, all nullable since
// a delete may carry only the key, then the _weir_ columns), an index in
// log order, and the __current view. An existing table without _weir_op is
// a replica, not a log: refused.
func ensureLog(ctx context.Context, conn *pgx.Conn, t *cdc.Table) error {
	info := t.Info
	if info == nil {
		return fmt.Errorf("changelog %s: no probe of the source table", t.Dest)
	}
	defs := make([]string, 0, len(info.Columns)+len(logCols))
	for _, c := range info.Columns {
		defs = append(defs, quoteIdent(c.Name)+" "+stageType(c, info.Scheme))
	}
	defs = append(defs, quoteIdent(cdc.ColOp)+" text NOT NULL", quoteIdent(cdc.ColLSN)+` text COLLATE "C" NOT NULL`,
		quoteIdent(cdc.ColOrd)+" int NOT NULL", quoteIdent(cdc.ColCommitTS)+" timestamptz NOT NULL")
	q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s)", ident(t.Dest), strings.Join(defs, ", "))
	if _, err := conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("create changelog %s: %w", t.Dest, err)
	}
	var isLog bool
	q = `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped)`
	if err := conn.QueryRow(ctx, q, ident(t.Dest), cdc.ColOp).Scan(&isLog); err != nil {
		return fmt.Errorf("changelog %s: %w", t.Dest, err)
	}
	if !isLog {
		return routes.BadInput("changelog: %s exists and is not a changelog (no %s column): name another destination table", t.Dest, cdc.ColOp)
	}
	q = fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (%s, %s)",
		quoteIdent(routes.SideName("", t.Dest.Name, "__weir_pos", maxIdent)), ident(t.Dest), quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd))
	if _, err := conn.Exec(ctx, q); err != nil {
		return fmt.Errorf("changelog %s: index: %w", t.Dest, err)
	}
	// Only when missing: replacing it every run would wait for (and block)
	// every reader of the view. A relation of that name that is not a view
	// over this log is the user's: refused, never replaced.
	view := cdc.CurrentView(t.Dest, maxIdent)
	var kind, def string
	q = `SELECT c.relkind::text, COALESCE(pg_get_viewdef(c.oid), '') FROM pg_class c WHERE c.oid = to_regclass($1)`
	switch err := conn.QueryRow(ctx, q, ident(view)).Scan(&kind, &def); {
	case err == nil:
		if kind != "v" || !strings.Contains(def, cdc.ColLSN) {
			return routes.Occupied(view, "the current-state view of changelog "+t.Dest.String())
		}
		return nil
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("changelog %s: view: %w", t.Dest, err)
	}
	if _, err := conn.Exec(ctx, cdc.CurrentViewSQL(t, maxIdent, quoteIdent)); err != nil {
		return fmt.Errorf("changelog %s: view: %w", t.Dest, err)
	}
	return nil
}

func appendOps(ctx context.Context, tx pgx.Tx, tw *cdc.TableWindow, n int) error {
	if len(tw.Ops) == 0 {
		return nil
	}
	t := tw.Table
	tmp := fmt.Sprintf("_weir_cdc_log_%d", n)
	origin := make([]string, len(t.Key))
	for i, k := range t.Key {
		origin[i] = fmt.Sprintf("d.%s AS _weir_o_%d", quoteIdent(t.Columns[k]), i)
	}
	q := fmt.Sprintf(`CREATE TEMP TABLE %s ON COMMIT DROP AS SELECT %s, %s, NULL::text[] AS _weir_unchanged, %s FROM %s d WITH NO DATA`,
		tmp, qualified("d", t.Columns), strings.Join(origin, ", "), qualified("d", logCols), ident(t.Dest))
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	partial := false
	vals := make([]any, 0, len(t.Columns)+len(t.Key)+5)
	lines := routes.NewLines(len(tw.Ops), func(b []byte, i int) []byte {
		o := &tw.Ops[i]
		partial = partial || o.Partial()
		vals = logOpValues(vals[:0], t, o)
		return appendTextRow(b, vals)
	})
	cols := joinIdents(t.Columns) + ", " + originList(len(t.Key)) + ", _weir_unchanged, " + joinIdents(logCols)
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, lines, fmt.Sprintf("COPY %s (%s) FROM STDIN", tmp, cols)); err != nil {
		return fmt.Errorf("copy ops: %w", err)
	}
	if partial {
		if _, err := tx.Exec(ctx, logFillSQL(t, tmp)); err != nil {
			return fmt.Errorf("fill unchanged TOAST columns: %w", err)
		}
	}
	all := joinIdents(append(append([]string(nil), t.Columns...), logCols...))
	q = fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s ORDER BY %s, %s; DROP TABLE %s",
		ident(t.Dest), all, all, tmp, quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd), tmp)
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return routes.Checkpoint("apply-after-append")
}

// logOpValues appends to vals the values of one op's COPY text line: the
// row (nil for a truncate; Unchanged as NULL, named in the array), the
// origin key, the Unchanged column names, then op, position, ordinal and
// commit time.
func logOpValues(vals []any, t *cdc.Table, o *cdc.LogOp) []any {
	var unchanged []string
	for i := range t.Columns {
		var v any
		if o.Row != nil {
			v = o.Row[i]
		}
		if cdc.IsUnchanged(v) {
			unchanged = append(unchanged, t.Columns[i])
		}
		vals = append(vals, v)
	}
	for i := range t.Key {
		var v any
		if o.Origin != nil {
			v = o.Origin[i]
		}
		vals = append(vals, v)
	}
	return append(vals, textArray(unchanged), string(o.Op), o.Position, strconv.Itoa(o.Ord), o.Commit)
}

// logFillSQL copies the value of every Unchanged column from the latest
// version of the row in the log, found by its origin key.
func logFillSQL(t *cdc.Table, tmp string) string {
	sets := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		q := quoteIdent(c)
		sets = append(sets, fmt.Sprintf("%s = CASE WHEN %s = ANY(s._weir_unchanged) THEN p.%s ELSE s.%s END", q, quoteLiteral(c), q, q))
	}
	keys := joinIdents(t.KeyNames())
	latest := fmt.Sprintf("SELECT DISTINCT ON (%s) %s FROM %s WHERE %s IN ('I', 'U', 'B') ORDER BY %s, %s DESC, %s DESC",
		keys, joinIdents(t.Columns), ident(t.Dest), quoteIdent(cdc.ColOp), keys, quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd))
	return fmt.Sprintf("UPDATE %s s SET %s FROM (%s) p WHERE cardinality(s._weir_unchanged) > 0 AND %s",
		tmp, strings.Join(sets, ", "), latest, keyMatch(t, "p", "s", true))
}
