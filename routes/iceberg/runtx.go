package iceberg

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// runTx is one CDC run's open transaction over its destination tables, a
// replica's (BeginApply) or a changelog's (BeginLog). Iceberg commits one
// table at a time (the SQL catalog has no multi-table commit), so each
// table has an Iceberg transaction of its own: every Flush writes the
// chunk's files to storage (memory stays flat) and stages the chunk as a
// snapshot of that transaction — each with its own sequence number, which
// equality deletes need (they only retire rows of lower sequence numbers,
// so a key written in chunk 1 and deleted in chunk 2 must be in two
// snapshots). Commit sets the state and commits each table's transaction:
// all of a table's snapshots become visible at once, or none. Nothing is
// visible before; files written by a run that dies are orphans
// (Endpoint.Orphans), removed by Rollback when it gets to run.
type runTx struct {
	e      *Endpoint
	tables map[routes.TableRef]*tableTx
	log    bool // a changelog's: Flush appends ops
}

// tableTx is one destination table's part of a run: the route's write
// stage (lease, table, schema, files written) and the Iceberg
// transaction that stacks the run's snapshots.
type tableTx struct {
	st      *stage
	t       *cdc.Table // nil for a table whose state only is saved
	tx      *table.Transaction
	pending *chunk       // written and not staged yet: Commit stages it with the state
	last    cdc.LogPoint // changelog: the last op committed (or appended by this run)
}

// chunk is one Flush's files, staged as a snapshot at the next Flush or
// at Commit (the last one carries the state in its summary).
type chunk struct {
	truncate      bool // retire every live file first
	data, deletes []iceberg.DataFile
}

// begin leases and loads (creating them from the source's probe when
// missing) the tables of a run, and the tables of dests whose state only
// is saved (ApplyWindow), then opens their Iceberg transactions.
func (e *Endpoint) begin(ctx context.Context, tables []*cdc.Table, dests []routes.TableRef, log bool) (*runTx, error) {
	x := &runTx{e: e, tables: map[routes.TableRef]*tableTx{}, log: log}
	runID := routes.NewRunID()
	for _, t := range tables {
		tt, err := x.openTable(ctx, t, runID)
		if err != nil {
			x.Rollback()
			return nil, err
		}
		x.tables[t.Dest] = tt
	}
	for _, d := range dests {
		if x.tables[d] != nil {
			continue
		}
		tt, err := x.openStateOnly(ctx, d, runID)
		if err != nil {
			x.Rollback()
			return nil, err
		}
		if tt != nil {
			x.tables[d] = tt
		}
	}
	return x, nil
}

// openTable leases the table and binds its schema the way a merge
// (replica) or append (changelog) write does, then opens the transaction.
func (x *runTx) openTable(ctx context.Context, t *cdc.Table, runID string) (*tableTx, error) {
	if t.Info == nil {
		return nil, fmt.Errorf("%s: no probe of the source table", t.Dest)
	}
	info, opts := replicaInfo(t), routes.WriteOptions{Table: t.Dest, Mode: routes.ModeMerge, Key: t.KeyNames(), RunID: runID}
	if x.log {
		info, opts.Mode, opts.Key = logInfo(t), routes.ModeAppend, nil
	}
	opts.Allocator = memory.DefaultAllocator
	st := &stage{e: x.e, info: info, opts: opts, dest: t.Dest}
	tt := &tableTx{st: st, t: t}
	if err := x.prepareTable(ctx, tt); err != nil {
		tt.abort(ctx)
		return nil, err
	}
	return tt, nil
}

func (x *runTx) prepareTable(ctx context.Context, tt *tableTx) error {
	if err := tt.st.lockAndLoad(ctx); err != nil {
		return err
	}
	tbl, err := x.e.loadTable(ctx, tt.st.dest)
	if err != nil {
		return err
	}
	// The committed schema, not the staged one: schema evolution would
	// otherwise add the _weir_ columns to a replica.
	if _, ok := tbl.Schema().FindFieldByName(cdc.ColOp); x.log && !ok {
		return routes.BadInput("changelog: %s exists and is not a changelog (no %s column): name another destination table", tt.st.dest, cdc.ColOp)
	}
	if err := checkKey(tt); err != nil {
		return err
	}
	tt.tx = tbl.NewTransaction()
	if x.log {
		tt.last = lastLogged(tbl)
		last := tt.last
		tt.t.Logged = &last
	}
	return addColumns(tt.tx, tt.st.newColumns)
}

// checkKey refuses a replica whose key cannot be an equality delete key.
func checkKey(tt *tableTx) error {
	for _, id := range tt.st.keyIDs {
		f, _ := tt.st.tbl.Schema().FindFieldByID(id)
		switch f.Type.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
			return &routes.ProbeError{Table: tt.st.dest.String(), Column: f.Name,
				Problem: "a floating-point key column cannot key Iceberg equality deletes"}
		}
	}
	return nil
}

// openStateOnly leases an existing table whose state alone is saved (a
// reset's cleared position); a missing table has no state to clear.
func (x *runTx) openStateOnly(ctx context.Context, dest routes.TableRef, runID string) (*tableTx, error) {
	tbl, err := x.e.loadTable(ctx, dest)
	if errors.Is(err, routes.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := &stage{e: x.e, dest: dest, opts: routes.WriteOptions{Table: dest, RunID: runID}}
	if st.lease, err = x.e.lock.acquire(ctx, dest, runID); err != nil {
		return nil, err
	}
	st.tbl = tbl
	return &tableTx{st: st, tx: tbl.NewTransaction()}, nil
}

// Flush hands a chunk to each table: the snapshot of the chunk before is
// staged first (later fills read what it wrote), then this chunk's files
// are written.
func (x *runTx) Flush(ctx context.Context, w *cdc.Window) error {
	for _, tw := range w.Sorted() {
		tt := x.tables[tw.Table.Dest]
		if tt == nil || tt.t == nil {
			return fmt.Errorf("apply to %s: not a table of this run", tw.Table.Dest)
		}
		if err := tt.stagePending(ctx, runProps(tt.st.opts.RunID)); err != nil {
			return fmt.Errorf("apply to %s: %w", tw.Table.Dest, err)
		}
		var err error
		if x.log {
			err = tt.appendOps(ctx, tw)
		} else {
			err = tt.applyChunk(ctx, tw)
		}
		if err != nil {
			return fmt.Errorf("apply to %s: %w", tw.Table.Dest, err)
		}
	}
	return nil
}

// Commit stages the last chunks with the states in their summaries, sets
// the state properties and commits table by table, in name order. A
// crash between two tables' commits leaves the later ones at their old
// position: the capture restarts from the lowest, a replica re-applies
// the same end state per key, a changelog skips the ops it holds.
func (x *runTx) Commit(ctx context.Context, states map[routes.TableRef]routes.State) error {
	return x.commit(ctx, states, true)
}

// commit is Commit; hooks passes the apply-* checkpoints (a run's commit,
// not a bootstrap's baseline).
func (x *runTx) commit(ctx context.Context, states map[routes.TableRef]routes.State, hooks bool) error {
	fail := func(stage string) error { return routes.Checkpoint("apply-" + stage) }
	if !hooks {
		fail = func(string) error { return nil }
	}
	if err := fail("before-state"); err != nil {
		return err
	}
	dests := make([]routes.TableRef, 0, len(x.tables))
	for d := range x.tables {
		dests = append(dests, d)
	}
	sort.Slice(dests, func(i, j int) bool { return dests[i].String() < dests[j].String() })
	for _, d := range dests {
		if err := x.tables[d].stageState(ctx, states[d], x.log); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	if err := fail("before-commit"); err != nil {
		return err
	}
	for i, d := range dests {
		if i > 0 {
			// Tests: a crash with some tables committed, not the rest.
			if err := fail("between-tables"); err != nil {
				return err
			}
		}
		if err := x.tables[d].commit(ctx); err != nil {
			return fmt.Errorf("commit %s: %w", d, err)
		}
	}
	return nil
}

// Rollback abandons every table's transaction: their files are removed,
// the leases released. After Commit it only releases what is left.
func (x *runTx) Rollback() {
	ctx := context.Background()
	for _, tt := range x.tables {
		tt.abort(ctx)
	}
}

func runProps(runID string) iceberg.Properties { return iceberg.Properties{RunProperty: runID} }

// stageState stages the pending chunk with the state in its summary and
// sets the state (and a changelog's last op) as table properties.
func (tt *tableTx) stageState(ctx context.Context, s routes.State, log bool) error {
	props := runProps(tt.st.opts.RunID)
	var tableProps iceberg.Properties
	if s.SourceID != "" {
		summary, tp := stateProps(s)
		for k, v := range summary {
			if k != RunProperty {
				props[k] = v
			}
		}
		tableProps = tp
	}
	if err := tt.stagePending(ctx, props); err != nil {
		return err
	}
	if log {
		if tableProps == nil {
			tableProps = iceberg.Properties{}
		}
		tableProps[LastLoggedProperty] = logPointText(tt.last)
	}
	if len(tableProps) == 0 {
		return nil
	}
	return tt.tx.SetProperties(tableProps)
}

// commit commits the table's transaction under its lease.
func (tt *tableTx) commit(ctx context.Context) error {
	if err := tt.st.lease.check(ctx); err != nil {
		return err
	}
	if _, err := tt.tx.Commit(ctx); err != nil {
		return err
	}
	tt.st.done = true
	return tt.st.lease.release(ctx)
}

func (tt *tableTx) abort(ctx context.Context) {
	if tt.st.done {
		if tt.st.lease != nil {
			tt.st.lease.release(ctx)
		}
		return
	}
	tt.st.Abort(ctx)
}

// stagePending stages the chunk written last as a snapshot of the run's
// transaction: a TRUNCATE first retires every live data and delete file
// (the chunk's rows come after it); then one row delta adds the data
// files and the equality deletes of the chunk's keys (they retire the
// keys' rows of earlier snapshots, not the chunk's own: same sequence
// number). A changelog's chunk is an append.
func (tt *tableTx) stagePending(ctx context.Context, props iceberg.Properties) error {
	c := tt.pending
	if c == nil {
		return nil
	}
	tt.pending = nil
	if c.truncate {
		if err := tt.truncate(ctx, props); err != nil {
			return fmt.Errorf("truncate: %w", err)
		}
	}
	switch {
	case len(c.data)+len(c.deletes) == 0:
		return nil
	case len(c.deletes) == 0:
		return tt.tx.AddDataFiles(ctx, c.data, props, table.WithoutDuplicateCheck())
	}
	return tt.tx.NewRowDelta(props).AddRows(c.data...).AddDeletes(c.deletes...).Commit(ctx)
}

// truncate stages a snapshot that removes every data and delete file live
// in the transaction's current state (earlier chunks' files included).
func (tt *tableTx) truncate(ctx context.Context, props iceberg.Properties) error {
	staged, err := tt.tx.StagedTable()
	if err != nil {
		return err
	}
	data, deletes, err := liveFiles(ctx, staged.Table)
	if err != nil || len(data)+len(deletes) == 0 {
		return err
	}
	return tt.tx.ReplaceFiles(ctx, data, nil, deletes, props)
}
