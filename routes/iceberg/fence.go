package iceberg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// The workers of a backfill (docs/workers.md) commit into one table at
// once, each chunk with its bucket's progress under the bucket's own state
// key. The fence is a requirement of the Iceberg commit itself: the SQL
// catalog validates every requirement against the table's current
// metadata and then swaps the metadata location by a compare-and-set, so
// "the bucket's saved state is still prev" (assertState) holds at the
// moment of the commit or nothing is committed. A commit that lost the
// race for the table's current snapshot (another worker's chunk landed
// first) is built again on the fresh snapshot — its data files kept, the
// other's files inherited — and its requirement checked again: only its
// own bucket's state decides, and a commit whose reply was lost is never
// retried (the catalog may have taken it).

var (
	_ routes.SharedDestination = (*Endpoint)(nil)
	_ routes.FencedStage       = (*stage)(nil)
)

// fencedAttempts bounds a fenced commit's rebuilds after conflicts on the
// table's snapshot (other workers' commits), each after a short random
// pause.
const fencedAttempts = 200

// PrepareShared is Prepare for one of the workers of a backfill
// (routes.SharedDestination): a shared lease on the table (SQL catalogs:
// a row of LockTable per worker, acquireShared), and the table must exist
// with the source's columns and the URL's compression: the commit neither
// creates nor alters it. REST catalogs are not supported: their commits
// cannot carry weir's requirement.
func (e *Endpoint) PrepareShared(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.FencedStage, error) {
	if opts.Mode != routes.ModeAppend && opts.Mode != routes.ModeMerge {
		return nil, fmt.Errorf("%w: iceberg destination: a shared stage appends or merges, not %s", routes.ErrUnsupported, opts.Mode)
	}
	rl, ok := e.lock.(*rowLock)
	if !ok {
		return nil, fmt.Errorf("%w: iceberg destination %s: several workers commit into a SQL catalog only (a REST catalog's commit cannot carry the bucket's compare-and-set)", routes.ErrUnsupported, opts.Table)
	}
	if err := checkMode(info, opts); err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	st := &stage{e: e, info: info, opts: opts, dest: opts.Table}
	tbl, err := e.loadTable(ctx, st.dest)
	if err != nil {
		return nil, err // a backfill's plan creates the table
	}
	st.tbl = tbl
	if st.lease, err = rl.acquireShared(ctx, st.dest, opts.RunID); err != nil {
		return nil, err
	}
	if err := st.bindSchema(); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	if len(st.newColumns) > 0 || st.compressionChanges() {
		st.Abort(context.WithoutCancel(ctx))
		return nil, &routes.ProbeError{Table: st.dest.String(), Problem: "the source's columns or the URL's compression differ from the table's since the backfill was planned",
			Hint: "a worker never alters the table: let the backfill finish as planned, then run the task once to evolve it"}
	}
	return st, nil
}

// CommitIf is Commit fenced on the saved state of state.SourceID
// (routes.FencedStage): it commits only if that state is prev's (Watermark
// and Position), or there is none when prev is nil, checked by the
// catalog in the commit (assertState). Refused, the stage is aborted and
// the error is routes.ErrFenced.
func (st *stage) CommitIf(ctx context.Context, state routes.State, prev *routes.State) error {
	if _, ok := st.e.lock.(*rowLock); !ok {
		return fmt.Errorf("%w: iceberg destination %s: a fenced commit needs a SQL catalog", routes.ErrUnsupported, st.dest)
	}
	st.fence = &assertState{dest: st.dest, key: state.SourceID, prev: prev}
	err := st.Commit(ctx, state)
	if errors.Is(err, routes.ErrFenced) {
		st.Abort(context.WithoutCancel(ctx))
	}
	return err
}

// assertState is an Iceberg commit requirement: the table's saved state
// of key (as LoadState reads it) is prev's, or absent for a nil prev.
type assertState struct {
	dest routes.TableRef
	key  string
	prev *routes.State
}

func (a *assertState) GetType() string { return "weir-assert-state" }

func (a *assertState) Validate(meta table.Metadata) error {
	if meta == nil {
		return fmt.Errorf("state %s of %s: the table is gone: %w", a.key, a.dest, routes.ErrFenced)
	}
	s, found, err := stateIn(a.dest, meta, a.key)
	if err != nil {
		return err
	}
	if a.prev == nil && !found || a.prev != nil && found && s.Watermark == a.prev.Watermark && s.Position == a.prev.Position {
		return nil
	}
	return fmt.Errorf("state %s of %s: %w", a.key, a.dest, routes.ErrFenced)
}

// fencedCatalog adds the fence to every commit a table makes through it,
// the replays iceberg-go makes after a conflict included.
type fencedCatalog struct {
	table.CatalogIO
	req table.Requirement
}

func (c fencedCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	return c.CatalogIO.CommitTable(ctx, id, slices.Concat(reqs, []table.Requirement{c.req}), updates)
}

// fenced is tbl committing through the fence.
func (st *stage) fenced(tbl *table.Table) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, fencedCatalog{CatalogIO: st.e.cat, req: st.fence})
}

// conflict reports a commit that committed nothing because the table moved
// on under it: the SQL catalog's lost compare-and-set (ErrCommitFailed),
// or iceberg-go's snapshot requirement failing, which it reports as a
// plain error ("requirement failed: ...") — the only way to tell it.
func conflict(err error) bool {
	if errors.Is(err, routes.ErrFenced) {
		return false
	}
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed")
}

// commitFenced commits on the table loaded fresh (other engines may have
// committed); a fenced commit again after each conflict.
func (st *stage) commitFenced(ctx context.Context, state routes.State) error {
	for attempt := 1; ; attempt++ {
		tbl, err := st.e.loadTable(ctx, st.dest)
		if err != nil {
			return err
		}
		err = st.commit(ctx, tbl, state)
		if err == nil || st.fence == nil || !conflict(err) || attempt == fencedAttempts {
			return err
		}
		pause := time.Duration(5+rand.IntN(20*min(attempt, 10))) * time.Millisecond
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pause):
		}
	}
}
