package bigquery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	bq "cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"

	"github.com/weirhq/weir/routes"
)

// Commit makes the staged rows visible and saves state.
//
// Replace (and any first load, when the table does not exist yet) swaps
// the staging table in with one job — a copy job WRITE_TRUNCATE, or with
// swap=dml one transaction of DELETE and INSERT … SELECT — so readers see
// the old table or the new one. Its state row is loaded right after; the swap
// is announced in the lock first, so a crash in between is settled by the
// next run (LoadState, acquire). Append and merge run one multi-statement
// transaction: INSERT … SELECT or MERGE, plus the state row.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	if st.done {
		return errors.New("stage already finished")
	}
	if state.RunID == "" {
		state.RunID = st.opts.RunID
	}
	if err := st.lease.verify(ctx); err != nil {
		return err
	}
	if st.opts.Mode == routes.ModeMerge {
		if err := st.noRepeatedKey(ctx); err != nil {
			return err
		}
	}
	if err := st.e.ensureStateTable(ctx, st.dest.Schema); err != nil {
		return err
	}
	md, err := st.e.tableMeta(ctx, st.dest)
	if err != nil {
		return err
	}
	if md != nil && st.opts.Mode != routes.ModeReplace {
		if err := st.checkLengths(ctx); err != nil {
			return err
		}
	}
	if err := routes.Checkpoint("commit"); err != nil {
		return err
	}
	if md == nil || st.opts.Mode == routes.ModeReplace {
		err = st.swap(ctx, state)
	} else {
		err = st.transaction(ctx, state)
	}
	if err != nil {
		return err
	}
	st.done = true
	return errors.Join(st.e.dropTable(ctx, st.table), st.lease.release(ctx))
}

// swap replaces the destination with the staging table, then saves state.
// When the swap landed (or may have) but its state row is not saved, the
// run ends keeping its lock table, which names the swap: the next run
// settles it (see settle) once the lease expired.
func (st *stage) swap(ctx context.Context, state routes.State) error {
	id := jobID("swap", st.dest, st.opts.RunID)
	if err := st.lease.announce(ctx, pending{JobID: id, State: state}); err != nil {
		return err
	}
	if err := st.runSwap(ctx, id); err != nil {
		err = fmt.Errorf("swap %s into %s: %w", st.table.Name, st.dest, err)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		landed, lerr := st.e.jobLanded(lctx, id)
		if lerr == nil && !landed {
			return err // nothing changed: Abort as usual
		}
		if lerr != nil {
			return st.leave(fmt.Errorf("%w; whether job %s landed is unknown (%v): the next run decides", err, id, lerr))
		}
	}
	if err := st.e.loadState(ctx, st.dest.Schema, newStateRow(st.dest, state, id)); err != nil {
		return st.leave(fmt.Errorf("%s is swapped in but its state is not saved: %w; the next run saves it once the lease (%s) expired", st.dest, err, st.e.cfg.Lease))
	}
	return nil
}

// leave ends the run without releasing its lock table (nor dropping its
// staging table, which a still running swap job may read).
func (st *stage) leave(err error) error {
	st.done = true
	st.lease.stop()
	return err
}

func (st *stage) runSwap(ctx context.Context, id string) error {
	if st.e.cfg.Swap == SwapDML {
		return st.replaceRows(ctx, id)
	}
	c := st.e.table(st.dest).CopierFrom(st.e.table(st.table))
	c.JobID = id
	c.WriteDisposition = bq.WriteTruncate
	c.CreateDisposition = bq.CreateIfNeeded
	job, err := c.Run(ctx)
	return runJob(ctx, job, err)
}

// replaceRows swaps by rows: DELETE and INSERT … SELECT in one
// transaction, into the table as it is (created with the staged schema
// when missing).
func (st *stage) replaceRows(ctx context.Context, id string) error {
	md, err := st.e.tableMeta(ctx, st.dest)
	if err != nil {
		return err
	}
	if md == nil {
		if err := st.e.table(st.dest).Create(ctx, &bq.TableMetadata{Schema: st.lay.schema}); err != nil {
			return fmt.Errorf("create %s: %w", st.dest, err)
		}
	}
	dest := st.e.ident(st.dest)
	q := st.e.client.Query(transactionSQL("DELETE FROM "+dest+" WHERE TRUE", insertSQL(dest, st.e.ident(st.table), st.columns())))
	q.JobID = id
	job, err := q.Run(ctx)
	return runJob(ctx, job, err)
}

func (st *stage) columns() []string {
	cols := make([]string, len(st.info.Columns))
	for i, c := range st.info.Columns {
		cols[i] = c.Name
	}
	return cols
}

// transaction applies the staged delta and the state row in one script.
func (st *stage) transaction(ctx context.Context, state routes.State) error {
	cols := st.columns()
	dest, stage := st.e.ident(st.dest), st.e.ident(st.table)
	apply := insertSQL(dest, stage, cols)
	if st.opts.Mode == routes.ModeMerge {
		apply = mergeSQL(dest, stage, cols, st.opts.Key)
	}
	id := jobID(string(st.opts.Mode), st.dest, st.opts.RunID)
	q := st.e.client.Query(transactionSQL(apply, st.e.insertStateSQL(st.dest.Schema, newStateRow(st.dest, state, id))))
	q.JobID = id
	job, err := q.Run(ctx)
	if err := runJob(ctx, job, err); err != nil {
		return fmt.Errorf("%s into %s: %w", st.opts.Mode, st.dest, err)
	}
	return nil
}

// noRepeatedKey refuses a merge whose staged rows repeat a key
// (routes.RepeatedKey): MERGE would fail on a key the table has and
// insert both rows of a key it does not; a first load (a swap) would keep
// both.
func (st *stage) noRepeatedKey(ctx context.Context) error {
	sel := make([]string, len(st.opts.Key))
	keys := make([]string, len(st.opts.Key))
	for i, k := range st.opts.Key {
		keys[i] = quoteIdent(k)
		sel[i] = "CAST(" + keys[i] + " AS STRING)"
	}
	q := fmt.Sprintf("SELECT %s FROM %s GROUP BY %s HAVING COUNT(*) > 1 LIMIT 1",
		strings.Join(sel, ", "), st.e.ident(st.table), strings.Join(keys, ", "))
	it, err := st.e.client.Query(q).Read(ctx)
	if err != nil {
		return fmt.Errorf("repeated keys of %s: %w", st.table, err)
	}
	var row []bq.Value
	err = it.Next(&row)
	if errors.Is(err, iterator.Done) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("repeated keys of %s: %w", st.table, err)
	}
	vals := make([]string, len(row))
	for i, v := range row {
		vals[i] = fmt.Sprint(v)
	}
	return routes.RepeatedKey(st.info.Ref, st.dest, st.opts.Key, strings.Join(vals, ", "))
}
