package pgwal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// snapshotPinner is the postgres route's way to read from an exported
// snapshot (postgres.Endpoint.UseSnapshot).
type snapshotPinner interface{ UseSnapshot(id string) }

// bootstrap creates the publication and the slot, then copies every table
// from the slot's exported snapshot with routes.Copy (replace), committing
// the slot's consistent point as each table's position with its rows.
// Rows committed before the consistent point are in the snapshot; later
// ones come from the slot: no gap, no duplicates. A stale slot (left by a
// bootstrap that did not finish) is dropped first, since its snapshot is
// gone. A table whose bootstrap did not commit has no position, so the next
// run bootstraps again. A failed bootstrap drops the slot it created (it
// would keep WAL for a run that never comes) and the publication, if it
// created that too.
func (r *run) bootstrap(ctx context.Context) (res Result, err error) {
	res = Result{Bootstrap: true}
	if err := dropSlot(ctx, r.src, r.name); err != nil {
		return res, err
	}
	if w, err := keepSizeWarning(ctx, r.src); err != nil {
		return res, err
	} else if w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	createdPub, err := ensurePublication(ctx, r.src, r.name, r.cfg.Tables)
	if err != nil {
		return res, err
	}
	var repl *pgconn.PgConn
	createdSlot := false
	defer func() {
		// The exported snapshot lives until repl runs another command: it
		// stays idle until every copy has imported it.
		if repl != nil {
			repl.Close(context.WithoutCancel(ctx))
		}
		if err != nil {
			if uerr := r.undoBootstrap(ctx, createdSlot, createdPub); uerr != nil {
				err = fmt.Errorf("%w (dropping what the bootstrap created: %v)", err, uerr)
			}
		}
	}()
	replCfg, err := replicationConfig(r.cfg.SourceURL)
	if err != nil {
		return res, fmt.Errorf("replication connection: %w", err)
	}
	if repl, err = pgconn.ConnectConfig(ctx, replCfg); err != nil {
		return res, fmt.Errorf("replication connection: %w", err)
	}
	slot, err := createSlot(ctx, repl, r.name)
	if err != nil {
		return res, err
	}
	createdSlot = true
	pin, ok := routes.As[snapshotPinner](r.source)
	if !ok {
		return res, fmt.Errorf("pgwal: source route cannot read from an exported snapshot")
	}
	pin.UseSnapshot(slot.SnapshotName)
	if err := routes.Checkpoint("bootstrap-copy"); err != nil {
		return res, err
	}
	res.To = slot.ConsistentPoint
	var la cdc.LogAppender
	if r.cfg.Changelog {
		if la, err = cdc.AsLogAppender(r.dest, r.cfg.DestURL); err != nil {
			return res, err
		}
	}
	at := time.Now().UTC()
	for _, t := range r.tables {
		var n int64
		if la != nil {
			lsn, perr := pglogrepl.ParseLSN(slot.ConsistentPoint)
			if perr != nil {
				return res, fmt.Errorf("consistent point %q: %w", slot.ConsistentPoint, perr)
			}
			n, err = cdc.BootstrapLog(ctx, r.source, r.dest, la, &t.Table, slot.ConsistentPoint, logLSN(lsn), at, r.runID)
		} else {
			n, err = cdc.Bootstrap(ctx, r.source, r.dest, r.applier, &t.Table, slot.ConsistentPoint, r.runID)
		}
		if err != nil {
			return res, err
		}
		res.Rows += n
	}
	return res, nil
}

// undoBootstrap drops what a failed bootstrap created, also after a
// cancel.
func (r *run) undoBootstrap(ctx context.Context, slot, pub bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var errs []error
	if slot {
		errs = append(errs, dropSlot(ctx, r.src, r.name))
	}
	if pub {
		errs = append(errs, dropPublication(ctx, r.src, r.name))
	}
	return errors.Join(errs...)
}
