package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirhq/weir/routes"
)

func (e *Endpoint) tableExists(ctx context.Context, t routes.TableRef) (bool, error) {
	q := fmt.Sprintf("SELECT toString(count()) FROM system.tables WHERE database = %s AND name = %s",
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return false, err
	}
	return row[0] != "0", nil
}

func (e *Endpoint) dropTable(ctx context.Context, t routes.TableRef) error {
	return e.conn.exec(ctx, "DROP TABLE IF EXISTS "+ident(t)+e.opts.onCluster())
}

// describe lists a table's insertable columns (no MATERIALIZED or ALIAS)
// in order: name and type.
func (e *Endpoint) describe(ctx context.Context, t routes.TableRef) ([][2]string, error) {
	rows, err := queryStrings(ctx, e.conn, "DESCRIBE TABLE "+ident(t))
	if err != nil {
		return nil, err
	}
	var cols [][2]string
	for _, r := range rows {
		if len(r) > 2 && (r[2] == "MATERIALIZED" || r[2] == "ALIAS") {
			continue
		}
		cols = append(cols, [2]string{r[0], r[1]})
	}
	return cols, nil
}

func (e *Endpoint) columnTypes(ctx context.Context, t routes.TableRef) (map[string]string, error) {
	cols, err := e.describe(ctx, t)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(cols))
	for _, c := range cols {
		m[c[0]] = c[1]
	}
	return m, nil
}

// count returns count() of a table, 0 when it does not exist.
func (e *Endpoint) count(ctx context.Context, t routes.TableRef) (int64, error) {
	ok, err := e.tableExists(ctx, t)
	if err != nil || !ok {
		return 0, err
	}
	row, _, err := queryRow(ctx, e.conn, "SELECT toString(count()) FROM "+ident(t))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(row[0], 10, 64)
}

// databaseEngine returns system.databases.engine, e.g. Ordinary or Atomic.
func (e *Endpoint) databaseEngine(ctx context.Context, db string) (string, error) {
	row, ok, err := queryRow(ctx, e.conn, "SELECT engine FROM system.databases WHERE name = "+quoteLiteral(db))
	if err != nil || !ok {
		return "", err
	}
	return row[0], nil
}

// splitKey splits a sorting_key expression into its plain column names
// ("id, ts" or "(id, ts)"); expressions are dropped.
func splitKey(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = s[1 : len(s)-1]
	}
	var out []string
	for _, p := range splitArgs(s) {
		p = strings.Trim(p, "`")
		if p != "" && !strings.ContainsAny(p, "()+-*/ ") {
			out = append(out, p)
		}
	}
	return out
}

func sameColumns(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
