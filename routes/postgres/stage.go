package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
)

// stagePrefix starts every staging table's name.
const stagePrefix = "_weir_stage_"

// stageComment marks a staging table with the table it stands in for, so a
// stale one (its run's lock is free) can be found and dropped.
func stageComment(dest routes.TableRef, runID string) string {
	return fmt.Sprintf("weir:stage dest=%s run=%s since=%s", ident(dest), runID, time.Now().UTC().Format(time.RFC3339))
}

// maxIdent is PostgreSQL's identifier limit: longer names are cut by the
// server, so every name weir derives fits it (routes.SideName).
var maxIdent = routes.Bytes(63)

// IdentLimit is PostgreSQL's 63 bytes.
func (e *Endpoint) IdentLimit() routes.Limit { return maxIdent }

// columnRule: column names are identifiers too, compared exactly (weir
// quotes them).
var columnRule = routes.ColumnRule{Server: "PostgreSQL", Fits: maxIdent, Limit: "63 bytes"}

// stageName is _weir_stage_<table>_<run>, shortened with a hash to fit.
func stageName(table, runID string) string {
	return routes.SideName(stagePrefix, table, "_"+runID, maxIdent)
}

// Prepare locks the destination table, drops stale staging tables, and
// creates this run's staging table with the source's columns.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	st, err := e.prepare(ctx, info, opts, false)
	if err != nil {
		return nil, err // not a nil *stage in a non-nil interface
	}
	return st, nil
}

var _ routes.SharedDestination = (*Endpoint)(nil)

// PrepareShared is Prepare for one of the workers sharing a backfill
// (routes.SharedDestination): the table's lock in shared mode, no stale
// staging tables dropped (the other workers' are live; the next exclusive
// Prepare drops those a killed worker left), and the table must exist with
// the source's columns: the commit neither creates nor alters it.
func (e *Endpoint) PrepareShared(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.FencedStage, error) {
	if opts.Mode != routes.ModeAppend && opts.Mode != routes.ModeMerge {
		return nil, fmt.Errorf("%w: postgres destination: a shared stage appends or merges, not %s", routes.ErrUnsupported, opts.Mode)
	}
	st, err := e.prepare(ctx, info, opts, true)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (e *Endpoint) prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions, shared bool) (*stage, error) {
	dest, err := e.destRef(ctx, opts.Table)
	if err != nil {
		return nil, err
	}
	if err := checkMode(info, opts); err != nil {
		return nil, err
	}
	if err := routes.CheckColumnNames(info, columnRule); err != nil {
		return nil, err
	}
	lock, err := e.acquireLock(ctx, dest, opts.RunID, shared)
	if err != nil {
		return nil, err
	}
	st := &stage{e: e, info: info, opts: opts, dest: dest, lock: lock, shared: shared,
		table: routes.TableRef{Schema: dest.Schema, Name: stageName(dest.Name, opts.RunID)}}
	if opts.Fresh {
		if err := st.checkFresh(ctx); err != nil {
			st.Abort(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if shared {
		err = st.checkShared(ctx)
	}
	if err == nil {
		err = st.create(ctx)
	}
	if err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	if err := st.checkDrift(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	if shared && len(st.drift) > 0 {
		st.Abort(context.WithoutCancel(ctx))
		return nil, routes.BadInput("%s: the source %s has columns the destination lacks (%s): it changed since the backfill was planned; finish or forget the plan, then run the task once", dest, info.Ref, st.drift[0])
	}
	return st, nil
}

// checkShared: a shared stage writes into an existing table only.
func (st *stage) checkShared(ctx context.Context) error {
	exists, err := st.destExists(ctx)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("%w: %s does not exist; the backfill's plan creates it (weir backfill)", routes.ErrNotFound, st.dest)
	}
	return nil
}

// destRef fills in the schema of an unqualified destination (current_schema()).
func (e *Endpoint) destRef(ctx context.Context, t routes.TableRef) (routes.TableRef, error) {
	if t.Schema != "" {
		return t, nil
	}
	err := e.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&t.Schema)
	if err != nil || t.Schema == "" {
		return t, routes.BadInput("destination %s: no current schema; name it as schema.table", t)
	}
	return t, nil
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
	return fmt.Errorf("%w: postgres destination: mode %s", routes.ErrUnsupported, opts.Mode)
}

// stage is one run's staging table.
type stage struct {
	e      *Endpoint
	info   *routes.TableInfo
	opts   routes.WriteOptions
	dest   routes.TableRef
	table  routes.TableRef // the staging table
	lock   *tableLock
	drift  []string // ALTER TABLEs the commit runs first (drift.go)
	bounds []bound  // destination columns whose length the commit checks first (drift.go)
	done   bool
	// shared: one of a backfill's worker stages (PrepareShared)
	shared bool
	// fenced: Commit is CommitIf's, a compare-and-set with prev
	fenced bool
	prev   *routes.State
}

// checkFresh refuses a table weir is to create when one of that name is
// there already (a user's: see routes.WriteOptions.Fresh).
func (st *stage) checkFresh(ctx context.Context) error {
	exists, err := st.destExists(ctx)
	if err != nil || !exists {
		return err
	}
	return routes.Occupied(st.dest, "a table of its own")
}

func (st *stage) create(ctx context.Context) error {
	if !st.shared {
		if err := st.dropStale(ctx); err != nil {
			return err
		}
	}
	if err := st.checkMergeKey(ctx); err != nil {
		return err
	}
	ddl := []string{
		"CREATE SCHEMA IF NOT EXISTS " + quoteIdent(st.dest.Schema),
		stateDDL(st.dest.Schema),
		fmt.Sprintf("CREATE TABLE %s (%s)", ident(st.table), columnDefs(st.info)),
		fmt.Sprintf("COMMENT ON TABLE %s IS %s", ident(st.table), quoteLiteral(stageComment(st.dest, st.opts.RunID))),
	}
	for _, q := range ddl {
		if _, err := st.lock.conn.Exec(ctx, q); err != nil {
			if isDuplicateErr(err) && strings.HasPrefix(q, "CREATE TABLE") {
				return routes.Occupied(st.table, "the staging table of run "+st.opts.RunID)
			}
			return err
		}
	}
	return checkStateTable(ctx, st.lock.conn, st.dest.Schema)
}

// checkMergeKey refuses, under the lock and before a row moves, a merge
// into an existing table with no unique index on exactly the merge key:
// its ON CONFLICT would fail at commit, after the copy.
func (st *stage) checkMergeKey(ctx context.Context) error {
	if st.opts.Mode != routes.ModeMerge {
		return nil
	}
	var exists, unique bool
	err := st.lock.conn.QueryRow(ctx, `
SELECT to_regclass($1) IS NOT NULL, EXISTS (
  SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass($1) AND i.indisunique
    AND i.indpred IS NULL AND i.indexprs IS NULL
    AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text) FROM pg_attribute a
         WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey))
      = (SELECT array_agg(k ORDER BY k) FROM unnest($2::text[]) k))`, ident(st.dest), st.opts.Key).Scan(&exists, &unique)
	if err != nil || !exists || unique {
		return err
	}
	return &routes.ProbeError{Table: st.dest.String(), Problem: fmt.Sprintf("merge needs a unique index or primary key on (%s), and the destination table has none", strings.Join(st.opts.Key, ", ")),
		Hint: fmt.Sprintf("add one (ALTER TABLE %s ADD PRIMARY KEY (%s)), or pass the --primary-key the table is unique on", ident(st.dest), joinIdents(st.opts.Key))}
}

// isStageOf reports whether a table comment marks a staging table of dest
// (stageComment). The comparison is exact, in Go: a LIKE pattern would
// take the _ of a table name for a wildcard and match another table's.
func isStageOf(comment string, dest routes.TableRef) bool {
	return strings.HasPrefix(comment, "weir:stage dest="+ident(dest)+" run=")
}

// dropStale drops staging tables of this destination left by dead runs: we
// hold the lock, so their runs are gone.
func (st *stage) dropStale(ctx context.Context) error {
	rows, err := st.lock.conn.Query(ctx, `
SELECT c.relname, COALESCE(obj_description(c.oid, 'pg_class'), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = 'r' AND starts_with(c.relname, $2)`, st.dest.Schema, stagePrefix)
	if err != nil {
		return err
	}
	var stale []string
	var name, comment string
	_, err = pgx.ForEachRow(rows, []any{&name, &comment}, func() error {
		if isStageOf(comment, st.dest) {
			stale = append(stale, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range stale {
		q := "DROP TABLE IF EXISTS " + ident(routes.TableRef{Schema: st.dest.Schema, Name: name})
		if _, err := st.lock.conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("drop stale staging table %s: %w", name, err)
		}
	}
	return nil
}

func columnDefs(info *routes.TableInfo) string {
	defs := make([]string, len(info.Columns))
	for i, c := range info.Columns {
		defs[i] = quoteIdent(c.Name) + " " + stageType(c, info.Scheme)
		if !c.Nullable {
			defs[i] += " NOT NULL"
		}
	}
	return strings.Join(defs, ", ")
}

func columnNames(cols []routes.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = quoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}

// Abort drops the staging table and frees the lock; the destination is
// untouched. It is idempotent.
func (st *stage) Abort(ctx context.Context) error {
	if st.done {
		return nil
	}
	st.done = true
	defer st.lock.release(ctx)
	_, err := st.e.pool.Exec(ctx, "DROP TABLE IF EXISTS "+ident(st.table))
	if err != nil {
		return fmt.Errorf("drop staging table %s: %w", st.table, err)
	}
	return nil
}
