package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

// stage is one run's staging table.
type stage struct {
	e     *Endpoint
	info  *routes.TableInfo
	opts  routes.WriteOptions
	dest  routes.TableRef
	table routes.TableRef   // _weir_stage_<table>_<run>
	types map[string]string // the staging table's column types, by name
	lease *lease
	done  bool
}

var (
	_ routes.Stage        = (*stage)(nil)
	_ routes.NativeWriter = (*stage)(nil)
)

// Prepare takes the destination's lease, settles what a dead run left,
// and creates this run's staging table: from the source's columns, or
// (append and merge into an existing table) AS the destination, so its
// partitions can be attached. A replace into a CDC replica (isReplica)
// stages AS the replica too, so the swapped-in table keeps its engine and
// version columns (bulk rows get version 0): the log_based bootstrap.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	dest := e.ref(opts.Table)
	if err := checkMode(info, opts); err != nil {
		return nil, err
	}
	if err := e.createDatabase(ctx, dest); err != nil {
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	st := &stage{e: e, info: info, opts: opts, dest: dest,
		table: routes.TableRef{Schema: dest.Schema, Name: weirName(stagePrefix, dest.Name, opts.RunID)}}
	l, dead, err := e.acquire(ctx, dest, opts.RunID, st.table.Name)
	if err != nil {
		return nil, err
	}
	st.lease = l
	if err := st.setup(ctx, dead); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	return st, nil
}

// createDatabase creates dest's database when missing. A refusal for want
// of privilege (a readonly profile, a user limited to other databases) is
// bad input: retrying will not help, naming a database will.
func (e *Endpoint) createDatabase(ctx context.Context, dest routes.TableRef) error {
	err := e.conn.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(dest.Schema)+e.opts.onCluster())
	if refusedDDL(errorCode(err)) {
		return &routes.ProbeError{Table: dest.String(), Problem: "this user may not create database " + dest.Schema, Err: err,
			Hint: "name an existing database in the destination URL or with --dest-schema, or create it (or grant CREATE DATABASE) first"}
	}
	return err
}

// refusedDDL: READONLY (164), DATABASE_ACCESS_DENIED (291), ACCESS_DENIED
// (497).
func refusedDDL(code int) bool { return code == 164 || code == 291 || code == 497 }

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
	return fmt.Errorf("%w: clickhouse destination: mode %s", routes.ErrUnsupported, opts.Mode)
}

func (st *stage) setup(ctx context.Context, dead *holder) error {
	if err := st.e.ensureStateTable(ctx, st.dest.Schema); err != nil {
		return err
	}
	if err := st.e.settle(ctx, st.dest); err != nil {
		return err
	}
	if dead != nil {
		if err := st.dropLeftovers(ctx, *dead); err != nil {
			return err
		}
	}
	exists, err := st.e.tableExists(ctx, st.dest)
	if err != nil {
		return err
	}
	if exists && st.opts.Fresh {
		return routes.Occupied(st.dest, "a table of its own")
	}
	if exists && st.opts.Mode != routes.ModeReplace {
		if err := st.checkDrift(ctx); err != nil {
			return err
		}
	}
	keep := exists && st.opts.Mode == routes.ModeReplace
	if keep {
		if keep, err = st.e.isReplica(ctx, st.dest); err != nil {
			return err
		}
	}
	if (exists && st.opts.Mode != routes.ModeReplace) || keep {
		err = st.createLikeDest(ctx)
	} else {
		err = st.create(ctx)
	}
	if err != nil {
		return err
	}
	st.types, err = st.e.columnTypes(ctx, st.table)
	return err
}

// dropLeftovers drops what a dead run left: its staging table, the old
// table of a swap it did not finish and a log_based run's input table.
func (st *stage) dropLeftovers(ctx context.Context, dead holder) error {
	for _, name := range []string{dead.stage, weirName(oldPrefix, st.dest.Name, dead.runID), weirName(inputPrefix, st.dest.Name, dead.runID)} {
		if name == "" || !strings.HasPrefix(name, "_weir_") {
			continue
		}
		t := routes.TableRef{Schema: st.dest.Schema, Name: name}
		if err := st.e.dropTable(ctx, t); err != nil {
			return fmt.Errorf("drop leftover %s of run %s: %w", name, dead.runID, err)
		}
	}
	return nil
}

func (st *stage) create(ctx context.Context) error {
	if err := st.mergeKeySortable(); err != nil {
		return err
	}
	defs := make([]string, len(st.info.Columns))
	for i, c := range st.info.Columns {
		defs[i] = quoteIdent(c.Name) + " " + destType(c, st.info.Scheme, st.e.feat)
	}
	ddl := fmt.Sprintf("CREATE TABLE %s%s (%s) %s", ident(st.table), st.e.opts.onCluster(), strings.Join(defs, ", "), st.engine())
	return st.e.conn.exec(ctx, ddl)
}

func (st *stage) createLikeDest(ctx context.Context) error {
	if st.opts.Mode == routes.ModeMerge {
		if err := st.checkMergeTarget(ctx); err != nil {
			return err
		}
	}
	ddl := fmt.Sprintf("CREATE TABLE %s%s AS %s", ident(st.table), st.e.opts.onCluster(), ident(st.dest))
	return st.e.conn.exec(ctx, ddl)
}

// engine renders the ENGINE clause of a new table: MergeTree family
// engines are ordered by order_by, else the key, else tuple().
func (st *stage) engine() string {
	engine := st.e.opts.Engine
	if engine == "" {
		engine = pick(st.opts.Mode == routes.ModeMerge, "ReplacingMergeTree", DefaultEngine)
	}
	if !strings.Contains(engine, "(") {
		engine += "()"
	}
	if !strings.Contains(engine, "MergeTree") {
		return "ENGINE = " + engine
	}
	return fmt.Sprintf("ENGINE = %s ORDER BY %s", engine, st.orderBy())
}

func (st *stage) orderBy() string {
	if st.e.opts.OrderBy != "" {
		return "(" + st.e.opts.OrderBy + ")"
	}
	key := st.info.PrimaryKey
	if st.opts.Mode == routes.ModeMerge {
		key = st.opts.Key
	}
	var cols []string
	for _, k := range key {
		if c, ok := st.info.Column(k); ok && !strings.HasPrefix(destType(c, st.info.Scheme, st.e.feat), "Nullable(") {
			cols = append(cols, quoteIdent(k)) // old servers refuse Nullable sorting keys
		}
	}
	if len(cols) == 0 {
		return "tuple()"
	}
	return "(" + strings.Join(cols, ", ") + ")"
}

// mergeKeySortable refuses a merge whose new table could not be ordered by
// the whole key: orderBy leaves Nullable columns out, and a
// ReplacingMergeTree ordered by less than the key (tuple(), at worst)
// collapses rows of distinct keys into one.
func (st *stage) mergeKeySortable() error {
	if st.opts.Mode != routes.ModeMerge || st.e.opts.OrderBy != "" {
		return nil
	}
	for _, k := range st.opts.Key {
		if c, ok := st.info.Column(k); ok && strings.HasPrefix(destType(c, st.info.Scheme, st.e.feat), "Nullable(") {
			return &routes.ProbeError{Table: st.info.Ref.String(), Column: k,
				Problem: "the merge key column is nullable, and ClickHouse cannot order a ReplacingMergeTree by it: rows of distinct keys would collapse into one",
				Hint:    "make the column NOT NULL in the source, or create the table yourself ORDER BY the key and merge into it"}
		}
	}
	return nil
}

// checkMergeTarget: merging into an existing table needs ReplacingMergeTree
// ordered by the key, else appended upserts would stay duplicates.
func (st *stage) checkMergeTarget(ctx context.Context) error {
	q := fmt.Sprintf("SELECT engine, sorting_key FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(st.dest.Schema), quoteLiteral(st.dest.Name))
	row, ok, err := queryRow(ctx, st.e.conn, q)
	if err != nil || !ok {
		return err
	}
	if !strings.Contains(row[0], "ReplacingMergeTree") || !sameColumns(splitKey(row[1]), st.opts.Key) {
		return &routes.ProbeError{Table: st.dest.String(), Problem: fmt.Sprintf("merge needs ReplacingMergeTree ORDER BY (%s); the table is %s ORDER BY (%s)", strings.Join(st.opts.Key, ", "), row[0], row[1]),
			Hint: "recreate it with that engine and key, or use mode replace"}
	}
	return nil
}

// Abort drops the staging table and frees the lease; the destination is
// untouched. It is idempotent.
func (st *stage) Abort(ctx context.Context) error {
	if st.done {
		return nil
	}
	st.done = true
	err := st.e.dropTable(ctx, st.table)
	return errors.Join(err, st.lease.release(ctx))
}
