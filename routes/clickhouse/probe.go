package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/routes"
)

// Probe reads system.tables and DESCRIBE: columns in order (MATERIALIZED
// and ALIAS columns are not copied), the sorting key as the primary key
// (ClickHouse does not enforce uniqueness), and active parts' rows as the
// estimate.
func (e *Endpoint) Probe(ctx context.Context, table routes.TableRef) (*routes.TableInfo, error) {
	t := e.ref(table)
	q := fmt.Sprintf("SELECT engine, sorting_key FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	meta, ok, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", t, err)
	}
	if !ok {
		return nil, &routes.ProbeError{Table: t.String(), Problem: "no such table", Hint: "check the database and table name (database.table)", Err: routes.ErrNotFound}
	}
	info := &routes.TableInfo{Scheme: e.url.Scheme(), Ref: t, SourceID: e.url.Identity() + "#" + t.String()}
	if info.Columns, err = e.probeColumns(ctx, t); err != nil {
		return nil, err
	}
	for _, k := range splitKey(meta[1]) {
		if _, ok := info.Column(k); ok {
			info.PrimaryKey = append(info.PrimaryKey, k)
		}
	}
	if info.RowEstimate, err = e.estimate(ctx, t, meta[0]); err != nil {
		return nil, fmt.Errorf("probe %s: row estimate: %w", t, err)
	}
	return info, nil
}

func (e *Endpoint) probeColumns(ctx context.Context, t routes.TableRef) ([]routes.Column, error) {
	desc, err := e.describe(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", t, err)
	}
	cols := make([]routes.Column, 0, len(desc))
	for _, d := range desc {
		c, err := sourceColumn(d[0], d[1])
		if err != nil {
			return nil, &routes.ProbeError{Table: t.String(), Column: d[0], Problem: "unreadable type " + d[1], Err: err}
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, &routes.ProbeError{Table: t.String(), Problem: "table has no columns"}
	}
	return cols, nil
}

// estimate sums the rows of active parts (MergeTree family); other
// engines are counted.
func (e *Endpoint) estimate(ctx context.Context, t routes.TableRef, engine string) (int64, error) {
	if !strings.Contains(engine, "MergeTree") {
		return e.count(ctx, t)
	}
	q := fmt.Sprintf("SELECT toString(sum(rows)) FROM system.parts WHERE database = %s AND table = %s AND active",
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(row[0], 10, 64)
}

// MaxCursor returns the highest value of the cursor column, text-encoded
// as routes.CursorSource asks (times in UTC).
func (e *Endpoint) MaxCursor(ctx context.Context, info *routes.TableInfo, cursor string) (string, bool, error) {
	c, ok := info.Column(cursor)
	if !ok {
		return "", false, &routes.ProbeError{Table: info.Ref.String(), Column: cursor, Problem: "cursor column does not exist", Hint: "name an existing column with --cursor"}
	}
	expr := "toString(max(" + quoteIdent(cursor) + "))"
	if isDateTime(c.NativeType) {
		expr = "toString(max(" + quoteIdent(cursor) + "), 'UTC')"
	}
	// max of a Nullable column is Nullable; the row reader takes String (an
	// empty table is told by the count).
	expr = "ifNull(" + expr + ", '')"
	q := fmt.Sprintf("SELECT %s, toString(count(%s)) FROM %s", expr, quoteIdent(cursor), ident(info.Ref))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return "", false, fmt.Errorf("max %s of %s: %w", cursor, info.Ref, err)
	}
	return row[0], row[1] != "0", nil
}

// NullCount counts the rows whose column is NULL.
func (e *Endpoint) NullCount(ctx context.Context, info *routes.TableInfo, column string) (int64, error) {
	q := fmt.Sprintf("SELECT toString(count()) FROM %s WHERE isNull(%s)", ident(info.Ref), quoteIdent(column))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return 0, fmt.Errorf("NULLs of %s.%s: %w", info.Ref, column, err)
	}
	return strconv.ParseInt(row[0], 10, 64)
}

func isDateTime(native string) bool {
	return strings.Contains(native, "DateTime")
}

// cursorLiteral renders a text-encoded watermark as a literal of the
// cursor column's type (ClickHouse compares no numbers with strings).
func cursorLiteral(c routes.Column, v string) string {
	t, err := parseType(c.NativeType)
	if err != nil {
		return quoteLiteral(v)
	}
	for t.Name == "Nullable" || t.Name == "LowCardinality" {
		t = *t.Elem
	}
	switch t.Name {
	case "String", "FixedString":
		return quoteLiteral(v)
	case "DateTime":
		return fmt.Sprintf("CAST(%s AS DateTime('UTC'))", quoteLiteral(v))
	case "DateTime64":
		p, _ := t.intArg(0)
		return fmt.Sprintf("CAST(%s AS DateTime64(%d, 'UTC'))", quoteLiteral(v), p)
	}
	return fmt.Sprintf("CAST(%s AS %s)", quoteLiteral(v), t.raw)
}

var _ routes.CursorSource = (*Endpoint)(nil)

var _ routes.TableLister = (*Endpoint)(nil)

// ListTables lists a database's tables (not views, not weir's own).
func (e *Endpoint) ListTables(ctx context.Context, schema string) ([]routes.TableRef, error) {
	db := e.ref(routes.TableRef{Schema: schema}).Schema
	q := fmt.Sprintf(`SELECT name FROM system.tables WHERE database = %s AND NOT startsWith(name, '_weir_')
  AND engine NOT LIKE '%%View' ORDER BY name`, quoteLiteral(db))
	rows, err := queryStrings(ctx, e.conn, q)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", db, err)
	}
	out := make([]routes.TableRef, len(rows))
	for i, r := range rows {
		out[i] = routes.TableRef{Schema: db, Name: r[0]}
	}
	return out, nil
}
