package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/weirhq/weir/routes"
)

// MaintainProperty marks a snapshot weir maintain made (its value names
// the step, compact), so history tells it from a run's commit.
const MaintainProperty = "weir.maintain"

// Maintain compacts the table's small data files, expires the snapshots
// no reader's offset needs and removes orphan files, under the table's
// lease (exit 75 while a run holds it). Compaction is one replace
// snapshot that readers by SnapshotCursor skip (its rows are not new) and
// whose summary carries the current snapshot's weir state; no step moves
// an offset or changes the table's weir properties.
func (e *Endpoint) Maintain(ctx context.Context, t routes.TableRef, o routes.MaintainOptions) (*routes.MaintainReport, error) {
	rep := &routes.MaintainReport{Table: t.String(), DryRun: o.DryRun, Skipped: o.Skip}
	if o.Consumed != routes.AllConsumed {
		c := o.Consumed
		rep.Consumed = &c
	}
	if _, err := e.loadTable(ctx, t); err != nil {
		if errors.Is(err, routes.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w: name a table weir has written (namespace.table); maintain creates none", routes.ErrBadInput, err)
		}
		return nil, err
	}
	l, err := e.lock.acquire(ctx, t, o.RunID)
	if err != nil {
		return nil, err
	}
	defer l.release(context.WithoutCancel(ctx))
	steps := []struct {
		name string
		run  func(context.Context, routes.TableRef, routes.MaintainOptions, *routes.MaintainReport) error
	}{{"compact", e.compact}, {"expire", e.expire}, {"orphans", e.orphans}}
	for _, s := range steps {
		if slices.Contains(o.Skip, s.name) {
			continue
		}
		if err := l.check(ctx); err != nil {
			return rep, err
		}
		if err := s.run(ctx, t, o, rep); err != nil {
			return rep, fmt.Errorf("maintain %s: %s: %w", t, s.name, err)
		}
	}
	tbl, err := e.loadTable(ctx, t)
	if err != nil {
		return rep, err
	}
	if s := tbl.CurrentSnapshot(); s != nil {
		rep.Snapshot = &routes.SnapshotState{SequenceNumber: s.SequenceNumber, ID: s.SnapshotID}
	}
	return rep, nil
}

// fileSequences maps each live data file of snap to the sequence number
// of the snapshot that added it.
func fileSequences(ctx context.Context, tbl *table.Table, snap *table.Snapshot) (map[string]int64, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	seqs := map[string]int64{}
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
			}
			seq := entry.FileSequenceNum()
			if seq == nil {
				return nil, fmt.Errorf("manifest %s: data file %s has no sequence number", m.FilePath(), entry.DataFile().FilePath())
			}
			seqs[entry.DataFile().FilePath()] = *seq
		}
	}
	return seqs, nil
}

// compact rewrites the small data files every reader has consumed into
// files of about TargetFileBytes, with their deletes applied, in one
// replace snapshot.
func (e *Endpoint) compact(ctx context.Context, t routes.TableRef, o routes.MaintainOptions, rep *routes.MaintainReport) error {
	tbl, err := e.loadTable(ctx, t)
	if err != nil {
		return err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan files: %w", err)
	}
	seqs, err := fileSequences(ctx, tbl, snap)
	if err != nil {
		return err
	}
	rep.Compact.DataFilesBefore = len(tasks)
	rep.Compact.DataFilesAfter = len(tasks)
	cfg := compactionConfig(o)
	var consumed []table.FileScanTask
	for _, task := range tasks {
		if seqs[task.File.FilePath()] <= o.Consumed {
			consumed = append(consumed, task)
		} else if task.File.FileSizeBytes() < cfg.MinFileSizeBytes {
			rep.Compact.Unconsumed++
		}
	}
	plan, err := cfg.PlanCompaction(consumed)
	if err != nil {
		return err
	}
	var groups []table.CompactionTaskGroup
	for _, g := range plan.Groups {
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
		rep.Compact.Rewritten += len(g.Tasks)
		rep.Compact.BytesBefore += g.TotalSizeBytes
	}
	if len(groups) == 0 || o.DryRun {
		if o.DryRun && len(groups) > 0 {
			rep.Compact.Written = plan.EstOutputFiles
			rep.Compact.DataFilesAfter = len(tasks) - rep.Compact.Rewritten + plan.EstOutputFiles
			rep.Compact.BytesAfter = plan.EstOutputBytes
		}
		return nil
	}
	if err := routes.Checkpoint("commit"); err != nil {
		return err
	}
	tx := tbl.NewTransaction()
	res, err := tx.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{
		SnapshotProps: carriedState(snap, o.RunID, "compact"),
		GroupOptions:  []table.CompactionGroupOption{table.WithCompactionTargetFileSize(cfg.TargetFileSizeBytes)},
	})
	if err != nil {
		return err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit the compaction: %w", err)
	}
	rep.Compact.Written = res.AddedDataFiles
	rep.Compact.BytesAfter = res.BytesAfter
	rep.Compact.DataFilesAfter = len(tasks) - res.RemovedDataFiles + res.AddedDataFiles
	return nil
}

// compactionConfig is iceberg-go's bin-packing config for the options: a
// file under 3/4 of the target is small.
func compactionConfig(o routes.MaintainOptions) compaction.Config {
	target := o.TargetFileBytes
	if target <= 0 {
		target = routes.DefaultTargetFileBytes
	}
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	cfg.MinInputFiles = 2
	if o.MinInputFiles > 0 {
		cfg.MinInputFiles = uint(o.MinInputFiles)
	}
	return cfg
}

// carriedState is the summary of a maintenance snapshot: the weir state
// and watermarks of the snapshot it follows (so the newest summary still
// names every task's offsets), the maintain run, and the step.
func carriedState(snap *table.Snapshot, runID, step string) iceberg.Properties {
	props := iceberg.Properties{RunProperty: runID, RowsProperty: "0", MaintainProperty: step}
	if snap.Summary == nil {
		return props
	}
	for k, v := range snap.Summary.Properties {
		if strings.HasPrefix(k, StatePrefix) || strings.HasPrefix(k, WatermarkPrefix) {
			props[k] = v
		}
	}
	return props
}

// expire removes the snapshots of the main branch older than the oldest
// one a reader's offset needs (and than RetainLast), and the snapshots no
// branch or tag reaches; iceberg-go deletes the files only they held.
func (e *Endpoint) expire(ctx context.Context, t routes.TableRef, o routes.MaintainOptions, rep *routes.MaintainReport) error {
	tbl, err := e.loadTable(ctx, t)
	if err != nil {
		return err
	}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	meta := tbl.Metadata()
	keep := map[int64]bool{}
	n := 0
	for s := cur; s != nil; s = parentOf(meta, s) {
		if n >= max(o.RetainLast, 1) && s.SequenceNumber < o.Consumed {
			break
		}
		keep[s.SnapshotID] = true
		n++
	}
	before := meta.Snapshots()
	if o.DryRun {
		refs := map[int64]bool{}
		for _, ref := range meta.Refs() {
			refs[ref.SnapshotID] = true
		}
		for _, s := range before {
			if !keep[s.SnapshotID] && !refs[s.SnapshotID] {
				rep.Expire.Expired = append(rep.Expire.Expired, s.SequenceNumber)
			}
		}
		rep.Expire.Kept = len(before) - len(rep.Expire.Expired)
		return nil
	}
	if len(keep) == len(before) {
		rep.Expire.Kept = len(before)
		return nil
	}
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(len(keep)), table.WithOlderThan(0)); err != nil {
		return err
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("commit the expiry: %w", err)
	}
	left := map[int64]bool{}
	for _, s := range after.Metadata().Snapshots() {
		left[s.SnapshotID] = true
	}
	for _, s := range before {
		if !left[s.SnapshotID] {
			rep.Expire.Expired = append(rep.Expire.Expired, s.SequenceNumber)
		}
	}
	slices.Sort(rep.Expire.Expired)
	rep.Expire.Kept = len(left)
	return nil
}

// orphans deletes the files under the table's location that no snapshot
// or metadata file references and that are older than OrphanAge (a killed
// run's data files); the lease keeps weir runs from writing meanwhile.
func (e *Endpoint) orphans(ctx context.Context, t routes.TableRef, o routes.MaintainOptions, rep *routes.MaintainReport) error {
	tbl, err := e.loadTable(ctx, t)
	if err != nil {
		return err
	}
	age := o.OrphanAge
	if age <= 0 {
		age = e.cfg.lease
	}
	rep.Orphans.OlderThan = age.String()
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(age), table.WithDryRun(o.DryRun))
	if err != nil {
		if strings.Contains(err.Error(), "ListableIO") {
			return fmt.Errorf("%w: listing the files of %s's storage: %v", routes.ErrUnsupported, t, err)
		}
		return err
	}
	rep.Orphans.Files = res.OrphanFileLocations
	slices.Sort(rep.Orphans.Files)
	rep.Orphans.Bytes = res.TotalSizeBytes
	if !o.DryRun && len(res.DeletedFiles) != len(res.OrphanFileLocations) {
		return errors.New("some orphan files could not be deleted")
	}
	return nil
}
