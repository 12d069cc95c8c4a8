package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/routes"
)

// firstNormalOID: types below it are built in; the codec knows only those.
const firstNormalOID = 16384

// columnsSQL lists a table's columns with domains resolved to their base
// type, and says whether the type (or an array's element) is built in.
const columnsSQL = `
WITH c AS (
  SELECT a.attnum, a.attname, a.attnotnull,
         CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END AS typid,
         CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END AS typmod
  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
  WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped)
SELECT c.attname, c.attnotnull, format_type(c.typid, c.typmod),
       t.typcategory = 'A', coalesce(nullif(t.typelem, 0), c.typid)::int8 < $2
FROM c JOIN pg_type t ON t.oid = c.typid
ORDER BY c.attnum`

const primaryKeySQL = `
SELECT a.attname FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = $1::regclass AND i.indisprimary
ORDER BY array_position(i.indkey::int2[], a.attnum)`

// Probe reads the catalog: columns, types, NOT NULL, primary key, estimate.
func (e *Endpoint) Probe(ctx context.Context, table routes.TableRef) (*routes.TableInfo, error) {
	cols, err := e.probeColumns(ctx, table)
	if err != nil {
		return nil, err
	}
	info := &routes.TableInfo{Scheme: Scheme, Ref: e.canonical(ctx, table), SourceID: e.sourceID(table)}
	info.Columns = cols
	if info.PrimaryKey, err = e.primaryKey(ctx, table); err != nil {
		return nil, err
	}
	err = e.pool.QueryRow(ctx, estimateSQL, ident(table)).Scan(&info.RowEstimate)
	if err != nil {
		return nil, fmt.Errorf("probe %s: row estimate: %w", table, err)
	}
	return info, nil
}

func (e *Endpoint) sourceID(t routes.TableRef) string {
	return e.url.Identity() + "#" + t.String()
}

// canonical fills in the schema of an unqualified name from the search path.
func (e *Endpoint) canonical(ctx context.Context, t routes.TableRef) routes.TableRef {
	if t.Schema != "" {
		return t
	}
	var schema string
	err := e.pool.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::regclass`, ident(t)).Scan(&schema)
	if err == nil {
		t.Schema = schema
	}
	return t
}

func (e *Endpoint) probeColumns(ctx context.Context, table routes.TableRef) ([]routes.Column, error) {
	rows, err := e.pool.Query(ctx, columnsSQL, ident(table), firstNormalOID)
	if err != nil {
		return nil, probeErr(table, err)
	}
	var cols []routes.Column
	for rows.Next() {
		var name, typ string
		var notNull, isArray, builtin bool
		if err := rows.Scan(&name, &notNull, &typ, &isArray, &builtin); err != nil {
			return nil, probeErr(table, err)
		}
		cols = append(cols, newColumn(name, typ, !notNull, isArray, builtin))
	}
	if err := rows.Err(); err != nil {
		return nil, probeErr(table, err)
	}
	if len(cols) == 0 {
		return nil, &routes.ProbeError{Table: table.String(), Problem: "table has no columns"}
	}
	return cols, nil
}

// newColumn maps a catalog column to Arrow. A type the codec does not know
// keeps its name in NativeType but is read as text (see wireType), so every
// table reads.
func newColumn(name, typ string, nullable, isArray, builtin bool) routes.Column {
	c := routes.Column{Name: name, Nullable: nullable, NativeType: typ}
	if t, ok := arrowType(typ); ok && builtin {
		c.Type = t
		return c
	}
	if !builtin && !isArray {
		c.NativeType = "\"" + strings.ReplaceAll(typ, "\"", "") + "\"" // never mistaken for a built-in name
	}
	c.Type, _ = arrowType(wireType(c))
	return c
}

// wireType is the type a column travels as: its own when the codec knows
// it, else text (or text[]).
func wireType(c routes.Column) string {
	if _, ok := arrowType(c.NativeType); ok {
		return c.NativeType
	}
	if strings.HasSuffix(c.NativeType, "[]") {
		return "text[]"
	}
	return "text"
}

// stageType is a column's type in a Postgres staging table.
func stageType(c routes.Column, sourceScheme string) string {
	if sourceScheme == Scheme {
		return wireType(c)
	}
	return pgType(c, sourceScheme)
}

// wireColumns are the columns as the codec sees them on the wire.
func wireColumns(cols []routes.Column) []routes.Column {
	out := make([]routes.Column, len(cols))
	for i, c := range cols {
		c.NativeType = wireType(c)
		out[i] = c
	}
	return out
}

func (e *Endpoint) primaryKey(ctx context.Context, table routes.TableRef) ([]string, error) {
	rows, err := e.pool.Query(ctx, primaryKeySQL, ident(table))
	if err != nil {
		return nil, probeErr(table, err)
	}
	pk, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, probeErr(table, err)
	}
	return pk, nil
}

// probeErr turns "relation does not exist" and friends into bad input.
func probeErr(table routes.TableRef, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42P01", "3F000":
			return &routes.ProbeError{Table: table.String(), Problem: "no such table", Hint: "check the schema and table name; names are case-sensitive when quoted", Err: routes.ErrNotFound}
		case "42501":
			return &routes.ProbeError{Table: table.String(), Problem: "permission denied", Hint: "grant SELECT on the table and USAGE on its schema", Err: err}
		case "42602", "42601":
			return &routes.ProbeError{Table: table.String(), Problem: "invalid table name", Hint: "use schema.table; quote names with dots", Err: err}
		}
	}
	return fmt.Errorf("probe %s: %w", table, err)
}

// selectList renders the columns to read, casting what the codec reads as text.
func selectList(info *routes.TableInfo, only []string) (string, []routes.Column) {
	var exprs []string
	var cols []routes.Column
	for _, c := range info.Columns {
		if only != nil && !contains(only, c.Name) {
			continue
		}
		cols = append(cols, c)
		expr, ok := castExpr(c)
		if !ok {
			expr = quoteIdent(c.Name)
		}
		exprs = append(exprs, expr)
	}
	return strings.Join(exprs, ", "), cols
}

// castExpr reads a column the codec does not know as its output text (the
// form COPY's text format would print; ::text differs for inet and cidr).
// A NULL stays NULL (format would print an empty string), tested with num_nulls: IS
// NULL is also true of a composite whose fields are all NULL, ROW(NULL,
// NULL), a value whose text is "(,)".
func castExpr(c routes.Column) (string, bool) {
	switch w := wireType(c); {
	case w == c.NativeType:
		return "", false
	case w == "text[]":
		return quoteIdent(c.Name) + "::text[]", true
	}
	q := quoteIdent(c.Name)
	return fmt.Sprintf("CASE WHEN num_nulls(%s) = 1 THEN NULL ELSE format('%%s', %s) END", q, q), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// estimateSQL: reltuples is -1 or 0 until the table is analyzed; then guess
// from its size (64 bytes a row) so a fresh big table still gets many pipes.
const estimateSQL = `SELECT CASE WHEN reltuples > 0 THEN reltuples::int8 ELSE pg_relation_size(oid) / 64 END FROM pg_class WHERE oid = $1::regclass`
