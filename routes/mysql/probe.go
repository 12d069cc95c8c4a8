package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/weirhq/weir/routes"
)

const columnsSQL = `
SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES'
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

const primaryKeySQL = `
SELECT COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY'
ORDER BY SEQ_IN_INDEX`

// estimateSQL: InnoDB's TABLE_ROWS is a sampled estimate (0 for a table
// never analyzed); then guess from the data size, 64 bytes a row, so a
// fresh big table still gets many pipes.
const estimateSQL = `
SELECT CASE WHEN COALESCE(TABLE_ROWS, 0) > 0 THEN TABLE_ROWS ELSE COALESCE(DATA_LENGTH, 0) DIV 64 END
FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`

// jsonChecksSQL finds MariaDB's JSON columns: JSON is an alias of LONGTEXT
// there, with a json_valid(`col`) check constraint.
const jsonChecksSQL = `
SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ? AND CHECK_CLAUSE LIKE 'json\_valid(%'`

// Probe reads information_schema: columns and their types, NOT NULL,
// primary key and the row estimate. Column.NativeType is COLUMN_TYPE
// ("decimal(65,30)", "bigint(20) unsigned"), or "json" for a MariaDB JSON
// column.
func (e *Endpoint) Probe(ctx context.Context, table routes.TableRef) (*routes.TableInfo, error) {
	table, err := e.qualify(table)
	if err != nil {
		return nil, err
	}
	info := &routes.TableInfo{Scheme: Scheme, Ref: table, SourceID: e.sourceID(table)}
	if err := e.db.QueryRowContext(ctx, estimateSQL, table.Schema, table.Name).Scan(&info.RowEstimate); err != nil {
		return nil, probeErr(table, err)
	}
	if info.Columns, err = e.probeColumns(ctx, table); err != nil {
		return nil, err
	}
	if info.PrimaryKey, err = e.strings(ctx, primaryKeySQL, table.Schema, table.Name); err != nil {
		return nil, probeErr(table, err)
	}
	return info, nil
}

func (e *Endpoint) probeColumns(ctx context.Context, table routes.TableRef) ([]routes.Column, error) {
	rows, err := e.db.QueryContext(ctx, columnsSQL, table.Schema, table.Name)
	if err != nil {
		return nil, probeErr(table, err)
	}
	defer rows.Close()
	var cols []routes.Column
	for rows.Next() {
		var c routes.Column
		if err := rows.Scan(&c.Name, &c.NativeType, &c.Nullable); err != nil {
			return nil, probeErr(table, err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, probeErr(table, err)
	}
	if len(cols) == 0 {
		return nil, &routes.ProbeError{Table: table.String(), Problem: "table has no columns"}
	}
	if err := e.markJSON(ctx, table, cols); err != nil {
		return nil, err
	}
	for i := range cols {
		_, cols[i].Type = columnKind(parseColumnType(cols[i].NativeType), e.opts)
	}
	return cols, nil
}

// markJSON sets NativeType "json" on MariaDB's JSON columns.
func (e *Endpoint) markJSON(ctx context.Context, table routes.TableRef, cols []routes.Column) error {
	if !e.flavor.mariadb {
		return nil
	}
	checks, err := e.strings(ctx, jsonChecksSQL, table.Schema, table.Name)
	if err != nil {
		return probeErr(table, err)
	}
	for _, check := range checks {
		for i, c := range cols {
			if check == "json_valid("+quoteIdent(c.Name)+")" && strings.HasPrefix(c.NativeType, "longtext") {
				cols[i].NativeType = "json"
			}
		}
	}
	return nil
}

// strings runs a query returning one text column.
func (e *Endpoint) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := e.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// probeErr turns a missing table into bad input that says what to check.
func probeErr(table routes.TableRef, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return &routes.ProbeError{Table: table.String(), Problem: "no such table", Hint: "check the database and table name (names may be case-sensitive on this server) and that the user may SELECT it", Err: routes.ErrNotFound}
	}
	return fmt.Errorf("probe %s: %w", table, err)
}

// selectList renders the columns to read, in table order, and the columns
// themselves.
func selectList(info *routes.TableInfo, only []string) (string, []routes.Column) {
	var exprs []string
	var cols []routes.Column
	for _, c := range info.Columns {
		if only != nil && !contains(only, c.Name) {
			continue
		}
		cols = append(cols, c)
		exprs = append(exprs, readExpr(c.Name, parseColumnType(c.NativeType)))
	}
	return strings.Join(exprs, ", "), cols
}

// ListTables lists the base tables of a database (the URL's when schema is
// empty), sorted, without weir's own (_weir_state, staging tables).
func (e *Endpoint) ListTables(ctx context.Context, schema string) ([]routes.TableRef, error) {
	if schema == "" {
		schema = e.dbName
	}
	names, err := e.strings(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME NOT LIKE '\_weir\_%'
ORDER BY TABLE_NAME`, schema)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", schema, err)
	}
	out := make([]routes.TableRef, len(names))
	for i, n := range names {
		out[i] = routes.TableRef{Schema: schema, Name: n}
	}
	return out, nil
}
