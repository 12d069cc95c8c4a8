package cdctest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weirhq/weir/routes/clickhouse/clickhousetest"
)

// ClickHouse as a CDC destination: a database of its own on the
// WEIR_TEST_CLICKHOUSE server (the route's test fixture, which talks HTTP
// and drops the database when the test ends). weir writes through the
// native URL.

func (d *DB) openClickHouse(t *testing.T) {
	d.ch = clickhousetest.New(t)
	d.Schema, d.URL = d.ch.DB, d.ch.URL()
}

func (d *DB) chExec(t testing.TB, ctx context.Context, q string, args []any) {
	t.Helper()
	if len(args) > 0 {
		t.Fatalf("cdctest: clickhouse queries take no arguments: %s", q)
	}
	d.ch.Exec(t, ctx, q)
}

func (d *DB) chQuery(t testing.TB, ctx context.Context, q string, args []any) string {
	t.Helper()
	if len(args) > 0 {
		t.Fatalf("cdctest: clickhouse queries take no arguments: %s", q)
	}
	rows := d.ch.Query(t, ctx, q)
	if len(rows) == 0 || len(rows[0]) == 0 || rows[0][0] == nil {
		return ""
	}
	return *rows[0][0]
}

// Live is the FROM clause of a table's live rows: a replica's latest
// versions without tombstones (FINAL … WHERE _weir_deleted = 0, what
// docs/cdc.md tells readers to query), any other table or view as is.
func (d *DB) Live(t testing.TB, ctx context.Context, table string) string {
	t.Helper()
	q := fmt.Sprintf("SELECT toString(count()) FROM system.columns WHERE database = '%s' AND table = '%s' AND name = '_weir_deleted'", d.Schema, table)
	if d.chQuery(t, ctx, q, nil) == "1" {
		return d.Table(table) + " FINAL WHERE _weir_deleted = 0"
	}
	return d.Table(table)
}

// chHash is Hash in ClickHouse SQL: the same md5s over the same text, so
// it equals the source's hash when the rows do. ClickHouse has no ordered
// aggregate: the rows' md5s are sorted by the order-by columns' tuple.
func (d *DB) chHash(t testing.TB, ctx context.Context, table string, exprs []string, orderBy string) string {
	t.Helper()
	parts := make([]string, len(exprs))
	for i, e := range exprs {
		parts[i] = fmt.Sprintf(`ifNull(toString(%s), '\\N')`, e)
	}
	row := "lower(hex(MD5(arrayStringConcat([" + strings.Join(parts, ", ") + "], '|'))))"
	sorted := fmt.Sprintf("arrayMap(x -> x.2, arraySort(x -> x.1, groupArray((tuple(%s), %s))))", orderBy, row)
	q := fmt.Sprintf(`SELECT concat(toString(count()), ':', if(count() = 0, '', lower(hex(MD5(arrayStringConcat(%s, ',')))))) FROM %s`,
		sorted, d.Live(t, ctx, table))
	return d.chQuery(t, ctx, q, nil)
}

// chLogOps is LogOps in ClickHouse SQL.
func (d *DB) chLogOps(t testing.TB, ctx context.Context, table, keyExpr string, withBaseline bool) []string {
	t.Helper()
	where := "WHERE _weir_op != 'B'"
	if withBaseline {
		where = ""
	}
	key := fmt.Sprintf("ifNull(toString(%s), '')", keyExpr)
	q := fmt.Sprintf(`SELECT arrayStringConcat(arrayMap(x -> x.4, arraySort(x -> (x.1, x.2, x.3), groupArray((_weir_lsn, _weir_ord, %s, concat(_weir_op, ' ', %[1]s))))), ',') FROM %s %s`,
		key, d.Table(table), where)
	s := d.chQuery(t, ctx, q, nil)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
