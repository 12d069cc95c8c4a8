package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/weirhq/weir/routes"
)

// Prefixes of the tables a run creates beside its destination.
const (
	stagePrefix = "_weir_stage_"
	oldPrefix   = "_weir_old_" // the replaced table, between the swap and its drop
)

// maxIdent is MySQL's identifier limit, 64 characters, and the limit of
// the file the server names after a table: a character outside
// [0-9A-Za-z_] is written as @ and up to 4 hex digits, and the name plus
// its extension must fit the file system's 255 bytes. Every name weir
// derives fits both (routes.SideName).
func maxIdent(name string) bool { return routes.Runes(64)(name) && fileNameLen(name) <= 250 }

func fileNameLen(name string) int {
	n := 0
	for _, r := range name {
		if r == '_' || r < 128 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			n++
		} else {
			n += 5
		}
	}
	return n
}

// IdentLimit is MySQL's 64 characters.
func (e *Endpoint) IdentLimit() routes.Limit { return maxIdent }

// checkColumnNames holds info's columns to MySQL's rule for column names:
// 64 characters at most, of the Basic Multilingual Plane (identifiers are
// utf8mb3: a character outside it fails as "Invalid utf8mb4 character
// string"), not ending in a space ("Incorrect column name"), and compared
// without case by the server's own case table, asked here with LOWER over
// utf8mb3 (Go's tables are newer: ẞ and ß are two columns in MariaDB).
func (e *Endpoint) checkColumnNames(ctx context.Context, info *routes.TableInfo) error {
	rule := routes.ColumnRule{Server: "MySQL", Folds: "compares column names without case", Limit: "64 characters of the Basic Multilingual Plane, not ending in a space",
		Fits: func(n string) bool {
			return routes.Runes(64)(n) && !strings.HasSuffix(n, " ") && !strings.ContainsFunc(n, func(r rune) bool { return r > 0xFFFF })
		}}
	if len(info.Columns) > 1 {
		exprs := make([]string, len(info.Columns))
		args := make([]any, len(info.Columns))
		dest := make([]any, len(info.Columns))
		folded := make([]sql.NullString, len(info.Columns))
		for i, c := range info.Columns {
			exprs[i], args[i], dest[i] = "LOWER(CONVERT(? USING utf8mb3))", c.Name, &folded[i]
		}
		if err := e.db.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", "), args...).Scan(dest...); err != nil {
			return fmt.Errorf("fold the column names of %s: %w", info.Ref, err)
		}
		byName := make(map[string]string, len(folded))
		for i, c := range info.Columns {
			byName[c.Name] = folded[i].String
		}
		rule.Fold = func(n string) string { return byName[n] }
	}
	return routes.CheckColumnNames(info, rule)
}

// sideName is <prefix><table>_<run>, shortened with a hash of the table
// name to fit.
func sideName(prefix, table, runID string) string {
	return routes.SideName(prefix, table, "_"+runID, maxIdent)
}

func stageName(table, runID string) string { return sideName(stagePrefix, table, runID) }
func oldName(table, runID string) string   { return sideName(oldPrefix, table, runID) }

// stageComment marks a staging table with the destination it stands in
// for, the run, and the connection holding the run's lock: stale ones are
// found and dropped by the next run, and a refused run learns who holds
// the table.
func stageComment(dest routes.TableRef, runID string, connID int64) string {
	return fmt.Sprintf("weir:stage dest=%s run=%s conn=%d since=%s", ident(dest), runID, connID, time.Now().UTC().Format(time.RFC3339))
}

var stageCommentRE = regexp.MustCompile(`^weir:stage dest=(.+) run=(\S+) conn=(\d+) since=(\S+)(?: state=(\S+))?$`)

// stageMark is a parsed staging comment.
type stageMark struct {
	table  string // the table carrying the comment
	dest   string // ident() of the destination
	runID  string
	connID int64
	since  time.Time
	state  string // the pending state of a replace, encoded (see state.go)
}

func parseStageComment(table, comment string) (stageMark, bool) {
	m := stageCommentRE.FindStringSubmatch(comment)
	if m == nil {
		return stageMark{}, false
	}
	id, _ := strconv.ParseInt(m[3], 10, 64)
	since, _ := time.Parse(time.RFC3339, m[4])
	return stageMark{table: table, dest: m[1], runID: m[2], connID: id, since: since, state: m[5]}, true
}

// stagingTables lists the staging tables of dest, by their comments.
func (e *Endpoint) stagingTables(ctx context.Context, dest routes.TableRef) ([]stageMark, error) {
	rows, err := e.db.QueryContext(ctx, `SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE '\_weir\_stage\_%'`, dest.Schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stageMark
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		if m, ok := parseStageComment(name, comment); ok && m.dest == ident(dest) {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// Prepare locks the destination table, cleans up after dead runs, and
// creates this run's staging table with the source's columns.
func (e *Endpoint) Prepare(ctx context.Context, info *routes.TableInfo, opts routes.WriteOptions) (routes.Stage, error) {
	dest, err := e.qualify(opts.Table)
	if err != nil {
		return nil, err
	}
	if opts.RunID == "" {
		opts.RunID = routes.NewRunID()
	}
	key, err := stageKey(info, opts)
	if err != nil {
		return nil, err
	}
	if err := e.checkColumnNames(ctx, info); err != nil {
		return nil, err
	}
	lock, err := e.acquireLock(ctx, dest)
	if err != nil {
		return nil, err
	}
	st := &stage{e: e, info: info, opts: opts, dest: dest, lock: lock, key: key,
		cols:  stagedColumns(info, key),
		table: routes.TableRef{Schema: dest.Schema, Name: stageName(dest.Name, opts.RunID)}}
	if err := st.create(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prepare %s: %w", dest, err)
	}
	if err := st.checkDrift(ctx); err != nil {
		st.Abort(context.WithoutCancel(ctx))
		return nil, err
	}
	return st, nil
}

// stageKey is the staging table's primary key: the source's, or for a
// merge the merge key (it must be unique in the delta, and a destination
// created from the staging table upserts by it).
func stageKey(info *routes.TableInfo, opts routes.WriteOptions) ([]string, error) {
	switch opts.Mode {
	case routes.ModeReplace, routes.ModeAppend:
		return info.PrimaryKey, nil
	case routes.ModeMerge:
		if len(opts.Key) == 0 {
			return nil, &routes.ProbeError{Table: info.Ref.String(), Problem: "merge needs a key and the table has no primary key", Hint: "pass --primary-key col[,col]"}
		}
		for _, k := range opts.Key {
			if _, ok := info.Column(k); !ok {
				return nil, &routes.ProbeError{Table: info.Ref.String(), Column: k, Problem: "merge key column does not exist"}
			}
		}
		return opts.Key, nil
	}
	return nil, fmt.Errorf("%w: mysql destination: mode %s", routes.ErrUnsupported, opts.Mode)
}

// stage is one run's staging table.
type stage struct {
	e      *Endpoint
	info   *routes.TableInfo
	opts   routes.WriteOptions
	dest   routes.TableRef
	table  routes.TableRef // the staging table
	key    []string
	cols   []stagedColumn
	lock   *tableLock
	drift  []string     // ALTER TABLEs commitDelta runs first (drift.go)
	bounds []bound      // destination columns whose length commitDelta checks first (drift.go)
	pipes  atomic.Int64 // names the LOAD DATA readers
	done   bool
}

func (st *stage) create(ctx context.Context) error {
	if err := st.ensureDatabase(ctx); err != nil {
		return err
	}
	if err := st.dropStale(ctx); err != nil {
		return err
	}
	if err := st.rollForward(ctx); err != nil {
		return err
	}
	if err := st.checkDest(ctx); err != nil {
		return err
	}
	if st.opts.Fresh && st.e.tableExists(ctx, st.dest) {
		return routes.Occupied(st.dest, "a table of its own")
	}
	if st.e.tableExists(ctx, st.table) {
		return routes.Occupied(st.table, "the staging table of run "+st.opts.RunID)
	}
	ddl := []string{
		stateDDL(st.dest.Schema, st.e.flavor),
		fmt.Sprintf("CREATE TABLE %s (\n  %s\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s COMMENT=%s",
			ident(st.table), columnDefs(st.cols, st.key), st.e.flavor.binCollation(),
			quoteLiteral(stageComment(st.dest, st.opts.RunID, st.lock.connID))),
	}
	if err := st.exec(ctx, ddl...); err != nil {
		return err
	}
	return checkStateTable(ctx, st.lock.conn, st.dest.Schema)
}

// ensureDatabase creates the destination's database when it is missing
// (only then: CREATE DATABASE IF NOT EXISTS needs the privilege even when
// the database exists).
func (st *stage) ensureDatabase(ctx context.Context) error {
	var n int
	q := `SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`
	if err := st.lock.conn.QueryRowContext(ctx, q, st.dest.Schema).Scan(&n); err != nil || n > 0 {
		return err
	}
	err := st.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(st.dest.Schema)+" CHARACTER SET utf8mb4")
	var me *driver.MySQLError
	if errors.As(err, &me) && (me.Number == 1044 || me.Number == 1142 || me.Number == 1227) {
		// No privilege: retrying will not help, naming a database will.
		return &routes.ProbeError{Table: st.dest.String(), Problem: fmt.Sprintf("database %s does not exist and this user may not create it: %s", st.dest.Schema, me.Message),
			Hint: "name an existing database in the destination URL or with --dest-schema, or create it (or GRANT CREATE) first"}
	}
	return err
}

// exec runs statements on the lock's session.
func (st *stage) exec(ctx context.Context, qs ...string) error {
	for _, q := range qs {
		if _, err := st.lock.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", firstWords(q), err)
		}
	}
	return nil
}

// firstWords names a statement in an error without its column list.
func firstWords(q string) string {
	q = strings.SplitN(q, "(", 2)[0]
	if len(q) > 120 {
		q = q[:120] + "…"
	}
	return strings.TrimSpace(q)
}

// dropStale drops what dead runs left for this destination: staging tables
// (found by their comment) and the replaced table of a replace that died
// before dropping it — named by the run id in the destination's own
// comment, which a replace clears only after that drop (commitReplace). A
// table is never dropped for its name alone: a user's _weir_old_<table>_x
// stays. We hold the lock, so those runs are gone.
func (st *stage) dropStale(ctx context.Context) error {
	stale, err := st.e.stagingTables(ctx, st.dest)
	if err != nil {
		return fmt.Errorf("list staging tables: %w", err)
	}
	var names []string
	for _, s := range stale {
		names = append(names, s.table)
	}
	if m, ok := st.e.destMark(ctx, st.dest); ok {
		names = append(names, oldName(st.dest.Name, m.runID))
	}
	for _, name := range names {
		if err := st.exec(ctx, "DROP TABLE IF EXISTS "+ident(routes.TableRef{Schema: st.dest.Schema, Name: name})); err != nil {
			return fmt.Errorf("drop stale %s: %w", name, err)
		}
	}
	return nil
}

// checkDest refuses, before a row moves, an append or merge into a table
// that cannot take it in one transaction with the state.
func (st *stage) checkDest(ctx context.Context) error {
	if st.opts.Mode == routes.ModeReplace {
		return nil
	}
	var engine string
	err := st.lock.conn.QueryRowContext(ctx, `SELECT COALESCE(ENGINE, '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, st.dest.Schema, st.dest.Name).Scan(&engine)
	if err != nil {
		return nil // no destination yet: Commit creates it
	}
	if !strings.EqualFold(engine, "InnoDB") {
		return routes.BadInput("%s uses engine %q: %s needs InnoDB, so the rows and _weir_state commit in one transaction", st.dest, engine, st.opts.Mode)
	}
	if st.opts.Mode == routes.ModeMerge {
		return st.checkUniqueKey(ctx)
	}
	return nil
}

// checkUniqueKey: ON DUPLICATE KEY UPDATE upserts by the table's unique
// keys, so the merge key must be one of them.
func (st *stage) checkUniqueKey(ctx context.Context) error {
	rows, err := st.lock.conn.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND NON_UNIQUE = 0`, st.dest.Schema, st.dest.Name)
	if err != nil {
		return fmt.Errorf("unique keys of %s: %w", st.dest, err)
	}
	defer rows.Close()
	indexes := map[string][]string{}
	for rows.Next() {
		var index, col string
		if err := rows.Scan(&index, &col); err != nil {
			return err
		}
		indexes[index] = append(indexes[index], col)
	}
	want := slices.Sorted(slices.Values(st.mergeKey()))
	for _, cols := range indexes {
		if slices.Equal(slices.Sorted(slices.Values(cols)), want) {
			return rows.Err()
		}
	}
	return routes.BadInput("merge into %s: it has no primary key or unique index on (%s); add one so rows upsert by it", st.dest, strings.Join(want, ", "))
}

func (st *stage) mergeKey() []string {
	if len(st.opts.Key) > 0 {
		return st.opts.Key
	}
	return st.key
}

// Abort drops the staging table and frees the lock; the destination is
// untouched. It is idempotent.
func (st *stage) Abort(ctx context.Context) error {
	if st.done {
		return nil
	}
	st.done = true
	defer st.lock.release(ctx)
	if err := st.exec(ctx, "DROP TABLE IF EXISTS "+ident(st.table)); err != nil {
		return fmt.Errorf("drop staging table %s: %w", st.table, err)
	}
	return nil
}
