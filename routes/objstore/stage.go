package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// stage is one run writing one table: its files go under
// <parent>/_weir_staging/<table>/<runid>/, move into the table's folder at
// Commit, and become the table when the manifest that lists them is written.
type stage struct {
	e      *Endpoint
	dir    string // the table's folder
	ref    routes.TableRef
	info   *routes.TableInfo
	mode   routes.Mode
	runID  string
	in     *arrow.Schema // of the probed table, as streams deliver it
	schema *arrow.Schema // of the data files
	alloc  memory.Allocator
	lease  *lease

	prev        *Manifest // the table before this run; nil when new
	prevVersion string

	pipes     atomic.Int32
	mu        sync.Mutex
	files     []ManifestFile
	published []string // keys this run moved into the table's folder
	ended     bool     // committed or aborted
}

var _ routes.Stage = (*stage)(nil)

// Prepare takes the table's lease and reads its manifest. Merge has no
// cheap correct design on immutable files yet and is refused here, before
// any row moves.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	if opts.Mode != routes.ModeReplace && opts.Mode != routes.ModeAppend && opts.Mode != "" {
		return nil, fmt.Errorf("%w: %s tables take replace and append; %s would rewrite the files holding the changed keys, which weir does not do yet (load into Iceberg or a database for merge)",
			routes.ErrUnsupported, e.url.Scheme(), opts.Mode)
	}
	st, err := e.newStage(info, opts)
	if err != nil {
		return nil, err
	}
	st.lease, err = acquireLease(ctx, e.store, st.dir, st.ref.String(), st.runID, e.set.lease)
	if err != nil {
		return nil, err
	}
	if err := st.loadPrevious(ctx); err != nil {
		st.lease.release(context.WithoutCancel(ctx))
		return nil, err
	}
	return st, nil
}

func (e *Endpoint) newStage(info *routes.TableInfo, opts routes.WriteOptions) (*stage, error) {
	ref := opts.Table
	if ref.Name == "" {
		ref = info.Ref
	}
	dir, err := tablePath(ref)
	if err != nil {
		return nil, err
	}
	st := &stage{e: e, dir: dir, ref: ref, info: info, mode: opts.Mode, runID: opts.RunID, alloc: opts.Allocator}
	if st.mode == "" {
		st.mode = routes.ModeReplace
	}
	if st.runID == "" {
		st.runID = routes.NewRunID()
	}
	if !runIDRE.MatchString(st.runID) {
		return nil, routes.BadInput("run id %q: want 1 to 64 letters, digits, _ or - (it names the run's files)", st.runID)
	}
	if st.alloc == nil {
		st.alloc = memory.DefaultAllocator
	}
	st.in = info.Schema()
	st.schema = fileformat.FileSchema(st.in, e.set.format)
	return st, nil
}

// loadPrevious reads the current manifest; an append must match its
// format and columns.
func (st *stage) loadPrevious(ctx context.Context) error {
	m, v, found, err := loadManifest(ctx, st.e.store, st.dir)
	if err != nil || !found {
		return err
	}
	st.prev, st.prevVersion = m, v
	if st.mode != routes.ModeAppend {
		return nil
	}
	if m.Format != st.e.set.format {
		return routes.BadInput("append to %s: the table holds %s files, the URL asks for %s (drop ?format or run --mode replace)", st.ref, m.Format, st.e.set.format)
	}
	old, err := m.Schema()
	if err != nil {
		return err
	}
	return sameColumns(st.ref, old, st.schema)
}

func sameColumns(ref routes.TableRef, old, cur *arrow.Schema) error {
	describe := func(s *arrow.Schema) string {
		var parts []string
		for _, f := range s.Fields() {
			parts = append(parts, f.Name+" "+f.Type.String())
		}
		return strings.Join(parts, ", ")
	}
	if a, b := describe(old), describe(cur); a != b {
		return routes.BadInput("append to %s: its columns are (%s), the source's (%s); run --mode replace to start over", ref, a, b)
	}
	return nil
}

// stageDir is where this run writes its files before publishing them.
func (st *stage) stageDir() string { return joinKey(stagingRoot(st.dir), st.runID) }

// stagedKey is the staging key of a data file named name.
func (st *stage) stagedKey(name string) string { return joinKey(st.stageDir(), name) }

func (st *stage) addFile(f ManifestFile) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.files = append(st.files, f)
}

// Commit moves this run's files from staging into the table's folder, then
// writes the manifest naming them (replace) or the previous files plus them
// (append), with the state, in one conditional PUT on the version read at
// Prepare. Files the new manifest does not list are deleted only after
// that, and a failure to delete them never fails the commit. A run that
// fails between the moves and the manifest takes its moved files back out
// (Abort); a killed one leaves them to the next run's sweep.
func (st *stage) Commit(ctx context.Context, state routes.State) error {
	if err := st.lease.check(); err != nil {
		return err
	}
	m := st.manifest(state)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := routes.Checkpoint("publish-files"); err != nil {
		return err
	}
	if err := st.publishFiles(ctx); err != nil {
		return err
	}
	if err := st.lease.check(); err != nil {
		return err
	}
	c := cond{absent: st.prev == nil, version: st.prevVersion}
	if err := routes.Checkpoint("commit"); err != nil {
		return err
	}
	if err := st.publish(ctx, b, c); err != nil {
		return err
	}
	st.mu.Lock()
	st.ended = true
	st.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	st.sweep(cctx, m)
	st.lease.release(cctx)
	return nil
}

// publishFiles moves the staged files into the table's folder: a rename on
// file://, a server-side copy and a delete on S3 and GCS.
func (st *stage) publishFiles(ctx context.Context) error {
	st.mu.Lock()
	files := slices.Clone(st.files)
	st.mu.Unlock()
	for _, f := range files {
		dst := joinKey(st.dir, f.Path)
		if err := st.e.store.Move(ctx, st.stagedKey(f.Path), dst); err != nil {
			return fmt.Errorf("publish %s: %w", st.e.describe(dst), err)
		}
		st.mu.Lock()
		st.published = append(st.published, dst)
		st.mu.Unlock()
	}
	return nil
}

// publish writes the manifest. When the PUT's outcome is unknown (a
// timeout after the store may have applied it) the manifest is read back:
// Abort must never delete the files of a manifest that did land.
func (st *stage) publish(ctx context.Context, b []byte, c cond) error {
	_, err := st.e.store.Put(ctx, manifestKey(st.dir), b, c)
	if err == nil {
		return nil
	}
	if errors.Is(err, errPrecondition) {
		return fmt.Errorf("publish %s: another run committed since this one started (its lock was lost); nothing of this run is visible: %w", st.e.describe(manifestKey(st.dir)), err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	if m, _, found, rerr := loadManifest(rctx, st.e.store, st.dir); rerr == nil && found && m.RunID == st.runID {
		return nil
	}
	return fmt.Errorf("publish %s: %w", st.e.describe(manifestKey(st.dir)), err)
}

func (st *stage) manifest(state routes.State) *Manifest {
	now := time.Now().UTC()
	m := &Manifest{Version: ManifestVersion, Table: st.ref.String(), Format: st.e.set.format, PrimaryKey: st.info.PrimaryKey,
		RunID: st.runID, Mode: st.mode, CommittedAt: now}
	m.setSchema(st.schema)
	if st.prev != nil && st.mode == routes.ModeAppend {
		m.Files = append(m.Files, st.prev.Files...)
		m.States = append(m.States, st.prev.States...)
	}
	st.mu.Lock()
	run := slices.Clone(st.files)
	st.mu.Unlock()
	slices.SortFunc(run, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	m.Files = append(m.Files, run...)
	for _, f := range m.Files {
		m.Rows += f.Rows
		m.Bytes += f.Bytes
	}
	if state.RunID == "" { // the state names its run; else it is this stage's
		state.RunID = st.runID
	}
	m.putState(ManifestState{SourceID: state.SourceID, Cursor: state.Cursor, Watermark: state.Watermark, Position: state.Position,
		RunID: state.RunID, Rows: state.Rows, CommittedAt: now})
	return m
}

// sweep deletes what the new manifest does not list: weir's data files in
// the table's folder (the replaced run's, and those a run killed while
// publishing left), files of the layout before staging (run=<id>/), and
// the staging folders of killed runs. Under the lease no other live run
// writes there (a run whose lease expired fails its own commit). Other
// files in the folder are not weir's and are left alone.
func (st *stage) sweep(ctx context.Context, m *Manifest) {
	keep := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		keep[joinKey(st.dir, f.Path)] = true
	}
	var drop []string
	if objs, err := st.e.store.List(ctx, st.dir); err == nil {
		for _, o := range objs {
			rel := strings.TrimPrefix(o.Key, st.dir+"/")
			if (partRE.MatchString(rel) || strings.HasPrefix(rel, runPrefix)) && !keep[o.Key] {
				drop = append(drop, o.Key)
			}
		}
	}
	if objs, err := st.e.store.List(ctx, stagingRoot(st.dir)); err == nil {
		for _, o := range objs {
			drop = append(drop, o.Key)
		}
	}
	deleteAll(ctx, st.e.store, drop)
}

// Abort deletes this run's files, staged or already moved into the table's
// folder, and releases the lease; the manifest, and so the table, is
// untouched. Abort after Commit is a no-op.
func (st *stage) Abort(ctx context.Context) error {
	st.mu.Lock()
	ended := st.ended
	st.ended = true
	keys := slices.Clone(st.published)
	st.mu.Unlock()
	if ended {
		return nil
	}
	objs, err := st.e.store.List(ctx, st.stageDir())
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if derr := deleteAll(ctx, st.e.store, keys); err == nil {
		err = derr
	}
	if rerr := st.lease.release(ctx); err == nil {
		err = rerr
	}
	return wrapf(err, "abort %s", st.ref)
}
