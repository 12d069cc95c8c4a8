package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

// newTableProps are set on tables weir creates: format v2 (row-level
// deletes for merge), Parquet compressed with fileformat's default codec
// unless compression= says otherwise, and fileformat's dictionary rule
// (only top-level strings, given up at fileformat.DictionaryLimit):
// iceberg-go's default, a dictionary on every column up to 1 MiB, spent
// a fifth of a lineitem transfer's CPU hashing unique comments and
// integers. The keys are Iceberg Java's, read by both implementations.
// weir's own encoder (dataWriter) reads only the codec keys: the
// dictionary and row-group keys are fileformat's rule spelled for the
// other writers of the table (iceberg-go's, which weir keeps for the
// tables dataWriter does not write, Spark, PyIceberg).
// The per-column key names the Parquet column, whose name is the Iceberg
// one sanitized (a.b is written as a_x2Eb): iceberg.SanitizeColumnNames.
func (e *Endpoint) newTableProps(info *routes.TableInfo, sc *iceberg.Schema) (iceberg.Properties, error) {
	p := iceberg.Properties{
		"format-version":                     "2",
		"write.parquet.row-group-size-bytes": "33554432",
		table.ParquetDictSizeBytesKey:        strconv.Itoa(fileformat.DictionaryLimit),
		"parquet.enable.dictionary":          "false",
	}
	written, err := iceberg.SanitizeColumnNames(sc)
	if err != nil {
		return nil, fmt.Errorf("iceberg column names: %w", err)
	}
	for _, name := range fileformat.DictionaryColumns(info.Schema()) {
		f, ok := sc.FindFieldByName(name)
		if !ok {
			continue
		}
		if w, ok := written.FindFieldByID(f.ID); ok {
			p["write.parquet.dict-encoding-enabled.column."+w.Name] = "true"
		}
	}
	maps.Copy(p, compressionProps(fileformat.DefaultCompression))
	maps.Copy(p, e.cfg.compression)
	return p, nil
}

// Prepare takes the table's lease, creates the namespace and the table if
// they are missing, and returns a stage that writes data files as pipes
// deliver them; nothing is visible until Commit.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	if err := checkMode(info, opts); err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	st := &stage{e: e, info: info, opts: opts, dest: opts.Table}
	if err := st.lockAndLoad(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	return st, nil
}

func checkMode(info *routes.TableInfo, opts routes.WriteOptions) error {
	switch opts.Mode {
	case routes.ModeReplace, routes.ModeAppend:
		return nil
	case routes.ModeMerge:
		if len(opts.Key) == 0 {
			return &routes.ProbeError{Table: info.Ref.String(), Problem: "merge needs a key and the table has no primary key", Hint: "pass --primary-key col[,col]"}
		}
		for _, k := range opts.Key {
			if _, ok := info.Column(k); !ok {
				return &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "merge key column does not exist"}
			}
		}
		return nil
	}
	return fmt.Errorf("%w: iceberg destination: mode %s", routes.ErrUnsupported, opts.Mode)
}

// stage is one run's writes into one table.
type stage struct {
	e       *Endpoint
	info    *routes.TableInfo
	opts    routes.WriteOptions
	dest    routes.TableRef
	lease   lease
	tbl     *table.Table
	created bool          // this run created the table
	target  *arrow.Schema // the table's Arrow schema, with field ids
	// newColumns are the source's columns the table gains at Commit, in
	// the same transaction as the data; baseSchemaID is the schema they
	// were numbered against.
	newColumns   []newColumn
	baseSchemaID int
	keyIDs       []int        // merge: the key's field ids
	keys         *keySet      // merge: the keys written, to refuse a repeat
	fence        *assertState // CommitIf's requirement: the state it replaces

	mu      sync.Mutex
	files   []iceberg.DataFile // data files written
	deletes []iceberg.DataFile // merge: equality delete files written
	uuids   []string           // write ids: every file of this run has one in its name
	done    bool
}

// lockAndLoad leases the table before anything else (a REST catalog
// leases through a table property, so its table must exist first), once
// the source's columns are names the table can hold (columnRule): every
// write into Iceberg, bulk or CDC, passes here first.
func (st *stage) lockAndLoad(ctx context.Context) error {
	if err := routes.CheckColumnNames(st.info, columnRule); err != nil {
		return err
	}
	if st.opts.Fresh {
		// Before ensureTable: the property lock creates the table first.
		if _, err := st.e.loadTable(ctx, st.dest); !errors.Is(err, routes.ErrNotFound) {
			if err != nil {
				return err
			}
			return routes.Occupied(st.dest, "a table of its own")
		}
	}
	_, byProperty := st.e.lock.(*propertyLock)
	if byProperty {
		if err := st.ensureTable(ctx); err != nil {
			return err
		}
	}
	var err error
	if st.lease, err = st.e.lock.acquire(ctx, st.dest, st.opts.RunID); err != nil {
		return err
	}
	if !byProperty {
		if err := st.ensureTable(ctx); err != nil {
			return err
		}
	}
	return st.bindSchema()
}

// ensureTable loads the destination, creating its namespace and the table
// (with the source's schema) when missing.
func (st *stage) ensureTable(ctx context.Context) error {
	tbl, err := st.e.loadTable(ctx, st.dest)
	if !errors.Is(err, routes.ErrNotFound) {
		st.tbl = tbl
		return err
	}
	if st.opts.Existing {
		return fmt.Errorf("%w: %s is gone: a backfill's commit does not create it", routes.ErrNotFound, st.dest)
	}
	id := ident(st.dest)
	if err := st.e.cat.CreateNamespace(ctx, id[:1], nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return fmt.Errorf("create namespace %s: %w", id[0], err)
	}
	sc, err := tableSchema(st.info)
	if err != nil {
		return err
	}
	props, err := st.e.newTableProps(st.info, sc)
	if err != nil {
		return err
	}
	st.tbl, err = st.e.cat.CreateTable(ctx, id, sc, catalog.WithProperties(props))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		st.tbl, err = st.e.loadTable(ctx, st.dest)
		return err
	}
	if err != nil {
		return fmt.Errorf("create iceberg table %s: %w", st.dest, err)
	}
	st.created = true
	return nil
}

// bindSchema checks the source's columns against the table, stages the
// columns the source gained (the data files are written with them; Commit
// adds them in its own transaction) and resolves the merge key.
func (st *stage) bindSchema() error {
	cols, err := schemaChanges(st.dest, st.info, st.tbl.Schema())
	if err != nil {
		return err
	}
	st.baseSchemaID, st.newColumns = st.tbl.Schema().ID, cols
	if len(cols) > 0 || st.compressionChanges() {
		tx := st.tbl.NewTransaction()
		if err := addColumns(tx, cols); err != nil {
			return fmt.Errorf("evolve %s: %w", st.dest, err)
		}
		if len(st.e.cfg.compression) > 0 {
			if err := tx.SetProperties(st.e.cfg.compression); err != nil {
				return fmt.Errorf("compression of %s: %w", st.dest, err)
			}
		}
		staged, err := tx.StagedTable()
		if err != nil {
			return fmt.Errorf("evolve %s: %w", st.dest, err)
		}
		st.tbl = staged.Table
	}
	target, err := table.SchemaToArrowSchema(st.tbl.Schema(), nil, true, false)
	if err != nil {
		return fmt.Errorf("arrow schema of %s: %w", st.dest, err)
	}
	st.target = target
	if _, err := newConverter(st.info.Schema(), target, st.opts.Allocator); err != nil {
		return &routes.ProbeError{Table: st.dest.String(), Problem: err.Error(),
			Hint: "the destination table's schema differs from the source's; drop it or write to a new table"}
	}
	for _, k := range st.keyNames() {
		f, ok := st.tbl.Schema().FindFieldByName(k)
		if !ok {
			return &routes.ProbeError{Table: st.dest.String(), Column: k, Problem: "merge key column is not in the destination table"}
		}
		st.keyIDs = append(st.keyIDs, f.ID)
	}
	if st.opts.Mode == routes.ModeMerge {
		st.keys = newKeySet()
	}
	return nil
}

// compressionChanges reports whether compression= asks for another codec
// or level than the table's properties: the data files are then written
// with the URL's, and Commit records it on the table.
func (st *stage) compressionChanges() bool {
	props := st.tbl.Properties()
	for k, v := range st.e.cfg.compression {
		if props[k] != v {
			return true
		}
	}
	return false
}

func (st *stage) keyNames() []string {
	if st.opts.Mode != routes.ModeMerge {
		return nil
	}
	return st.opts.Key
}

// newWriteID registers a write id for one pipe's files.
func (st *stage) newWriteID() uuid.UUID {
	u := uuid.New()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.uuids = append(st.uuids, u.String())
	return u
}

func (st *stage) addFiles(data, deletes []iceberg.DataFile) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.files = append(st.files, data...)
	st.deletes = append(st.deletes, deletes...)
}
