package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// Commit makes the written files visible and saves state in one Iceberg
// commit: replace is an overwrite snapshot that retires every current data
// and delete file, append an append snapshot, merge a row delta (the new
// rows plus equality deletes of their keys). The same transaction sets the
// state table property; the snapshot summary carries it too.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	if st.done {
		return errors.New("stage already finished")
	}
	if err := st.lease.check(ctx); err != nil {
		return err
	}
	if err := routes.Checkpoint("commit"); err != nil {
		return err
	}
	if err := st.commitFenced(ctx, state); err != nil {
		return fmt.Errorf("commit %s: %w", st.dest, err)
	}
	st.done = true
	return st.lease.release(ctx)
}

func (st *stage) commit(ctx context.Context, tbl *table.Table, state routes.State) error {
	summary, props := stateProps(state)
	if st.fence != nil {
		tbl = st.fenced(tbl)
	}
	tx := tbl.NewTransaction()
	if err := st.evolve(tx, tbl); err != nil {
		return err
	}
	var err error
	switch st.opts.Mode {
	case routes.ModeReplace:
		err = st.replace(ctx, tx, tbl, summary)
	case routes.ModeMerge:
		if len(st.files)+len(st.deletes) > 0 {
			err = tx.NewRowDelta(summary).AddRows(st.files...).AddDeletes(st.deletes...).Commit(ctx)
		}
	default:
		err = tx.AddDataFiles(ctx, st.files, summary)
	}
	if err != nil {
		return err
	}
	maps.Copy(props, st.e.cfg.compression)
	if err := tx.SetProperties(props); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

// evolve adds the columns the source gained, numbered as the data files
// were written; a schema changed by someone else meanwhile fails the run
// (its files carry field ids of the old numbering).
func (st *stage) evolve(tx *table.Transaction, tbl *table.Table) error {
	if len(st.newColumns) == 0 {
		return nil
	}
	if id := tbl.Schema().ID; id != st.baseSchemaID {
		return fmt.Errorf("the table's schema changed during the run (schema %d, the run started on %d); run again", id, st.baseSchemaID)
	}
	return addColumns(tx, st.newColumns)
}

// replace retires every file of the current snapshot and adds the run's.
func (st *stage) replace(ctx context.Context, tx *table.Transaction, tbl *table.Table, summary iceberg.Properties) error {
	if len(st.files) == 0 && !st.opts.Truncate {
		return errors.New("replace with no data files would empty the table; refusing")
	}
	data, deletes, err := liveFiles(ctx, tbl)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return tx.AddDataFiles(ctx, st.files, summary)
	}
	return tx.ReplaceFiles(ctx, data, st.files, deletes, summary)
}

// liveFiles lists the data and delete files of the current snapshot.
func liveFiles(ctx context.Context, tbl *table.Table) (data, deletes []iceberg.DataFile, err error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, nil, fmt.Errorf("manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range mans {
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
			}
			if df := e.DataFile(); df.ContentType() == iceberg.EntryContentData {
				data = append(data, df)
			} else {
				deletes = append(deletes, df)
			}
		}
	}
	return data, deletes, nil
}

// Abort removes the run's files (orphans: no snapshot references them), a
// table this run created and left without snapshots, and the lease. It is
// idempotent, and a no-op after Commit.
func (st *stage) Abort(ctx context.Context) error {
	if st.done {
		return nil
	}
	st.done = true
	var errs []error
	// Without the lease (lost the race for it) the run wrote nothing, and a
	// table it created is the winner's now.
	if st.tbl != nil && st.lease != nil && !st.committed(ctx) {
		errs = append(errs, st.removeFiles(ctx), st.dropCreated(ctx))
	}
	if st.lease != nil {
		errs = append(errs, st.lease.release(ctx))
	}
	return errors.Join(errs...)
}

// committed reports whether a snapshot of this run made it into the table
// (a commit whose reply was lost): its files must then stay.
func (st *stage) committed(ctx context.Context) bool {
	tbl, err := st.e.loadTable(ctx, st.dest)
	if err != nil {
		return false
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[RunProperty] == st.opts.RunID {
			return true
		}
	}
	return false
}

// removeFiles deletes the files the run wrote: those Write returned, and
// any other file under the table's data folder named with one of its
// write ids (a file cut short by a cancel).
func (st *stage) removeFiles(ctx context.Context) error {
	fsys, err := st.tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, df := range append(append([]iceberg.DataFile{}, st.files...), st.deletes...) {
		if err := fsys.Remove(df.FilePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if lfs, ok := fsys.(icebergio.ListableIO); ok && len(st.uuids) > 0 {
		errs = append(errs, st.removeByWriteID(lfs))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove data files of aborted run %s: %w", st.opts.RunID, err)
	}
	return nil
}

func (st *stage) removeByWriteID(lfs icebergio.ListableIO) error {
	root := strings.TrimSuffix(st.tbl.Location(), "/") + "/data"
	err := lfs.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		for _, u := range st.uuids {
			if strings.Contains(d.Name(), u) {
				return lfs.Remove(path)
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// dropCreated drops the table this run created if nothing was committed
// to it, so an aborted first load leaves no empty table behind.
func (st *stage) dropCreated(ctx context.Context) error {
	if !st.created {
		return nil
	}
	tbl, err := st.e.loadTable(ctx, st.dest)
	if err != nil || tbl.CurrentSnapshot() != nil {
		return nil
	}
	drop := st.e.cat.DropTable
	if p, ok := st.e.cat.(catalog.PurgeableTable); ok {
		drop = p.PurgeTable // its metadata files too
	}
	if err := drop(ctx, ident(st.dest)); err != nil {
		return fmt.Errorf("drop table %s created by the aborted run: %w", st.dest, err)
	}
	return nil
}
