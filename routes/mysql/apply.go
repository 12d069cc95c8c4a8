package mysql

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

var _ cdc.Applier = (*Endpoint)(nil)

// BeginApply creates the missing destination and state tables of a
// replica run and two session temp tables per table (upserts, deleted
// keys), all before the transaction (DDL commits in MySQL), then begins
// the run's one InnoDB transaction. Each Flush applies a folded chunk per
// table, set-based: LOAD DATA the upserts (with their origin key and the
// indexes of their Unchanged columns), fill Unchanged columns from the
// destination's rows under the origin key (earlier chunks' rows included),
// DELETE every row if a TRUNCATE happened (TRUNCATE TABLE would commit),
// DELETE … JOIN the deleted keys, then INSERT … SELECT … ON DUPLICATE KEY
// UPDATE. The temp tables are emptied between chunks and dropped after the
// transaction ends.
func (e *Endpoint) BeginApply(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	dests := make([]routes.TableRef, len(tables))
	for i, t := range tables {
		dests[i] = t.Dest
	}
	return e.beginApply(ctx, tables, dests)
}

func (e *Endpoint) beginApply(ctx context.Context, tables []*cdc.Table, dests []routes.TableRef) (*applyTx, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	x := &applyTx{conn: conn, temps: map[routes.TableRef]int{}, used: map[int]bool{}}
	if err := x.begin(ctx, e, tables, dests); err != nil {
		x.Rollback()
		return nil, err
	}
	return x, nil
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
	conn  *sql.Conn
	tx    *sql.Tx
	temps map[routes.TableRef]int // destination → its temp tables' number
	used  map[int]bool            // temp tables holding an earlier chunk's rows
}

func (x *applyTx) begin(ctx context.Context, e *Endpoint, tables []*cdc.Table, dests []routes.TableRef) error {
	if err := e.ensureTables(ctx, x.conn, tables, dests); err != nil {
		return err
	}
	for i, t := range tables {
		if err := createTemps(ctx, x.conn, t, i); err != nil {
			return fmt.Errorf("apply to %s: %w", t.Dest, err)
		}
		x.temps[t.Dest] = i
	}
	tx, err := x.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin apply: %w", err)
	}
	x.tx = tx
	return nil
}

func (x *applyTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		if !tw.Truncated && len(tw.Upserts) == 0 && len(tw.Deletes) == 0 {
			continue
		}
		n, ok := x.temps[tw.Table.Dest]
		if !ok {
			return fmt.Errorf("apply to %s: not a table of this run", tw.Table.Dest)
		}
		for _, tmp := range []string{upTemp(n), delTemp(n)} {
			if !x.used[n] {
				break
			}
			if _, err := x.tx.ExecContext(ctx, "DELETE FROM "+tmp); err != nil {
				return fmt.Errorf("apply to %s: empty %s: %w", tw.Table.Dest, tmp, err)
			}
		}
		x.used[n] = true
		if err := applyTable(ctx, x.tx, tw, n); err != nil {
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
	if x.tx != nil {
		x.tx.Rollback()
	}
	dropTemps(x.conn, len(x.temps))
	x.conn.Close()
	x.conn = nil
}

// commitStates saves the states and commits: the end of every run's
// transaction, replica or changelog.
func commitStates(ctx context.Context, tx *sql.Tx, states map[routes.TableRef]routes.State, what string) error {
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
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit %s: %w", what, err)
	}
	return nil
}

// ensureTables creates the state tables of dests and any table that does
// not exist yet, with the DDL the bulk route's staging table gets.
func (e *Endpoint) ensureTables(ctx context.Context, conn *sql.Conn, tables []*cdc.Table, dests []routes.TableRef) error {
	schemas := map[string]bool{}
	for _, dest := range dests {
		if schemas[dest.Schema] {
			continue
		}
		schemas[dest.Schema] = true
		if _, err := conn.ExecContext(ctx, stateDDL(dest.Schema, e.flavor)); err != nil {
			return fmt.Errorf("create state table for %s: %w", dest, err)
		}
		if err := checkStateTable(ctx, conn, dest.Schema); err != nil {
			return err
		}
	}
	for _, t := range tables {
		info, key := t.Info, t.KeyNames()
		if info == nil {
			continue
		}
		if err := e.checkColumnNames(ctx, info); err != nil { // a column the source added since
			return err
		}
		q := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s",
			ident(t.Dest), columnDefs(stagedColumns(info, key), key), e.flavor.binCollation())
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create %s: %w", t.Dest, err)
		}
		if err := evolveReplica(ctx, conn, t); err != nil {
			return err
		}
	}
	return nil
}

func upTemp(n int) string  { return fmt.Sprintf("_weir_cdc_up_%d", n) }
func delTemp(n int) string { return fmt.Sprintf("_weir_cdc_del_%d", n) }

// createTemps creates the table's two temp tables with the destination's
// column types; the outer join makes every column nullable (an Unchanged
// value is staged as NULL until it is filled).
func createTemps(ctx context.Context, conn *sql.Conn, t *cdc.Table, n int) error {
	origin := make([]string, len(t.Key))
	for i, k := range t.Key {
		origin[i] = fmt.Sprintf("d.%s AS _weir_o_%d", quoteIdent(t.Columns[k]), i)
	}
	from := fmt.Sprintf("FROM (SELECT 1) AS x LEFT JOIN %s AS d ON FALSE WHERE FALSE", ident(t.Dest))
	qs := []string{
		fmt.Sprintf("DROP TEMPORARY TABLE IF EXISTS %s, %s", upTemp(n), delTemp(n)),
		fmt.Sprintf("CREATE TEMPORARY TABLE %s SELECT %s, %s, CAST(NULL AS CHAR(4096)) AS _weir_unchanged %s",
			upTemp(n), qualified("d", t.Columns), strings.Join(origin, ", "), from),
		fmt.Sprintf("CREATE TEMPORARY TABLE %s SELECT %s %s", delTemp(n), qualified("d", t.KeyNames()), from),
	}
	for _, q := range qs {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("temp tables: %w", err)
		}
	}
	return nil
}

func dropTemps(conn *sql.Conn, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range n {
		conn.ExecContext(ctx, fmt.Sprintf("DROP TEMPORARY TABLE IF EXISTS %s, %s", upTemp(i), delTemp(i)))
	}
}

func applyTable(ctx context.Context, tx *sql.Tx, tw *cdc.TableWindow, n int) error {
	t := tw.Table
	if err := stageUpserts(ctx, tx, tw, upTemp(n)); err != nil {
		return err
	}
	if tw.Truncated {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+ident(t.Dest)); err != nil {
			return fmt.Errorf("truncate: %w", err)
		}
	}
	if err := routes.Checkpoint("apply-after-truncate"); err != nil {
		return err
	}
	if len(tw.Deletes) > 0 {
		keyLoads := loadColumns(t, t.KeyNames())
		dels := make([][]any, 0, len(tw.Deletes))
		for _, key := range tw.Deletes {
			dels = append(dels, key)
		}
		lines := routes.NewLines(len(dels), func(b []byte, i int) []byte {
			return append(appendLoadFields(b, loadTexts(keyLoads, dels[i])), '\n')
		})
		if err := loadRows(ctx, tx, delTemp(n), t.KeyNames(), lines, int64(len(dels))); err != nil {
			return fmt.Errorf("stage deletes: %w", err)
		}
		q := fmt.Sprintf("DELETE d FROM %s AS d JOIN %s AS x ON %s", ident(t.Dest), delTemp(n), keyMatch(t, "d", "x", false))
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
	}
	if len(tw.Upserts) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, upsertSQL(t, upTemp(n))); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	return nil
}

// stageUpserts loads the upserts and fills their Unchanged columns.
func stageUpserts(ctx context.Context, tx *sql.Tx, tw *cdc.TableWindow, tmp string) error {
	if len(tw.Upserts) == 0 {
		return nil
	}
	t := tw.Table
	partial := false
	rowLoads, keyLoads := loadColumns(t, t.Columns), loadColumns(t, t.KeyNames())
	ups := make([]*cdc.Upsert, 0, len(tw.Upserts))
	for _, u := range tw.Upserts {
		ups = append(ups, u)
	}
	// One line per upsert: the row, its origin key, then the indexes of
	// its Unchanged columns ("3,7"; empty when none).
	lines := routes.NewLines(len(ups), func(b []byte, i int) []byte {
		u := ups[i]
		b = append(appendLoadFields(b, loadTexts(rowLoads, u.Row)), '\t')
		if len(u.Origin) > 0 {
			b = append(appendLoadFields(b, loadTexts(keyLoads, u.Origin)), '\t')
		}
		first := true
		for c, v := range u.Row {
			if cdc.IsUnchanged(v) {
				if !first {
					b = append(b, ',')
				}
				b, first, partial = strconv.AppendInt(b, int64(c), 10), false, true
			}
		}
		return append(b, '\n')
	})
	cols := append(append([]string(nil), t.Columns...), originNames(len(t.Key))...)
	if err := loadRows(ctx, tx, tmp, append(cols, "_weir_unchanged"), lines, int64(len(ups))); err != nil {
		return fmt.Errorf("stage upserts: %w", err)
	}
	if !partial {
		return nil
	}
	sets := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		sets[i] = fmt.Sprintf("s.%s = IF(FIND_IN_SET('%d', s._weir_unchanged), d.%[1]s, s.%[1]s)", quoteIdent(c), i)
	}
	q := fmt.Sprintf("UPDATE %s AS s JOIN %s AS d ON %s SET %s WHERE s._weir_unchanged <> ''",
		tmp, ident(t.Dest), keyMatch(t, "d", "s", true), strings.Join(sets, ", "))
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("fill unchanged columns: %w", err)
	}
	return nil
}

// loadRows runs LOAD DATA LOCAL from r (LOAD DATA text lines, see
// appendLoadFields) into a temp table and fails on any warning, like the
// bulk route's Write.
func loadRows(ctx context.Context, tx *sql.Tx, tmp string, cols []string, r io.Reader, want int64) error {
	name := fmt.Sprintf("weir_cdc_%s_%p", tmp, r)
	driver.RegisterReaderHandler(name, func() io.Reader { return r })
	defer driver.DeregisterReaderHandler(name)
	q := fmt.Sprintf(`LOAD DATA LOCAL INFILE 'Reader::%s' INTO TABLE %s CHARACTER SET binary
FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY '' (%s)`,
		name, tmp, joinIdents(cols))
	res, err := tx.ExecContext(ctx, q)
	if err != nil {
		return loadHint(err)
	}
	if err := warnings(ctx, tx); err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n != want {
		return fmt.Errorf("the server took %d of %d rows", n, want)
	}
	return nil
}

// loadColumn is a position in a LOAD DATA line whose value the default
// text would alter: a YEAR ("0" reads as 2000; "0000" as 0000) or a BIT
// (the text "5" is stored as its bytes, 0x35; the value's own bytes are
// stored as the number).
type loadColumn struct {
	pos int
	bit bool
}

// loadColumns returns the YEAR and BIT columns among cols (by the table's
// native types), worked out once per window, not per row.
func loadColumns(t *cdc.Table, cols []string) []loadColumn {
	var out []loadColumn
	for i, c := range cols {
		j := slices.Index(t.Columns, c)
		if j < 0 || j >= len(t.Types) {
			continue
		}
		switch parseColumnType(t.Types[j]).dataType {
		case "year":
			out = append(out, loadColumn{pos: i})
		case "bit":
			out = append(out, loadColumn{pos: i, bit: true})
		}
	}
	return out
}

// loadTexts returns vals with the values at the positions of lc rendered
// as LOAD DATA keeps them: a YEAR as four digits, a BIT as the value's
// big-endian bytes (at least one).
func loadTexts(lc []loadColumn, vals []any) []any {
	out, copied := vals, false
	for _, c := range lc {
		if c.pos >= len(vals) {
			continue
		}
		var n uint64
		switch v := vals[c.pos].(type) {
		case int:
			n = uint64(v)
		case int8:
			n = uint64(v)
		case int16:
			n = uint64(v)
		case int32:
			n = uint64(v)
		case int64:
			n = uint64(v)
		case uint8:
			n = uint64(v)
		case uint16:
			n = uint64(v)
		case uint32:
			n = uint64(v)
		case uint64:
			n = v
		case bool: // a BIT(1) may arrive as a boolean
			if !c.bit {
				continue
			}
			if v {
				n = 1
			}
		default:
			continue // NULL, Unchanged, or already text
		}
		if !copied {
			out, copied = append([]any(nil), vals...), true
		}
		if !c.bit {
			out[c.pos] = fmt.Sprintf("%04d", n)
			continue
		}
		b := binary.BigEndian.AppendUint64(nil, n)
		for len(b) > 1 && b[0] == 0 {
			b = b[1:]
		}
		out[c.pos] = b
	}
	return out
}

// appendLoadFields appends values as the tab-separated fields of a LOAD
// DATA line: NULL as \N, bytes and text escaped, times in UTC with
// microseconds (the session's time zone is UTC, as for the bulk route),
// booleans as 1/0.
func appendLoadFields(b []byte, vals []any) []byte {
	for i, v := range vals {
		if i > 0 {
			b = append(b, '\t')
		}
		b = appendLoadValue(b, v)
	}
	return b
}

func appendLoadValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, `\N`...)
	case string:
		return escape(b, x)
	case []byte:
		return escape(b, x)
	case bool:
		if x {
			return append(b, '1')
		}
		return append(b, '0')
	case time.Time:
		return x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
	case arrow.MonthDayNanoInterval: // as intervalEncoder prints the bulk route's
		return routes.AppendInterval(b, x.Months, x.Days, x.Nanoseconds/1000)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case float32:
		return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	}
	if cdc.IsUnchanged(v) {
		return append(b, `\N`...)
	}
	return escape(b, fmt.Sprint(v))
}

func upsertSQL(t *cdc.Table, tmp string) string {
	var sets []string
	for i, c := range t.Columns {
		if !isKeyColumn(t, i) {
			sets = append(sets, fmt.Sprintf("%s = s.%[1]s", quoteIdent(c)))
		}
	}
	if len(sets) == 0 {
		k := quoteIdent(t.Columns[t.Key[0]])
		sets = append(sets, k+" = "+k)
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s AS s ON DUPLICATE KEY UPDATE %s",
		ident(t.Dest), joinIdents(t.Columns), qualified("s", t.Columns), tmp, strings.Join(sets, ", "))
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

func originNames(n int) []string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("_weir_o_%d", i)
	}
	return q
}
