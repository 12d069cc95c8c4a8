package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.Applier = (*Endpoint)(nil)

// BeginApply creates the missing destination and state tables of a
// replica run and opens its one transaction on a connection of its own.
// Each Flush applies a folded chunk per table: load the upserts into a
// temp table (text COPY streamed as it is rendered: pgoutput sends each
// type's text output, which its input accepts; typed values are rendered
// as text), fill their Unchanged
// columns from the rows the destination holds under Upsert.Origin (earlier
// chunks' rows included), TRUNCATE if one happened, DELETE … USING the
// deleted keys, then INSERT … ON CONFLICT (key) DO UPDATE, and drop the
// temp tables. Nothing is done row by row.
func (e *Endpoint) BeginApply(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	dests := make([]routes.TableRef, len(tables))
	for i, t := range tables {
		dests[i] = t.Dest
	}
	return e.beginApply(ctx, tables, dests)
}

func (e *Endpoint) beginApply(ctx context.Context, tables []*cdc.Table, dests []routes.TableRef) (*applyTx, error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	if err := ensureTables(ctx, conn.Conn(), tables, dests); err != nil {
		conn.Release()
		return nil, err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Release()
		return nil, fmt.Errorf("begin apply: %w", err)
	}
	if err := evolveReplicas(ctx, tx, tables); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		conn.Release()
		return nil, err
	}
	return &applyTx{conn: conn, tx: tx}, nil
}

// ApplyWindow applies one small window and saves states in one
// transaction (cdc.Applier).
func (e *Endpoint) ApplyWindow(ctx context.Context, w *cdc.Window, states map[routes.TableRef]routes.State) error {
	return cdc.ApplyWhole(ctx, w, states, func(ctx context.Context, tables []*cdc.Table, dests []routes.TableRef) (cdc.Tx, error) {
		x, err := e.beginApply(ctx, tables, dests)
		if err != nil {
			return nil, err
		}
		return x, nil
	})
}

// applyTx is one replica run's transaction.
type applyTx struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
	n    int // temp tables made so far: each chunk's are new
}

func (x *applyTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		if !tw.Truncated && len(tw.Upserts) == 0 && len(tw.Deletes) == 0 {
			continue
		}
		x.n++
		if err := applyTable(ctx, x.tx, tw, x.n); err != nil {
			return fmt.Errorf("apply to %s: %w", tw.Table.Dest, err)
		}
	}
	return nil
}

func (x *applyTx) Commit(ctx context.Context, states map[routes.TableRef]routes.State) error {
	return commitStates(ctx, x.tx, states, "apply")
}

func (x *applyTx) Rollback() {
	if x.conn == nil {
		return
	}
	x.tx.Rollback(context.Background())
	x.conn.Release()
	x.conn = nil
}

// commitStates saves the states and commits: the end of every run's
// transaction, replica or changelog.
func commitStates(ctx context.Context, tx pgx.Tx, states map[routes.TableRef]routes.State, what string) error {
	if err := routes.Checkpoint("apply-before-state"); err != nil {
		return err
	}
	for dest, s := range states {
		if err := saveState(ctx, tx, dest, s); err != nil {
			return fmt.Errorf("%s: %w", dest, err)
		}
	}
	if err := routes.Checkpoint("apply-before-commit"); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s: %w", what, err)
	}
	return nil
}

// ensureTables creates the state tables of dests and any table that does
// not exist yet (from the source's probe, as the bulk route would).
func ensureTables(ctx context.Context, conn *pgx.Conn, tables []*cdc.Table, dests []routes.TableRef) error {
	schemas := map[string]bool{}
	for _, dest := range dests {
		if schemas[dest.Schema] {
			continue
		}
		schemas[dest.Schema] = true
		q := "CREATE SCHEMA IF NOT EXISTS " + quoteIdent(dest.Schema) + "; " + stateDDL(dest.Schema)
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("create state table for %s: %w", dest, err)
		}
		if err := checkStateTable(ctx, conn, dest.Schema); err != nil {
			return err
		}
	}
	for _, t := range tables {
		info := t.Info
		if info == nil {
			continue
		}
		q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s, PRIMARY KEY (%s))",
			ident(t.Dest), columnDefs(info), joinIdents(t.KeyNames()))
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("create %s: %w", t.Dest, err)
		}
	}
	return nil
}

func applyTable(ctx context.Context, tx pgx.Tx, tw *cdc.TableWindow, n int) error {
	t := tw.Table
	up := fmt.Sprintf("_weir_cdc_up_%d", n)
	if err := loadUpserts(ctx, tx, tw, up); err != nil {
		return err
	}
	if tw.Truncated {
		if _, err := tx.Exec(ctx, "TRUNCATE "+ident(t.Dest)); err != nil {
			return fmt.Errorf("truncate: %w", err)
		}
	}
	if err := routes.Checkpoint("apply-after-truncate"); err != nil {
		return err
	}
	if err := applyDeletes(ctx, tx, tw, fmt.Sprintf("_weir_cdc_del_%d", n)); err != nil {
		return err
	}
	if len(tw.Upserts) == 0 {
		return nil
	}
	// Dropped now, not at commit: a run's chunks would keep the whole
	// window in temp tables until then.
	if _, err := tx.Exec(ctx, upsertSQL(t, up)+"; DROP TABLE "+up); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	return nil
}

// loadUpserts stages the upserts with their origin key and the names of
// their Unchanged columns, then fills those from the destination.
func loadUpserts(ctx context.Context, tx pgx.Tx, tw *cdc.TableWindow, tmp string) error {
	if len(tw.Upserts) == 0 {
		return nil
	}
	t := tw.Table
	origin := make([]string, len(t.Key))
	for i, k := range t.Key {
		origin[i] = fmt.Sprintf("d.%s AS _weir_o_%d", quoteIdent(t.Columns[k]), i)
	}
	q := fmt.Sprintf(`CREATE TEMP TABLE %s ON COMMIT DROP AS SELECT %s, %s, NULL::text[] AS _weir_unchanged FROM %s d WITH NO DATA`,
		tmp, qualified("d", t.Columns), strings.Join(origin, ", "), ident(t.Dest))
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	ups := make([]*cdc.Upsert, 0, len(tw.Upserts))
	for _, u := range tw.Upserts {
		ups = append(ups, u)
	}
	partial := false
	lines := routes.NewLines(len(ups), func(b []byte, i int) []byte {
		b, p := appendUpsert(b, t, ups[i])
		partial = partial || p
		return b
	})
	cols := joinIdents(t.Columns) + ", " + originList(len(t.Key)) + ", _weir_unchanged"
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, lines, fmt.Sprintf("COPY %s (%s) FROM STDIN", tmp, cols)); err != nil {
		return fmt.Errorf("copy upserts: %w", err)
	}
	if !partial {
		return nil
	}
	if _, err := tx.Exec(ctx, fillSQL(t, tmp)); err != nil {
		return fmt.Errorf("fill unchanged TOAST columns: %w", err)
	}
	return nil
}

// fillSQL copies the destination's current value into every Unchanged
// column, reading the row by its origin key.
func fillSQL(t *cdc.Table, tmp string) string {
	sets := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		q := quoteIdent(c)
		sets = append(sets, fmt.Sprintf("%s = CASE WHEN %s = ANY(s._weir_unchanged) THEN d.%s ELSE s.%s END", q, quoteLiteral(c), q, q))
	}
	return fmt.Sprintf("UPDATE %s s SET %s FROM %s d WHERE cardinality(s._weir_unchanged) > 0 AND %s",
		tmp, strings.Join(sets, ", "), ident(t.Dest), keyMatch(t, "d", "s", true))
}

func applyDeletes(ctx context.Context, tx pgx.Tx, tw *cdc.TableWindow, tmp string) error {
	if len(tw.Deletes) == 0 {
		return nil
	}
	t := tw.Table
	keys := joinIdents(t.KeyNames())
	q := fmt.Sprintf("CREATE TEMP TABLE %s ON COMMIT DROP AS SELECT %s FROM %s WITH NO DATA", tmp, keys, ident(t.Dest))
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	dels := make([][]any, 0, len(tw.Deletes))
	for _, key := range tw.Deletes {
		dels = append(dels, key)
	}
	lines := routes.NewLines(len(dels), func(b []byte, i int) []byte { return appendTextRow(b, dels[i]) })
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, lines, fmt.Sprintf("COPY %s (%s) FROM STDIN", tmp, keys)); err != nil {
		return fmt.Errorf("copy deletes: %w", err)
	}
	q = fmt.Sprintf("DELETE FROM %s d USING %s x WHERE %s; DROP TABLE %s", ident(t.Dest), tmp, keyMatch(t, "d", "x", false), tmp)
	if _, err := tx.Exec(ctx, q); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

func upsertSQL(t *cdc.Table, tmp string) string {
	cols := joinIdents(t.Columns)
	var sets []string
	for i, c := range t.Columns {
		if !isKeyColumn(t, i) {
			sets = append(sets, fmt.Sprintf("%s = EXCLUDED.%s", quoteIdent(c), quoteIdent(c)))
		}
	}
	action := "DO NOTHING"
	if len(sets) > 0 {
		action = "DO UPDATE SET " + strings.Join(sets, ", ")
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s ON CONFLICT (%s) %s",
		ident(t.Dest), cols, cols, tmp, joinIdents(t.KeyNames()), action)
}

// keyMatch is "d.k1 = s._weir_o_0 AND …" (origin) or "d.k1 = x.k1 AND …".
func keyMatch(t *cdc.Table, d, s string, origin bool) string {
	parts := make([]string, len(t.Key))
	for i, k := range t.Key {
		right := fmt.Sprintf("%s.%s", s, quoteIdent(t.Columns[k]))
		if origin {
			right = fmt.Sprintf("%s._weir_o_%d", s, i)
		}
		parts[i] = fmt.Sprintf("%s.%s = %s", d, quoteIdent(t.Columns[k]), right)
	}
	return strings.Join(parts, " AND ")
}

func isKeyColumn(t *cdc.Table, col int) bool {
	for _, k := range t.Key {
		if k == col {
			return true
		}
	}
	return false
}

func qualified(alias string, cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = alias + "." + quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

func originList(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("_weir_o_%d", i)
	}
	return strings.Join(q, ", ")
}
