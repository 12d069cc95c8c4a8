package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/weirhq/weir/routes/postgres"
	"github.com/weirhq/weir/routes/postgres/postgrestest"
	"github.com/weirhq/weir/routes/routestest"
)

// pgDAG is a dagfile over one test schema of the Postgres test server: an
// app's orders and customers, loaded to bronze by transfers and shaped by
// models into silver and gold.
type pgDAG struct {
	fx   *postgrestest.Fixture
	s    string // the schema
	path string // the dagfile
}

const medallionYAML = `version: 1
connections:
  pg: ${WEIR_TEST_PG}
tasks:
  bronze_orders:
    transfer: {from: pg, table: S.app_orders, to: pg, dest_table: S.bronze_orders, mode: append}
  bronze_customers:
    transfer: {from: pg, table: S.app_customers, to: pg, dest_table: S.bronze_customers}
  silver_orders:
    model:
      source: pg:S.bronze_orders
      sink: pg:S.silver_orders
      mode: upsert
      key: [id]
      sql: SELECT id, customer_id, amount, lower(status) AS status FROM input WHERE amount > 0
    contract:
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: amount, type: "DECIMAL(12,2)", required: true}
        - {name: status, type: VARCHAR}
      rules:
        - accepted_values: {column: status, values: [paid, refunded, pending]}
      max_bad_ratio: 0.5
  silver_log:
    model: {source: pg:S.bronze_orders, sink: pg:S.silver_log, mode: append, sql: "SELECT id, amount FROM input"}
  gold_country:
    model:
      sources: {o: pg:S.silver_orders, c: pg:S.bronze_customers}
      sink: pg:S.gold_country
      mode: replace
      sql: |
        SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue
        FROM o JOIN c ON c.id = o.customer_id GROUP BY 1
`

// newPGDAG creates the app tables in a fresh schema and writes the
// dagfile (body, with S standing for the schema) into a temporary folder.
func newPGDAG(t *testing.T, body string) *pgDAG {
	t.Helper()
	fx := postgrestest.New(t)
	d := &pgDAG{fx: fx, s: fx.Schema, path: filepath.Join(t.TempDir(), "weir.yaml")}
	body = strings.ReplaceAll(body, "S.", d.s+".")
	if err := os.WriteFile(d.path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	fx.Exec(t, ctx,
		"CREATE TABLE "+d.s+".app_orders (id bigint PRIMARY KEY, customer_id bigint, amount numeric(12,2), status text)",
		"CREATE TABLE "+d.s+".app_customers (id bigint PRIMARY KEY, country text)",
		"INSERT INTO "+d.s+".app_customers VALUES (1, 'FR'), (2, 'DE'), (3, 'US'), (4, 'FR'), (5, 'JP')")
	return d
}

func testContext(t *testing.T) context.Context {
	return routestest.Context(t, 3*time.Minute)
}

// insertOrders adds orders first..first+n-1: every 7th has a negative
// amount (filtered by the SQL), every 11th an unknown status (quarantined).
func (d *pgDAG) insertOrders(t *testing.T, first, n int) {
	t.Helper()
	statuses := []string{"paid", "refunded", "pending"}
	var vals []string
	for i := first; i < first+n; i++ {
		amount := fmt.Sprintf("%d.%02d", i*3, i%100)
		if i%7 == 0 {
			amount = "-1"
		}
		status := statuses[i%3]
		if i%11 == 0 {
			status = "Lost"
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, %s, '%s')", i, i%5+1, amount, status))
	}
	d.fx.Exec(t, testContext(t), "INSERT INTO "+d.s+".app_orders VALUES "+strings.Join(vals, ", "))
}

// goodOrders counts the orders in [first, last] the silver model keeps.
func goodOrders(first, last int) (n int64) {
	for i := first; i <= last; i++ {
		if i%7 != 0 && i%11 != 0 {
			n++
		}
	}
	return n
}

// badOrders counts the orders in [first, last] the contract quarantines.
func badOrders(first, last int) (n int64) {
	for i := first; i <= last; i++ {
		if i%7 != 0 && i%11 == 0 {
			n++
		}
	}
	return n
}

func (d *pgDAG) runner(t *testing.T) *Runner {
	t.Helper()
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// count returns a table's rows.
func (d *pgDAG) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := d.fx.Pool.QueryRow(testContext(t), "SELECT count(*) FROM "+d.s+"."+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// hash fingerprints a table's rows (in key order).
func (d *pgDAG) hash(t *testing.T, table, orderBy string) string {
	h, n := d.fx.Hash(t, testContext(t), d.s+"."+table, orderBy)
	return fmt.Sprintf("%s/%d", h, n)
}

// once runs one task and fails the test on an error.
func once(t *testing.T, r *Runner, task string) *Report {
	t.Helper()
	rep, err := r.Once(testContext(t), task)
	if err != nil {
		t.Fatalf("once %s: %v", task, err)
	}
	return rep
}

// pass runs every task once, in order.
func pass(t *testing.T, r *Runner) map[string]*Report {
	t.Helper()
	tasks, err := r.Select()
	if err != nil {
		t.Fatal(err)
	}
	reps := map[string]*Report{}
	err = r.Pass(testContext(t), tasks, func(rep *Report, err error) { reps[rep.Task] = rep })
	if err != nil {
		t.Fatalf("pass: %v", err)
	}
	return reps
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func itoa(i int) string { return fmt.Sprint(i) }

func replaceS(q, schema string) string { return strings.ReplaceAll(q, "S.", schema+".") }

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyExample copies files of examples/<name> into a temporary directory and
// returns the path of its weir.yaml there.
func copyExample(t *testing.T, name string, files ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "examples", name, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755)
		writeFile(t, filepath.Join(dst, f), string(b))
	}
	return filepath.Join(dst, "weir.yaml")
}
