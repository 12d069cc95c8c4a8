package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
)

// Schema drift between runs (append, merge): the staging table's columns
// (this run's probe) against the existing destination's. A widening the
// destination can take — decimal precision or scale, varchar length,
// integer width, a new nullable column — is an ALTER TABLE run before the
// data's transaction: MySQL DDL commits on its own, and a widened column
// holds every value it held before, so a run that fails after it leaves a
// destination that is wider, not different. A new NOT NULL column is
// refused before a row moves. Never an implicit cast that rounds (MySQL
// rounds a decimal to the column's scale with only a note).

type myColumn struct {
	name, typ, collation string // typ: COLUMN_TYPE, e.g. decimal(12,4), varchar(20), int(11) unsigned
	nullable             bool
}

func tableColumns(ctx context.Context, q querier, t routes.TableRef) ([]myColumn, error) {
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, COALESCE(COLLATION_NAME, ''), IS_NULLABLE = 'YES'
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.Schema, t.Name)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t, err)
	}
	defer rows.Close()
	var out []myColumn
	for rows.Next() {
		var c myColumn
		if err := rows.Scan(&c.name, &c.typ, &c.collation, &c.nullable); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// checkDrift plans, under the lock, what an append or merge into an
// existing destination must change first (run by commitDelta).
func (st *stage) checkDrift(ctx context.Context) error {
	if st.opts.Mode == routes.ModeReplace || !st.e.tableExists(ctx, st.dest) {
		return nil
	}
	staged, err := tableColumns(ctx, st.lock.conn, st.table)
	if err != nil {
		return err
	}
	have, err := tableColumns(ctx, st.lock.conn, st.dest)
	if err != nil {
		return err
	}
	st.drift, err = driftSQL(st.dest, staged, have)
	return err
}

// evolveReplica widens a CDC replica to its source's columns as this run
// probed them, before the apply transaction (DDL commits on its own; a
// widening is safe to leave), so a change made after the ALTER on the
// source lands exact: the apply's temp tables take the replica's types.
func evolveReplica(ctx context.Context, conn *sql.Conn, t *cdc.Table) error {
	have, err := tableColumns(ctx, conn, t.Dest)
	if err != nil {
		return err
	}
	key := t.KeyNames()
	var staged []myColumn
	for _, c := range stagedColumns(t.Info, key) {
		staged = append(staged, myColumn{name: c.Name, typ: strings.ToLower(c.ddl), nullable: c.Nullable && !contains(key, c.Name)})
	}
	alters, err := driftSQL(t.Dest, staged, have)
	if err != nil {
		return err
	}
	for _, q := range alters {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("evolve replica %s to the source's columns: %s: %w", t.Dest, q, err)
		}
	}
	return nil
}

// driftSQL compares the source's columns (staged) with dest's (have).
func driftSQL(dest routes.TableRef, staged, have []myColumn) ([]string, error) {
	byName := map[string]myColumn{}
	for _, c := range have {
		byName[strings.ToLower(c.name)] = c
	}
	var alters []string
	for _, s := range staged {
		d, ok := byName[strings.ToLower(s.name)]
		if !ok {
			if !s.nullable {
				return nil, &routes.ProbeError{Table: dest.String(), Column: s.name,
					Problem: "the source has this NOT NULL column and the destination does not",
					Hint:    "add it to the destination (with a default), or run --mode replace"}
			}
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s%s NULL", ident(dest), quoteIdent(s.name), s.typ, collate(s)))
			continue
		}
		if to, ok := widenMyType(d.typ, s.typ); ok {
			null := " NULL"
			if !d.nullable {
				null = " NOT NULL"
			}
			alters = append(alters, fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s%s%s", ident(dest), quoteIdent(d.name), to, collate(d), null))
		}
	}
	return alters, nil
}

func collate(c myColumn) string {
	if c.collation == "" {
		return ""
	}
	return " COLLATE " + c.collation
}

var (
	myDecimalRE = regexp.MustCompile(`^decimal\((\d+),(\d+)\)( unsigned)?$`)
	myVarcharRE = regexp.MustCompile(`^(varchar|varbinary)\((\d+)\)$`)
	myIntRE     = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|bigint)(\(\d+\))?( unsigned)?$`)
	myIntRank   = map[string]int{"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "bigint": 5}
)

// widenMyType is the type dest must become to hold every value of src
// exactly, when it cannot now; ok is false when it can (or the two are not
// of one family).
func widenMyType(dest, src string) (string, bool) {
	if dest == src {
		return "", false
	}
	if dm, sm := myDecimalRE.FindStringSubmatch(dest), myDecimalRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[3] == sm[3] {
		dp, ds, sp, ss := atoi(dm[1]), atoi(dm[2]), atoi(sm[1]), atoi(sm[2])
		if dp-ds >= sp-ss && ds >= ss {
			return "", false
		}
		scale := max(ds, ss)
		return fmt.Sprintf("decimal(%d,%d)%s", max(dp-ds, sp-ss)+scale, scale, dm[3]), true
	}
	if dm, sm := myVarcharRE.FindStringSubmatch(dest), myVarcharRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[1] == sm[1] {
		return src, atoi(sm[2]) > atoi(dm[2])
	}
	if dm, sm := myIntRE.FindStringSubmatch(dest), myIntRE.FindStringSubmatch(src); dm != nil && sm != nil && dm[3] == sm[3] {
		return sm[1] + sm[3], myIntRank[sm[1]] > myIntRank[dm[1]]
	}
	return "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
