package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// A changelog in ClickHouse is an append-only MergeTree ORDER BY
// (_weir_lsn, _weir_ord): the source's columns, all Nullable, then the
// cdc columns. A run stages its ops in a staging table AS the log and the
// commit attaches its parts (one atomic ATTACH PARTITION: the log is not
// partitioned) between the applying and committed state records; an
// interrupted commit is decided by the log's row count (append mode of
// landed: nothing merges rows away in a MergeTree).

// BeginLog creates the missing logs, views and state tables, and stages
// the run's ops per log under the log's lease.
func (e *Endpoint) BeginLog(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	x := newTx(e, true)
	for _, t := range tables {
		if err := e.ensureLog(ctx, t); err != nil {
			x.Rollback()
			return nil, err
		}
		if err := x.open(ctx, t, routes.ModeAppend); err != nil {
			x.Rollback()
			return nil, fmt.Errorf("append to changelog %s: %w", t.Dest, err)
		}
	}
	return x, nil
}

// AppendBaseline appends the bootstrap's staged rows as 'B' ops and saves
// the state with the log's commit protocol, then drops the staged table
// (a leftover of a crash in between is replaced by the next bootstrap).
func (e *Endpoint) AppendBaseline(ctx context.Context, b cdc.Baseline) error {
	t := b.Table
	if err := e.ensureLog(ctx, t); err != nil {
		return err
	}
	x := newTx(e, true)
	defer x.Rollback()
	if err := x.open(ctx, t, routes.ModeAppend); err != nil {
		return fmt.Errorf("append baseline to %s: %w", t.Dest, err)
	}
	c := x.tables[e.ref(t.Dest)]
	if !b.Empty {
		at, _, err := timeText(b.At.UTC(), c.tsType, Options{Subseconds: "truncate"})
		if err != nil {
			return err
		}
		ts := castExpr(quoteLiteral(at), c.tsType)
		cols := joinIdents(t.Columns)
		q := fmt.Sprintf("INSERT INTO %s (%s, %s) SELECT %s, 'B', %s, 0, %s FROM %s", ident(c.st.table), cols,
			joinIdents(logCols), cols, quoteLiteral(b.Position), ts, ident(e.ref(b.Staged)))
		if err := e.conn.exec(ctx, q); err != nil {
			return fmt.Errorf("append baseline rows to %s: %w", c.dest, err)
		}
	}
	if err := c.st.Commit(ctx, b.State); err != nil {
		return fmt.Errorf("commit baseline of %s: %w", c.dest, err)
	}
	return e.dropTable(ctx, e.ref(b.Staged))
}

// logCols are the changelog columns after the source's, in order.
var logCols = []string{cdc.ColOp, cdc.ColLSN, cdc.ColOrd, cdc.ColCommitTS}

// ensureLog creates t's log and its __current view when missing; an
// existing table without _weir_op (a replica, a bulk table) is bad input.
func (e *Endpoint) ensureLog(ctx context.Context, t *cdc.Table) error {
	dest := e.ref(t.Dest)
	if err := e.createDatabase(ctx, dest); err != nil {
		return fmt.Errorf("changelog %s: %w", dest, err)
	}
	if err := e.ensureStateTable(ctx, dest.Schema); err != nil {
		return err
	}
	exists, err := e.tableExists(ctx, dest)
	if err != nil {
		return err
	}
	if exists {
		types, err := e.columnTypes(ctx, dest)
		if err != nil {
			return err
		}
		if _, ok := types[cdc.ColOp]; !ok {
			return &routes.ProbeError{Table: dest.String(), Problem: "the table is not a changelog (no _weir_op column)",
				Hint: "drop it, or pick another destination table, for --changelog to create it"}
		}
	} else if err := e.createLog(ctx, t, dest); err != nil {
		return err
	}
	// CREATE VIEW IF NOT EXISTS would silently keep a user's table or view
	// of that name: one that is not a view over this log is refused.
	view := cdc.CurrentView(dest, routes.Unlimited)
	q := fmt.Sprintf("SELECT engine, create_table_query FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(view.Schema), quoteLiteral(view.Name))
	row, found, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return fmt.Errorf("changelog %s: view: %w", dest, err)
	}
	if found {
		if row[0] != "View" || !strings.Contains(row[1], cdc.ColLSN) {
			return routes.Occupied(view, "the current-state view of changelog "+dest.String())
		}
		return nil
	}
	return e.conn.exec(ctx, currentViewSQL(t, dest))
}

func (e *Endpoint) createLog(ctx context.Context, t *cdc.Table, dest routes.TableRef) error {
	if t.Info == nil {
		return fmt.Errorf("changelog %s: no source probe to create it from", dest)
	}
	defs, _ := e.columnDefs(t, true)
	ts := pick(e.feat.dateTime64, "DateTime64(6, 'UTC')", "DateTime('UTC')")
	defs = append(defs, quoteIdent(cdc.ColOp)+" String", quoteIdent(cdc.ColLSN)+" String",
		quoteIdent(cdc.ColOrd)+" Int64", quoteIdent(cdc.ColCommitTS)+" "+ts)
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s (%s) ENGINE = MergeTree ORDER BY (%s, %s)", ident(dest), e.opts.onCluster(),
		strings.Join(defs, ", "), quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd))
	if err := e.conn.exec(ctx, ddl); err != nil {
		return fmt.Errorf("create changelog %s: %w", dest, err)
	}
	return nil
}

// currentViewSQL is the CREATE of <log>__current in SQL ClickHouse 18.16
// accepts (no window functions): per key, the latest op at or after the
// last barrier (a T or B op; none: the whole log) by LIMIT 1 BY, unless
// it is a delete.
func currentViewSQL(t *cdc.Table, log routes.TableRef) string {
	view := cdc.CurrentView(log, routes.Unlimited)
	keys := make([]string, len(t.Key))
	for i, k := range t.KeyNames() {
		keys[i] = quoteIdent(k)
	}
	return strings.NewReplacer("$view", ident(view), "$log", ident(log), "$cols", joinIdents(t.Columns),
		"$keys", strings.Join(keys, ", "), "$op", quoteIdent(cdc.ColOp), "$lsn", quoteIdent(cdc.ColLSN), "$ord", quoteIdent(cdc.ColOrd),
	).Replace(`CREATE VIEW IF NOT EXISTS $view AS
SELECT $cols FROM (
  SELECT $cols, $op FROM $log
  WHERE $op IN ('I', 'U', 'D', 'B') AND ifNull(($lsn, $ord) >= (
    SELECT tuple($lsn, $ord) FROM $log WHERE $op IN ('T', 'B') ORDER BY $lsn DESC, $ord DESC LIMIT 1), 1)
  ORDER BY $lsn DESC, $ord DESC
  LIMIT 1 BY $keys
) WHERE $op != 'D'`)
}

// lastLogged is the latest op (not baseline) the log holds. ClickHouse
// commits each table on its own, and pgwal and binlog restart from the
// lowest position over the tables, so after a crash between two tables'
// commits a log is handed ops it already holds: they are at or before this
// position (positions sort as text). open hands it to the window as
// cdc.Table.Logged, which drops those transactions (so their rows cannot
// feed a later unchanged-value fill), and appendOps skips them too.
// Baseline rows do not count: with a binlog source the first transaction
// after the bootstrap starts at the baseline's coordinate.
func (e *Endpoint) lastLogged(ctx context.Context, log routes.TableRef) (*cdc.LogPoint, error) {
	q := fmt.Sprintf("SELECT %[1]s, toString(%[2]s) FROM %[3]s WHERE %[4]s != 'B' ORDER BY %[1]s DESC, %[2]s DESC LIMIT 1",
		quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd), ident(log), quoteIdent(cdc.ColOp))
	row, ok, err := queryRow(ctx, e.conn, q)
	if err != nil || !ok {
		return nil, err
	}
	ord, err := strconv.Atoi(row[1])
	if err != nil {
		return nil, fmt.Errorf("changelog %s: %s %q: %w", log, cdc.ColOrd, row[1], err)
	}
	return &cdc.LogPoint{Position: row[0], Ord: ord}, nil
}

func (e *Endpoint) commitTSType(ctx context.Context, log routes.TableRef) (string, error) {
	types, err := e.typesOf(ctx, log, []string{cdc.ColCommitTS})
	if err != nil {
		return "", err
	}
	return types[0], nil
}

// appendOps stages one chunk of a log's ops in order, skipping those the
// log already holds (lastLogged); Unchanged values are filled from the
// origin key's latest I/U/B row in the stage or the log.
func (x *cdcTx) appendOps(ctx context.Context, c *cdcTable, tw *cdc.TableWindow) error {
	rows, partial := make([]inputRow, 0, len(tw.Ops)), false
	for _, o := range tw.Ops {
		if c.after != "" && o.Position <= c.after {
			continue
		}
		un := unchangedList(o.Row)
		partial = partial || un != ""
		ts, _, err := timeText(o.Commit.UTC(), c.tsType, Options{Subseconds: "truncate"})
		if err != nil {
			return err
		}
		rows = append(rows, inputRow{vals: o.Row, origin: o.Origin, unchanged: un,
			extra: []string{string(o.Op), o.Position, strconv.Itoa(o.Ord), ts}})
	}
	if err := routes.Checkpoint("apply-after-append"); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	if err := x.load(ctx, c, rows); err != nil {
		return err
	}
	return x.e.conn.exec(ctx, x.logInsert(c, partial))
}

// logInsert is the INSERT … SELECT of one chunk of ops into the stage.
func (x *cdcTx) logInsert(c *cdcTable, partial bool) string {
	t := c.t
	_, keyExprs := originKeys(t, c.types)
	exprs := make([]string, 0, len(t.Columns)+len(logCols))
	for i := range t.Columns {
		exprs = append(exprs, fillExpr(i, castExpr(fmt.Sprintf("_weir_v_%d", i), c.types[i]), partial))
	}
	op, lsn, ord, ts := quoteIdent(cdc.ColOp), quoteIdent(cdc.ColLSN), quoteIdent(cdc.ColOrd), quoteIdent(cdc.ColCommitTS)
	exprs = append(exprs, "assumeNotNull("+op+")", "assumeNotNull("+lsn+")",
		"CAST(assumeNotNull("+ord+") AS Int64)", castExpr(ts, c.tsType))
	prev := ""
	if partial {
		cols := joinIdents(append(append([]string(nil), t.Columns...), logCols...))
		src := fmt.Sprintf("SELECT %s FROM %s UNION ALL SELECT %s FROM %s", cols, ident(c.st.table), cols, ident(c.dest))
		prev = prevSQL(t, c.in, keyExprs, src, op+" IN ('I', 'U', 'B')", lsn+" DESC, "+ord+" DESC")
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", ident(c.st.table),
		joinIdents(append(append([]string(nil), t.Columns...), logCols...)),
		strings.Join(exprs, ", "), fromInput(c.in, keyExprs, prev))
}
