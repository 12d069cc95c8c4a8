// Package cdctest gives CDC tests a database of their own on the test
// servers (a PostgreSQL schema or a MySQL database with a unique name,
// dropped in Cleanup) and an ordered hash of a table computed in SQL, so a
// source and a destination on different servers compare equal row by row.
package cdctest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"
	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
	"github.com/weirhq/weir/routes/routestest"
)

// DB is one test's schema (PostgreSQL), database (MySQL, ClickHouse:
// clickhouse.go), namespace in a catalog of its own (Iceberg: iceberg.go)
// or directory of Parquet files (file: no SQL, read through the route).
type DB struct {
	Kind   string // "postgres", "mysql", "clickhouse" or "iceberg"
	URL    string
	Schema string
	pg     *pgx.Conn
	my     *sql.Conn
	myDB   *sql.DB                 // my's pool, closed with it (an open pool keeps its connection)
	ch     *clickhousetest.Fixture // clickhouse.go
}

// URLWith returns URL with extra query options ("lease=2s"): the URL may
// already have a query (the ClickHouse fixture's names its http_port).
func (d *DB) URLWith(opts string) string {
	if strings.Contains(d.URL, "?") {
		return d.URL + "&" + opts
	}
	return d.URL + "?" + opts
}

// Open creates a uniquely named schema, database or namespace of the kind
// ("postgres", "mysql", "clickhouse", "iceberg", "file") and drops it when
// the test ends.
func Open(t *testing.T, ctx context.Context, kind string) *DB {
	t.Helper()
	d := &DB{Kind: kind, Schema: routestest.Name("weir_t")}
	var err error
	switch kind {
	case "postgres":
		d.URL = routestest.ServerURL(t, "WEIR_TEST_PG")
		if d.pg, err = pgx.Connect(ctx, d.URL); err != nil {
			t.Fatal(err)
		}
	case "mysql":
		d.URL = routestest.ServerURL(t, "WEIR_TEST_MYSQL")
		d.myDB, d.my = mysqlConn(t, ctx, d.URL)
	case "clickhouse":
		d.openClickHouse(t)
		return d
	case "iceberg":
		d.openIceberg(t)
		return d // a namespace is created by the first table
	case "file": // Parquet files in the test's temp dir
		d.URL = "file://" + t.TempDir()
		return d
	default:
		t.Fatalf("cdctest: unknown kind %q", kind)
	}
	t.Cleanup(d.drop)
	d.Exec(t, ctx, d.createSQL())
	return d
}

func mysqlConn(t *testing.T, ctx context.Context, raw string) (*sql.DB, *sql.Conn) {
	u, err := routes.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	nu := u.URL()
	dsn := fmt.Sprintf("%s@tcp(%s)/?multiStatements=true&time_zone=%%27%%2B00%%3A00%%27", nu.User.String(), nu.Host)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, c
}

func (d *DB) createSQL() string {
	if d.Kind == "postgres" {
		return "CREATE SCHEMA " + d.Schema
	}
	return "CREATE DATABASE " + d.Schema + " CHARACTER SET utf8mb4"
}

func (d *DB) drop() {
	ctx, cancel := routestest.CleanupContext()
	defer cancel()
	if d.pg != nil {
		d.pg.Exec(ctx, "DROP SCHEMA IF EXISTS "+d.Schema+" CASCADE")
		d.pg.Close(ctx)
	}
	if d.my != nil {
		d.my.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d.Schema)
		d.my.Close()
		d.myDB.Close()
	}
}

// Ref names a table in the test's schema.
func (d *DB) Ref(name string) routes.TableRef { return routes.TableRef{Schema: d.Schema, Name: name} }

// Table quotes a table of the test's schema for SQL.
func (d *DB) Table(name string) string {
	if d.Kind == "postgres" {
		return pgx.Identifier{d.Schema, name}.Sanitize()
	}
	return "`" + d.Schema + "`.`" + name + "`"
}

// Exec runs statements; the test fails on an error.
func (d *DB) Exec(t testing.TB, ctx context.Context, q string, args ...any) {
	t.Helper()
	if d.ch != nil {
		d.chExec(t, ctx, q, args)
		return
	}
	d.needSQL(t)
	var err error
	if d.pg != nil {
		_, err = d.pg.Exec(ctx, q, args...)
	} else {
		_, err = d.my.ExecContext(ctx, q, args...)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// Query returns one text value.
func (d *DB) Query(t testing.TB, ctx context.Context, q string, args ...any) string {
	t.Helper()
	if d.ch != nil {
		return d.chQuery(t, ctx, q, args)
	}
	d.needSQL(t)
	var s sql.NullString
	var err error
	if d.pg != nil {
		err = d.pg.QueryRow(ctx, q, args...).Scan(&s)
	} else {
		err = d.my.QueryRowContext(ctx, q, args...).Scan(&s)
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

// Hash is "count:md5" over the rows of table ordered by orderBy: the md5 of
// the comma-joined md5s of each row's columns as text ('|'-separated, NULL
// as \N). exprs are SQL expressions giving each column's text (a column
// name is cast to text); pick expressions that render equal values the
// same on both servers.
func (d *DB) Hash(t testing.TB, ctx context.Context, table string, exprs []string, orderBy string) string {
	t.Helper()
	if d.ch != nil {
		return d.chHash(t, ctx, table, exprs, orderBy)
	}
	if d.Kind == "iceberg" { // exprs are column names: no SQL runs there
		return d.RowsHash(t, ctx, table, exprs)
	}
	parts := make([]string, len(exprs))
	for i, e := range exprs {
		if d.Kind == "postgres" {
			parts[i] = fmt.Sprintf(`coalesce((%s)::text, '\N')`, e)
		} else {
			parts[i] = fmt.Sprintf(`COALESCE(CAST(%s AS CHAR), '\\N')`, e)
		}
	}
	row := "concat_ws('|', " + strings.Join(parts, ", ") + ")"
	q := fmt.Sprintf(`SELECT concat(count(*), ':', coalesce(md5(string_agg(md5(%s), ',' ORDER BY %s)), '')) FROM %s t`, row, orderBy, d.Table(table))
	if d.Kind == "mysql" {
		d.Exec(t, ctx, "SET SESSION group_concat_max_len = 1073741824")
		q = fmt.Sprintf(`SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(MD5(%s) ORDER BY %s SEPARATOR ',')), '')) FROM %s t`, row, orderBy, d.Table(table))
	}
	return d.Query(t, ctx, q)
}

// LogOps returns a changelog table's ops in log order (_weir_lsn,
// _weir_ord) as "op key", key being the text of keyExpr (empty for a
// truncate); baseline rows are left out unless withBaseline.
func (d *DB) LogOps(t testing.TB, ctx context.Context, table, keyExpr string, withBaseline bool) []string {
	t.Helper()
	if d.ch != nil {
		return d.chLogOps(t, ctx, table, keyExpr, withBaseline)
	}
	if d.Kind == "iceberg" { // keyExpr is a column name
		return d.icebergLogOps(t, ctx, table, keyExpr, withBaseline)
	}
	where := "WHERE _weir_op <> 'B'"
	if withBaseline {
		where = ""
	}
	q := fmt.Sprintf(`SELECT string_agg(_weir_op || ' ' || coalesce((%s)::text, ''), ',' ORDER BY _weir_lsn, _weir_ord, (%[1]s)::text) FROM %s %s`, keyExpr, d.Table(table), where)
	if d.Kind == "mysql" {
		d.Exec(t, ctx, "SET SESSION group_concat_max_len = 1073741824")
		q = fmt.Sprintf(`SELECT GROUP_CONCAT(CONCAT(_weir_op, ' ', COALESCE(CAST(%s AS CHAR), '')) ORDER BY _weir_lsn, _weir_ord, CAST(%[1]s AS CHAR) SEPARATOR ',') FROM %s %s`, keyExpr, d.Table(table), where)
	}
	s := d.Query(t, ctx, q)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// CountSQL is a query for how many catalog entries of the test's schema
// match: its tables (table and column ""), one table (column ""), or one
// column of a table, as text, in the kind's own catalog.
func (d *DB) CountSQL(table, column string) string {
	count, from, schemaCol, tableCol, columnCol := "count(*)", "information_schema.tables", "table_schema", "table_name", "column_name"
	switch d.Kind {
	case "clickhouse":
		count, from, schemaCol, tableCol, columnCol = "toString(count())", "system.tables", "database", "name", "name"
		if column != "" {
			from, tableCol = "system.columns", "table"
		}
	default:
		if column != "" {
			from = "information_schema.columns"
		}
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s = '%s'", count, from, schemaCol, d.Schema)
	if table != "" {
		q += fmt.Sprintf(" AND %s = '%s'", tableCol, table)
	}
	if column != "" {
		q += fmt.Sprintf(" AND %s = '%s'", columnCol, column)
	}
	return q
}
