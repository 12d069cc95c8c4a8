package clickhouse

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// A replica in ClickHouse is a ReplacingMergeTree(_weir_version) ORDER BY
// the primary key, with two columns after the source's: every upsert is a
// new version of its row, every delete a tombstone (the key, _weir_deleted
// = 1). Readers take the latest version and drop tombstones:
//
//	SELECT … FROM t FINAL WHERE _weir_deleted = 0
//
// (18.16 has no is_deleted engine parameter, so merges keep tombstones.)
// Rows of a bulk load (the bootstrap) have version 0 (the columns'
// DEFAULT). A run numbers its chunks after the highest version in the
// table, so versions grow across chunks and runs.
const (
	ColVersion = "_weir_version"
	ColDeleted = "_weir_deleted"
)

var (
	_ cdc.Applier     = (*Endpoint)(nil)
	_ cdc.LogAppender = (*Endpoint)(nil)
)

// BeginApply creates the missing replica and state tables, takes each
// table's lease and creates its staging table (AS the replica) and input
// table. Flush writes each chunk into the staging tables only; Commit
// lands them with the route's commit protocol, table by table (ClickHouse
// has no transaction across tables), so until then the replica and its
// position are untouched.
func (e *Endpoint) BeginApply(ctx context.Context, tables []*cdc.Table) (cdc.Tx, error) {
	return e.beginApply(ctx, tables)
}

func (e *Endpoint) beginApply(ctx context.Context, tables []*cdc.Table) (*cdcTx, error) {
	x := newTx(e, false)
	for _, t := range tables {
		if err := e.EnsureReplica(ctx, t, nil); err != nil {
			x.Rollback()
			return nil, err
		}
		if err := x.open(ctx, t, routes.ModeMerge); err != nil {
			x.Rollback()
			return nil, fmt.Errorf("apply to %s: %w", t.Dest, err)
		}
	}
	return x, nil
}

// ApplyWindow applies one small window and saves states (cdc.Applier): a
// bootstrap's TRUNCATE of an empty table, a reset's cleared positions.
func (e *Endpoint) ApplyWindow(ctx context.Context, w *cdc.Window, states map[routes.TableRef]routes.State) error {
	return cdc.ApplyWhole(ctx, w, states, func(ctx context.Context, tables []*cdc.Table, _ []routes.TableRef) (cdc.Tx, error) {
		return e.beginApply(ctx, tables)
	})
}

// EnsureReplica creates t's replica when it is missing (cdc.Bootstrap
// calls it before the bulk copy, whose replace then keeps this shape; see
// Prepare) and refuses an existing table that is not one, or, with a
// claim (cdc.ReplicaEnsurer), any existing table: a replica-shaped table
// without weir's state row is the user's too.
func (e *Endpoint) EnsureReplica(ctx context.Context, t *cdc.Table, claim *routes.State) error {
	dest := e.ref(t.Dest)
	if t.Info != nil {
		for _, c := range t.Info.Columns {
			if c.Name == ColVersion || c.Name == ColDeleted {
				return &routes.ProbeError{Table: t.Source.String(), Column: c.Name,
					Problem: "a ClickHouse replica adds a column of this name (" + ColVersion + ", " + ColDeleted + ")",
					Hint:    "rename the source column, or capture the table as a changelog (--changelog)"}
			}
		}
	}
	if err := e.createDatabase(ctx, dest); err != nil {
		return fmt.Errorf("replica %s: %w", dest, err)
	}
	if err := e.ensureStateTable(ctx, dest.Schema); err != nil {
		return err
	}
	exists, err := e.tableExists(ctx, dest)
	if err != nil {
		return err
	}
	if exists && claim != nil {
		return routes.Occupied(dest, "the log_based replica of "+t.Source.String())
	}
	if exists {
		ok, err := e.isReplica(ctx, dest)
		if err != nil || ok {
			return err
		}
		return &routes.ProbeError{Table: dest.String(), Problem: "the table is not a weir replica (ReplacingMergeTree(_weir_version) with _weir_deleted)",
			Hint: "drop it, or pick another destination table, for the log_based bootstrap to create it"}
	}
	if t.Info == nil {
		return fmt.Errorf("replica %s: no source probe to create it from", dest)
	}
	if claim != nil {
		r := stateRecord{dest: dest.Name, source: claim.SourceID, runID: claim.RunID, status: statusCommitted, mode: string(routes.ModeLogBased)}
		if err := e.writeState(ctx, dest.Schema, r); err != nil {
			return fmt.Errorf("replica %s: %w", dest, err)
		}
	}
	defs, keys := e.columnDefs(t, false)
	defs = append(defs, quoteIdent(ColVersion)+" UInt64 DEFAULT 0", quoteIdent(ColDeleted)+" UInt8 DEFAULT 0")
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s (%s) ENGINE = ReplacingMergeTree(%s) ORDER BY (%s)",
		ident(dest), e.opts.onCluster(), strings.Join(defs, ", "), quoteIdent(ColVersion), strings.Join(keys, ", "))
	if err := e.conn.exec(ctx, ddl); err != nil {
		return fmt.Errorf("create replica %s: %w", dest, err)
	}
	return nil
}

// columnDefs renders t's columns with the types the bulk route creates
// (all Nullable when nullable is set, as a changelog's) and its quoted
// key columns.
func (e *Endpoint) columnDefs(t *cdc.Table, nullable bool) (defs, keys []string) {
	for _, name := range t.Columns {
		c, ok := t.Info.Column(name)
		if !ok {
			continue
		}
		if nullable {
			c.Nullable = true
		}
		defs = append(defs, quoteIdent(name)+" "+destType(c, t.Info.Scheme, e.feat))
	}
	for _, k := range t.KeyNames() {
		keys = append(keys, quoteIdent(k))
	}
	return defs, keys
}

// isReplica reports whether t exists with the replica's columns.
func (e *Endpoint) isReplica(ctx context.Context, t routes.TableRef) (bool, error) {
	q := fmt.Sprintf("SELECT toString(count()) FROM system.columns WHERE database = %s AND table = %s AND name IN (%s, %s)",
		quoteLiteral(t.Schema), quoteLiteral(t.Name), quoteLiteral(ColVersion), quoteLiteral(ColDeleted))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return false, err
	}
	return row[0] == "2", nil
}

// cdcTx is one run's open "transaction" into ClickHouse: per destination
// table a staging table under the table's lease. Nothing is visible before
// Commit.
type cdcTx struct {
	e      *Endpoint
	runID  string
	log    bool
	tables map[routes.TableRef]*cdcTable
}

// cdcTable is one destination table of a run.
type cdcTable struct {
	t         *cdc.Table
	dest      routes.TableRef
	st        *stage
	types     []string // the destination's column types, aligned with t.Columns
	in        routes.TableRef
	names     []string // the input table's columns
	version   uint64   // replica: the version of the last chunk
	truncated bool     // replica: the stage replaces the table
	after     string   // changelog: ops at or before this position are in the log
	tsType    string   // changelog: the type of _weir_commit_ts
}

func newTx(e *Endpoint, log bool) *cdcTx {
	return &cdcTx{e: e, runID: routes.NewRunID(), log: log, tables: map[routes.TableRef]*cdcTable{}}
}

// open takes dest's lease and creates its staging table through Prepare
// (merge for a replica, append for a log: both stage AS the destination
// and attach their parts at the commit) and its input table.
func (x *cdcTx) open(ctx context.Context, t *cdc.Table, mode routes.Mode) error {
	e, dest := x.e, x.e.ref(t.Dest)
	s, err := e.Prepare(ctx, t.Info, routes.WriteOptions{Table: dest, Mode: mode, RunID: x.runID, Key: t.KeyNames()})
	if err != nil {
		return err
	}
	c := &cdcTable{t: t, dest: dest, st: s.(*stage)}
	x.tables[dest] = c
	if c.types, err = e.typesOf(ctx, dest, t.Columns); err != nil {
		return err
	}
	extra := []string{ColDeleted}
	if x.log {
		extra = []string{cdc.ColOp, cdc.ColLSN, cdc.ColOrd, cdc.ColCommitTS}
		var last *cdc.LogPoint
		if last, err = e.lastLogged(ctx, dest); err == nil {
			if last != nil {
				c.after, t.Logged = last.Position, last
			}
			c.tsType, err = e.commitTSType(ctx, dest)
		}
	} else {
		c.version, err = e.maxVersion(ctx, dest)
	}
	if err != nil {
		return err
	}
	c.names = inputNames(t, extra)
	in := routes.TableRef{Schema: dest.Schema, Name: weirName(inputPrefix, dest.Name, x.runID)}
	if err := e.createInput(ctx, in, c.names); err != nil {
		return err
	}
	c.in = in // only now this run's to drop
	return nil
}

// typesOf returns the column types of cols in t.
func (e *Endpoint) typesOf(ctx context.Context, t routes.TableRef, cols []string) ([]string, error) {
	m, err := e.columnTypes(ctx, t)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		typ, ok := m[c]
		if !ok {
			return nil, &routes.ProbeError{Table: t.String(), Column: c, Problem: "the destination has no such column", Hint: "schema changes are not followed: add the column, or re-bootstrap"}
		}
		out[i] = typ
	}
	return out, nil
}

func (e *Endpoint) maxVersion(ctx context.Context, t routes.TableRef) (uint64, error) {
	row, _, err := queryRow(ctx, e.conn, fmt.Sprintf("SELECT toString(max(%s)) FROM %s", quoteIdent(ColVersion), ident(t)))
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(row[0], 10, 64)
}

func (x *cdcTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		c, ok := x.tables[x.e.ref(tw.Table.Dest)]
		if !ok {
			return fmt.Errorf("apply to %s: not a table of this run", tw.Table.Dest)
		}
		var err error
		if x.log {
			err = x.appendOps(ctx, c, tw)
		} else {
			err = x.applyChunk(ctx, c, tw)
		}
		if err != nil {
			return fmt.Errorf("apply to %s: %w", c.dest, err)
		}
	}
	return nil
}

// applyChunk writes one folded chunk into the stage as the next version:
// a TRUNCATE empties the stage (the commit then swaps it in), deletes
// become tombstones, upserts whole rows with Unchanged columns filled from
// the origin key's latest live version (the stage's, else the replica's).
func (x *cdcTx) applyChunk(ctx context.Context, c *cdcTable, tw *cdc.TableWindow) error {
	e := x.e
	if tw.Truncated {
		if err := e.conn.exec(ctx, "TRUNCATE TABLE "+ident(c.st.table)); err != nil {
			return fmt.Errorf("truncate: %w", err)
		}
		c.truncated = true
	}
	if err := routes.Checkpoint("apply-after-truncate"); err != nil {
		return err
	}
	if len(tw.Upserts) == 0 && len(tw.Deletes) == 0 {
		return nil
	}
	t := tw.Table
	rows, partial := make([]inputRow, 0, len(tw.Upserts)+len(tw.Deletes)), false
	for _, key := range tw.Deletes {
		vals := make([]any, len(t.Columns))
		for i, k := range t.Key {
			vals[k] = key[i]
		}
		rows = append(rows, inputRow{vals: vals, origin: key, extra: []string{"1"}})
	}
	for _, u := range tw.Upserts {
		un := unchangedList(u.Row)
		partial = partial || un != ""
		rows = append(rows, inputRow{vals: u.Row, origin: u.Origin, unchanged: un, extra: []string{"0"}})
	}
	if err := x.load(ctx, c, rows); err != nil {
		return err
	}
	c.version++
	return e.conn.exec(ctx, x.replicaInsert(c, partial))
}

// load puts a chunk's rows into the input table and checks they parse.
func (x *cdcTx) load(ctx context.Context, c *cdcTable, rows []inputRow) error {
	keyTypes, _ := originKeys(c.t, c.types)
	if err := x.e.loadInput(ctx, c.in, c.names, c.types, keyTypes, rows); err != nil {
		return fmt.Errorf("stage chunk: %w", err)
	}
	return x.e.checkCasts(ctx, c.in, c.t.Columns, c.names, c.types)
}

// replicaInsert is the INSERT … SELECT of one chunk into the stage.
func (x *cdcTx) replicaInsert(c *cdcTable, partial bool) string {
	t := c.t
	_, keyExprs := originKeys(t, c.types)
	exprs := make([]string, len(t.Columns))
	for i, typ := range c.types {
		exprs[i] = fillExpr(i, castExpr(fmt.Sprintf("_weir_v_%d", i), typ), partial)
	}
	exprs = append(exprs, fmt.Sprintf("toUInt64(%d)", c.version), fmt.Sprintf("CAST(assumeNotNull(%s) AS UInt8)", quoteIdent(ColDeleted)))
	prev := ""
	if partial {
		cols := joinIdents(append(append([]string(nil), t.Columns...), ColVersion, ColDeleted))
		src := fmt.Sprintf("SELECT %s FROM %s", cols, ident(c.st.table))
		if !c.truncated { // after a TRUNCATE the replica's rows are gone
			src += fmt.Sprintf(" UNION ALL SELECT %s FROM %s", cols, ident(c.dest))
		}
		prev = prevSQL(t, c.in, keyExprs, src, quoteIdent(ColDeleted)+" = 0", quoteIdent(ColVersion)+" DESC")
	}
	return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", ident(c.st.table),
		joinIdents(append(append([]string(nil), t.Columns...), ColVersion, ColDeleted)),
		strings.Join(exprs, ", "), fromInput(c.in, keyExprs, prev))
}

// Commit lands every table's stage and saves its state with the route's
// protocol (applying record, atomic land, committed record). A replica
// stage is attached (or swapped in after a TRUNCATE); a log's attached.
// Tables commit one by one: a crash between two leaves the later ones at
// their old position, which the next run reads again (a replica re-applies
// idempotently; a log skips what it holds, see lastLogged).
func (x *cdcTx) Commit(ctx context.Context, states map[routes.TableRef]routes.State) error {
	if err := routes.Checkpoint("apply-before-state"); err != nil {
		return err
	}
	if err := routes.Checkpoint("apply-before-commit"); err != nil {
		return err
	}
	byDest := map[routes.TableRef]routes.State{}
	for d, s := range states {
		byDest[x.e.ref(d)] = s
	}
	for _, d := range sortedRefs(byDest) {
		c, ok := x.tables[d]
		if !ok {
			if err := x.e.saveOnly(ctx, d, byDest[d]); err != nil {
				return err
			}
			continue
		}
		c.st.opts.Mode = x.landMode(c)
		if err := c.st.Commit(ctx, byDest[d]); err != nil {
			return fmt.Errorf("commit %s: %w", d, err)
		}
		x.e.dropInput(ctx, c)
		if err := routes.Checkpoint("apply-after-table-commit"); err != nil {
			return err // tests: a crash between two tables' commits
		}
	}
	return nil
}

// landMode is how a table's stage lands: a log appends; a replica
// attaches its new versions (log_based: see landed) or, after a TRUNCATE,
// replaces the table.
func (x *cdcTx) landMode(c *cdcTable) routes.Mode {
	switch {
	case x.log:
		return routes.ModeAppend
	case c.truncated:
		return routes.ModeReplace
	}
	return routes.ModeLogBased
}

// saveOnly saves the state of a table the run did not stage (a reset's
// cleared position).
func (e *Endpoint) saveOnly(ctx context.Context, dest routes.TableRef, s routes.State) error {
	if err := e.ensureStateTable(ctx, dest.Schema); err != nil {
		return err
	}
	r := stateRecord{dest: dest.Name, source: s.SourceID, cursor: s.Cursor, watermark: s.Watermark, position: s.Position,
		runID: s.RunID, rows: s.Rows, status: statusCommitted, mode: string(routes.ModeLogBased)}
	return e.writeState(ctx, dest.Schema, r)
}

func sortedRefs(m map[routes.TableRef]routes.State) []routes.TableRef {
	out := make([]routes.TableRef, 0, len(m))
	for d := range m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Rollback drops the stages and input tables and frees the leases; after
// Commit only the input tables are left to drop.
func (x *cdcTx) Rollback() {
	ctx, cancel := context.WithTimeout(context.Background(), x.e.opts.Lease)
	defer cancel()
	for _, c := range x.tables {
		if c.st != nil {
			c.st.Abort(ctx)
		}
		x.e.dropInput(ctx, c)
	}
}

// dropInput drops c's input table when this run created it.
func (e *Endpoint) dropInput(ctx context.Context, c *cdcTable) {
	if c.in.Name != "" {
		e.dropTable(ctx, c.in)
	}
}

// replicaLanded decides an interrupted replica commit that attached new
// versions: every row of the run has a version above the replica's before
// it, so the commit landed when the replica holds the stage's lowest
// version (or the stage is empty). Merges keep each key's highest version,
// so they never remove that evidence.
func (e *Endpoint) replicaLanded(ctx context.Context, dest routes.TableRef, r stateRecord) (bool, error) {
	stageRef := routes.TableRef{Schema: dest.Schema, Name: r.stage}
	if ok, err := e.tableExists(ctx, stageRef); err != nil || !ok {
		return false, err
	}
	row, _, err := queryRow(ctx, e.conn, fmt.Sprintf("SELECT toString(count()), toString(min(%s)) FROM %s", quoteIdent(ColVersion), ident(stageRef)))
	if err != nil || row[0] == "0" {
		return err == nil, err
	}
	low, err := strconv.ParseUint(row[1], 10, 64)
	if err != nil {
		return false, err
	}
	high, err := e.maxVersion(ctx, dest)
	return high >= low, err
}
