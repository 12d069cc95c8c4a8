package bigquery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	bq "cloud.google.com/go/bigquery"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/api/iterator"

	"github.com/weirhq/weir/routes"
)

// stageExpiry is when BigQuery deletes a staging table by itself, in case
// no run ever comes back to drop it.
const stageExpiry = 7 * 24 * time.Hour

// stageName is _weir_stage_<table>_<run>.
func stageName(table, runID string) string { return stagePrefix + table + "_" + runID }

// Prepare locks the destination table, drops staging tables of dead runs,
// and creates this run's staging table with the mapped schema.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	dest, err := e.ref(opts.Table)
	if err != nil {
		return nil, err
	}
	lay, err := newLayout(info)
	if err != nil {
		return nil, err
	}
	if err := checkMode(info, lay, opts); err != nil {
		return nil, err
	}
	if err := e.ensureDataset(ctx, dest.Schema); err != nil {
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	if md, err := e.tableMeta(ctx, stateRef(dest.Schema)); err != nil { // another tool's _weir_state: refused before anything is locked or loaded
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	} else if md != nil {
		if err := checkStateSchema(stateRef(dest.Schema), md); err != nil {
			return nil, err
		}
	}
	lease, err := e.acquire(ctx, dest, opts.RunID)
	if err != nil {
		return nil, err
	}
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	st := &stage{e: e, info: info, lay: lay, opts: opts, dest: dest, lease: lease, mem: mem,
		table: routes.TableRef{Schema: dest.Schema, Name: stageName(dest.Name, opts.RunID)}}
	if err := st.checkDrift(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := st.create(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	return st, nil
}

// checkMode refuses what BigQuery cannot do before a row moves.
func checkMode(info *routes.TableInfo, lay layout, opts routes.WriteOptions) error {
	switch opts.Mode {
	case routes.ModeReplace, routes.ModeAppend:
		return nil
	case routes.ModeMerge:
		if len(opts.Key) == 0 {
			return &routes.ProbeError{Table: info.Ref.String(), Problem: "merge needs a key and the table has no primary key", Hint: "pass --primary-key col[,col]"}
		}
		for _, k := range opts.Key {
			i := lay.arrow.FieldIndices(k)
			if len(i) == 0 {
				return &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "merge key column does not exist"}
			}
			if fs := lay.schema[i[0]]; fs.Repeated || fs.Type == bq.RecordFieldType || fs.Type == bq.JSONFieldType {
				return &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "BigQuery cannot compare " + string(fs.Type) + " values in a MERGE key", Hint: "merge on scalar columns"}
			}
		}
		return nil
	}
	return fmt.Errorf("%w: bigquery destination: mode %s", routes.ErrUnsupported, opts.Mode)
}

// stage is one run's staging table.
type stage struct {
	e      *Endpoint
	info   *routes.TableInfo
	lay    layout
	bounds []bound // destination STRING(L)/BYTES(L) columns checkLengths reads the staged values against (drift.go)
	opts   routes.WriteOptions
	dest   routes.TableRef
	table  routes.TableRef // the staging table
	lease  *lease
	mem    memory.Allocator
	done   bool
}

func (st *stage) create(ctx context.Context) error {
	if err := st.dropStale(ctx); err != nil {
		return err
	}
	md := &bq.TableMetadata{
		Schema:         st.lay.schema,
		Description:    stageDescription(st.dest, st.opts.RunID),
		ExpirationTime: time.Now().Add(stageExpiry),
	}
	if err := st.e.table(st.table).Create(ctx, md); err != nil {
		return fmt.Errorf("create staging table %s: %w", st.table.Name, err)
	}
	return nil
}

// stageDescription marks a staging table weir created: dropStale drops a
// table only when its name and this description both make it a staging
// table of the destination.
func stageDescription(dest routes.TableRef, runID string) string {
	return fmt.Sprintf("weir staging table of %s, run %s", dest, runID)
}

// isStageOf reports whether a table named name with description desc is a
// staging table of dest, and of which run. The name alone is not enough: a
// user table _weir_stage_<table>_backup looks like one, and so does a
// staging table of <table>_x to <table>.
func isStageOf(name, desc string, dest routes.TableRef) (run string, ok bool) {
	run, ok = strings.CutPrefix(name, stagePrefix+dest.Name+"_")
	if !ok || run == "" || desc != stageDescription(dest, run) {
		return "", false
	}
	return run, true
}

// dropStale drops staging tables of this destination left by dead runs:
// we hold the lease, so their runs are gone. A candidate by name is read
// (its description) before it is dropped.
func (st *stage) dropStale(ctx context.Context) error {
	prefix := stagePrefix + st.dest.Name + "_"
	it := st.e.client.Dataset(st.dest.Schema).Tables(ctx)
	var stale []string
	for {
		t, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return fmt.Errorf("list staging tables of %s: %w", st.dest, err)
		}
		if !strings.HasPrefix(t.TableID, prefix) {
			continue
		}
		ref := routes.TableRef{Schema: st.dest.Schema, Name: t.TableID}
		md, err := st.e.tableMeta(ctx, ref)
		if err != nil {
			return fmt.Errorf("read staging table %s: %w", ref, err)
		}
		if md == nil {
			continue // dropped meanwhile
		}
		if run, ok := isStageOf(t.TableID, md.Description, st.dest); ok && run != st.opts.RunID {
			stale = append(stale, t.TableID)
		}
	}
	for _, name := range stale {
		if err := st.e.dropTable(ctx, routes.TableRef{Schema: st.dest.Schema, Name: name}); err != nil {
			return fmt.Errorf("drop stale staging table: %w", err)
		}
	}
	return nil
}

// Abort drops the staging table and frees the lock; the destination is
// untouched. It is idempotent.
func (st *stage) Abort(ctx context.Context) error {
	if st.done {
		return nil
	}
	st.done = true
	return errors.Join(st.e.dropTable(ctx, st.table), st.lease.release(ctx))
}
