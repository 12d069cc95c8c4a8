package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirhq/weir/routes"
)

// StateTable holds, per (destination table, source), the rows of every
// commit: a ReplacingMergeTree read by the latest version. ClickHouse
// cannot write it in the data's transaction (there is none), so a commit
// writes a row with status applying before it lands the data and one with
// status committed after; a reader that finds applying decides from the
// data itself whether the commit landed (see landed).
const StateTable = routes.StateTableName

// Record statuses.
const (
	statusApplying  = "applying"
	statusCommitted = "committed"
	statusAborted   = "aborted"
)

// stateColumns are the columns of StateTable, in order, with their types.
var stateColumns = [][2]string{
	{"dest_table", "String"}, {"source", "String"}, {"cursor_column", "String"},
	{"watermark", "String"}, {"position", "String"}, {"run_id", "String"},
	{"rows", "Int64"}, {"status", "String"}, {"mode", "String"}, {"stage", "String"},
	{"dest_existed", "UInt8"}, {"dest_uuid", "String"}, {"rows_before", "Int64"},
	{"window_rows", "Int64"}, {"prev_run", "String"}, {"prev_cursor", "String"},
	{"prev_watermark", "String"}, {"prev_position", "String"}, {"version", "UInt64"},
}

// stateRecord is one row of StateTable.
type stateRecord struct {
	dest, source, cursor, watermark, position, runID string
	rows                                             int64
	status, mode, stage                              string
	destExisted                                      bool
	destUUID                                         string
	rowsBefore, windowRows                           int64
	prevRun, prevCursor, prevWatermark, prevPosition string
}

func (r stateRecord) values() []string {
	return []string{
		quoteLiteral(r.dest), quoteLiteral(r.source), quoteLiteral(r.cursor),
		quoteLiteral(r.watermark), quoteLiteral(r.position), quoteLiteral(r.runID),
		fmt.Sprintf("toInt64(%d)", r.rows), quoteLiteral(r.status), quoteLiteral(r.mode), quoteLiteral(r.stage),
		fmt.Sprintf("toUInt8(%d)", boolByte(r.destExisted)), quoteLiteral(r.destUUID),
		fmt.Sprintf("toInt64(%d)", r.rowsBefore), fmt.Sprintf("toInt64(%d)", r.windowRows),
		quoteLiteral(r.prevRun), quoteLiteral(r.prevCursor), quoteLiteral(r.prevWatermark), quoteLiteral(r.prevPosition),
		fmt.Sprintf("toUInt64(%d)", time.Now().UnixNano()),
	}
}

func (r stateRecord) state() routes.State {
	return routes.State{SourceID: r.source, Cursor: r.cursor, Watermark: r.watermark, Position: r.position, RunID: r.runID, Rows: r.rows}
}

// prevState is what the last commit before r saved, if any.
func (r stateRecord) prevState() (routes.State, bool) {
	if r.prevRun == "" {
		return routes.State{}, false
	}
	return routes.State{SourceID: r.source, Cursor: r.prevCursor, Watermark: r.prevWatermark, Position: r.prevPosition, RunID: r.prevRun}, true
}

func stateTable(db string) routes.TableRef { return routes.TableRef{Schema: db, Name: StateTable} }

// checkStateTable refuses a _weir_state that is not weir's (another
// tool's table of that name) before a row moves: weir would read
// watermarks from it and insert its commits into it, and used to fail
// raw on the columns it lacks (exit 1). A missing table is fine.
func (e *Endpoint) checkStateTable(ctx context.Context, db string) error {
	t := stateTable(db)
	rows, err := queryStrings(ctx, e.conn, fmt.Sprintf("SELECT name FROM system.columns WHERE database = %s AND table = %s", quoteLiteral(db), quoteLiteral(t.Name)))
	if err != nil {
		return fmt.Errorf("check %s: %w", t, err)
	}
	have := make([]string, len(rows))
	for i, r := range rows {
		have[i] = r[0]
	}
	want := make([]string, len(stateColumns))
	for i, c := range stateColumns {
		want[i] = c[0]
	}
	return routes.CheckStateColumns(t, have, want)
}

func (e *Endpoint) ensureStateTable(ctx context.Context, db string) error {
	if err := e.checkStateTable(ctx, db); err != nil {
		return err
	}
	defs := make([]string, len(stateColumns))
	for i, c := range stateColumns {
		defs[i] = c[0] + " " + c[1]
	}
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s (%s) ENGINE = ReplacingMergeTree(version) ORDER BY (dest_table, source)",
		ident(stateTable(db)), e.opts.onCluster(), strings.Join(defs, ", "))
	return e.conn.exec(ctx, ddl)
}

func (e *Endpoint) writeState(ctx context.Context, db string, r stateRecord) error {
	names := make([]string, len(stateColumns))
	for i, c := range stateColumns {
		names[i] = c[0]
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s", ident(stateTable(db)), strings.Join(names, ", "), strings.Join(r.values(), ", "))
	if err := e.conn.exec(ctx, q); err != nil {
		return fmt.Errorf("save state of %s: %w", r.dest, err)
	}
	return nil
}

// readState returns the latest record of (dest, source).
func (e *Endpoint) readState(ctx context.Context, dest routes.TableRef, source string) (stateRecord, bool, error) {
	exprs := []string{"toString(count())"}
	for _, c := range stateColumns[2 : len(stateColumns)-1] {
		exprs = append(exprs, fmt.Sprintf("toString(argMax(%s, version))", c[0]))
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE dest_table = %s AND source = %s", strings.Join(exprs, ", "),
		ident(stateTable(dest.Schema)), quoteLiteral(dest.Name), quoteLiteral(source))
	row, _, err := queryRow(ctx, e.conn, q)
	if errorCode(err) == codeUnknownTable || errorCode(err) == codeUnknownDatabase {
		return stateRecord{}, false, nil
	}
	if err != nil {
		if cerr := e.checkStateTable(ctx, dest.Schema); cerr != nil { // another tool's _weir_state: say so, not its missing column
			return stateRecord{}, false, cerr
		}
		return stateRecord{}, false, fmt.Errorf("load state of %s: %w", dest, err)
	}
	if row[0] == "0" {
		return stateRecord{}, false, nil
	}
	return parseRecord(dest.Name, source, row[1:]), true, nil
}

func parseRecord(dest, source string, v []string) stateRecord {
	n := func(s string) int64 { x, _ := strconv.ParseInt(s, 10, 64); return x }
	return stateRecord{dest: dest, source: source, cursor: v[0], watermark: v[1], position: v[2], runID: v[3],
		rows: n(v[4]), status: v[5], mode: v[6], stage: v[7], destExisted: v[8] == "1", destUUID: v[9],
		rowsBefore: n(v[10]), windowRows: n(v[11]), prevRun: v[12], prevCursor: v[13], prevWatermark: v[14], prevPosition: v[15]}
}

// LoadState returns what the last commit into table from sourceID saved.
// A commit interrupted between its data and its state is decided here
// from the data (see landed), so a crash never loses or repeats rows.
func (e *Endpoint) LoadState(ctx context.Context, table routes.TableRef, sourceID string) (routes.State, bool, error) {
	dest := e.ref(table)
	r, ok, err := e.readState(ctx, dest, sourceID)
	if err != nil || !ok {
		return routes.State{}, false, err
	}
	switch r.status {
	case statusCommitted:
		return r.state(), true, nil
	case statusApplying:
		if live, err := e.runLive(ctx, dest, r.runID); err != nil || live {
			s, ok := r.prevState() // still committing: its rows are not there yet
			return s, ok, err
		}
		landed, err := e.landed(ctx, dest, r)
		if err != nil {
			return routes.State{}, false, err
		}
		if landed {
			return r.state(), true, nil
		}
	}
	s, ok := r.prevState()
	return s, ok, nil
}

// runLive reports whether runID still holds dest's lease.
func (e *Endpoint) runLive(ctx context.Context, dest routes.TableRef, runID string) (bool, error) {
	h, err := e.readHolder(ctx, routes.TableRef{Schema: dest.Schema, Name: weirName(lockPrefix, dest.Name, "")})
	if errorCode(err) == codeUnknownTable {
		return false, nil
	}
	return err == nil && h.runID == runID && h.age <= e.opts.Lease, err
}

// landed decides whether an interrupted commit made its rows visible:
//   - append into an existing table: the table grew by the staged rows
//     (it grew by 0: it did not; anything else is a partial attach of a
//     partitioned table, reported as an error);
//   - merge into an existing table: treated as not landed, since applying
//     the same window again is idempotent under ReplacingMergeTree;
//   - a CDC replica's new versions (log_based): the replica holds the
//     stage's lowest version (replicaLanded);
//   - swaps on Atomic databases: the table's UUID changed;
//   - renames (replace on Ordinary databases, first loads): the staging
//     table is gone (its name was renamed to the destination).
func (e *Endpoint) landed(ctx context.Context, dest routes.TableRef, r stateRecord) (bool, error) {
	switch {
	case r.destExisted && r.mode == string(routes.ModeAppend):
		n, err := e.count(ctx, dest)
		if err != nil {
			return false, err
		}
		switch grew := n - r.rowsBefore; grew {
		case r.windowRows:
			return true, nil
		case 0:
			return false, nil
		default:
			return false, fmt.Errorf("state of %s: run %s attached %d of %d rows before it stopped (partitioned table); restore the table or re-run in replace mode", dest, r.runID, grew, r.windowRows)
		}
	case r.destExisted && r.mode == string(routes.ModeMerge):
		return false, nil
	case r.destExisted && r.mode == string(routes.ModeLogBased):
		return e.replicaLanded(ctx, dest, r)
	case r.destUUID != "":
		u, err := e.tableUUID(ctx, dest)
		return u != r.destUUID, err
	}
	exists, err := e.tableExists(ctx, routes.TableRef{Schema: dest.Schema, Name: r.stage})
	return !exists, err
}

// settle resolves every interrupted commit into dest (its run is dead: we
// hold the lease) by writing what landed decides, then drops its stage.
func (e *Endpoint) settle(ctx context.Context, dest routes.TableRef) error {
	q := fmt.Sprintf("SELECT source FROM %s WHERE dest_table = %s GROUP BY source HAVING argMax(status, version) = %s",
		ident(stateTable(dest.Schema)), quoteLiteral(dest.Name), quoteLiteral(statusApplying))
	rows, err := queryStrings(ctx, e.conn, q)
	if errorCode(err) == codeUnknownTable {
		return nil
	}
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := e.settleOne(ctx, dest, row[0]); err != nil {
			return err
		}
	}
	return nil
}

func (e *Endpoint) settleOne(ctx context.Context, dest routes.TableRef, source string) error {
	r, ok, err := e.readState(ctx, dest, source)
	if err != nil || !ok {
		return err
	}
	landed, err := e.landed(ctx, dest, r)
	if err != nil {
		return err
	}
	r.status = pick(landed, statusCommitted, statusAborted)
	if err := e.writeState(ctx, dest.Schema, r); err != nil {
		return err
	}
	if strings.HasPrefix(r.stage, stagePrefix) {
		return e.dropTable(ctx, routes.TableRef{Schema: dest.Schema, Name: r.stage})
	}
	return nil
}

// tableUUID is system.tables.uuid (Atomic databases), "" elsewhere.
func (e *Endpoint) tableUUID(ctx context.Context, t routes.TableRef) (string, error) {
	q := fmt.Sprintf("SELECT toString(uuid) FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	row, ok, err := queryRow(ctx, e.conn, q)
	if err != nil || !ok {
		return "", err
	}
	return row[0], nil
}
