package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	_ "github.com/weirhq/weir/routes/iceberg"
	_ "github.com/weirhq/weir/routes/objstore"
)

// lakeDAG is the medallion DAG with no server: CSV files loaded into an
// embedded Iceberg lake (SQLite catalog, file warehouse), paths relative to
// the dagfile's folder.
type lakeDAG struct {
	dir, path string
}

const lakeYAML = `version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze_orders:
    transfer: {from: files, table: orders.csv, to: lake, dest_table: bronze.orders, mode: append, cursor: id}
  bronze_customers:
    transfer: {from: files, table: customers.csv, to: lake, dest_table: bronze.customers}
  silver_orders:
    model:
      source: lake:bronze.orders
      sink: lake:silver.orders
      mode: upsert
      key: [id]
      sql: SELECT id, customer_id, amount, lower(status) AS status FROM input WHERE amount > 0
      on_change: ON_CHANGE
    contract:
      columns:
        - {name: id, type: BIGINT, required: true}
        - {name: amount, type: "DECIMAL(12,2)", required: true}
        - {name: status, type: VARCHAR}
      rules:
        - accepted_values: {column: status, values: [paid, refunded, pending]}
      max_bad_ratio: 0.5
  silver_log:
    model: {source: lake:bronze.orders, sink: lake:silver.log, mode: append, sql: "SELECT id, amount FROM input"}
  gold_country:
    model:
      sources: {o: lake:silver.orders, c: lake:bronze.customers}
      sink: lake:gold.country
      mode: replace
      sql: |
        SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue
        FROM o JOIN c ON c.id = o.customer_id GROUP BY 1
`

func newLakeDAG(t *testing.T, onChange string) *lakeDAG {
	t.Helper()
	d := &lakeDAG{dir: t.TempDir()}
	d.path = filepath.Join(d.dir, "weir.yaml")
	body := strings.ReplaceAll(lakeYAML, "ON_CHANGE", onChange)
	if err := os.WriteFile(d.path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d.dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	d.write(t, "customers.csv", "id,country\n1,FR\n2,DE\n3,US\n4,FR\n5,JP\n")
	return d
}

func (d *lakeDAG) write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, "data", name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// orders writes orders.csv with the orders first..last (as insertOrders).
func (d *lakeDAG) orders(t *testing.T, first, last int) {
	statuses := []string{"paid", "refunded", "pending"}
	var b strings.Builder
	b.WriteString("id,customer_id,amount,status\n")
	for i := first; i <= last; i++ {
		amount := fmt.Sprintf("%d.%02d", i*3, i%100)
		if i%7 == 0 {
			amount = "-1.00"
		}
		status := statuses[i%3]
		if i%11 == 0 {
			status = "Lost"
		}
		fmt.Fprintf(&b, "%d,%d,%s,%s\n", i, i%5+1, amount, status)
	}
	d.write(t, "orders.csv", b.String())
}

func (d *lakeDAG) runner(t *testing.T) *Runner {
	t.Helper()
	r, err := Load(d.path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRunner_MedallionIceberg: the DAG over the embedded lake; offsets are
// snapshot sequence numbers; each append reaches silver as exactly its
// new rows.
func TestRunner_MedallionIceberg(t *testing.T) {
	d := newLakeDAG(t, "warn")
	r := d.runner(t)
	d.orders(t, 1, 100)
	reps := pass(t, r)
	if rep := reps["silver_orders"]; rep.RowsIn != 100 || rep.RowsOut != goodOrders(1, 100) || rep.Quarantined != badOrders(1, 100) {
		t.Fatalf("silver_orders: %+v", rep)
	}
	prev := reps["silver_log"].Offsets["input"].To
	for i, last := range []int{110, 120, 130} {
		d.orders(t, 1, last)
		reps := pass(t, r)
		rep := reps["silver_log"]
		off := rep.Offsets["input"]
		if rep.RowsIn != 10 || rep.RowsOut != 10 || off.From != prev || incremental.Compare(off.To, off.From) <= 0 {
			t.Fatalf("append %d: silver_log %+v", i+1, rep)
		}
		prev = off.To
		if got, want := reps["silver_orders"].RowsOut, goodOrders(last-9, last); got != want {
			t.Fatalf("append %d: silver_orders wrote %d rows, want %d", i+1, got, want)
		}
		if len(reps["silver_orders"].Changes) != 0 {
			t.Fatalf("append %d: appends flagged as changes: %v", i+1, reps["silver_orders"].Changes)
		}
	}
	if rep := reps2(t, r); !rep.NothingNew {
		t.Fatalf("gold recomputed with no new snapshot: %+v", rep)
	}
	if got, want := lakeRows(t, r, "gold.country"), lakeGold(1, 130); !slices.Equal(got, want) {
		t.Fatalf("gold.country:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sts := r.Status(testContext(t), mustSelect(t, r))
	for _, st := range sts {
		if st.Error != "" || st.Lag != 0 {
			t.Errorf("status %s: %+v", st.Task, st)
		}
	}
}

// lakeGold is gold_country over the orders first..last, computed here:
// the orders silver keeps, by their customer's country.
func lakeGold(first, last int) []string {
	countries := map[int]string{1: "FR", 2: "DE", 3: "US", 4: "FR", 5: "JP"}
	orders, cents := map[string]int{}, map[string]int{}
	for i := first; i <= last; i++ {
		if i%7 == 0 || i%11 == 0 {
			continue
		}
		c := countries[i%5+1]
		orders[c]++
		cents[c] += i*300 + i%100
	}
	var rows []string
	for c, n := range orders {
		revenue := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%02d", cents[c]/100, cents[c]%100), "0"), ".") // as Arrow prints decimals
		rows = append(rows, fmt.Sprintf("%s,%d,%s", c, n, revenue))
	}
	slices.Sort(rows)
	return rows
}

func reps2(t *testing.T, r *Runner) *Report {
	return once(t, r, "gold_country")
}

func mustSelect(t *testing.T, r *Runner) []*dagfile.Task {
	t.Helper()
	tasks, err := r.Select()
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestRunner_MaxBatchRowsIceberg: over an Iceberg source max_batch_rows
// bounds a batch at whole snapshots (by their added-records): as many as
// fit, at least one. The first run pages through the table's snapshot by
// max_batch_rows (TestRunner_FirstRunPaged has more).
func TestRunner_MaxBatchRowsIceberg(t *testing.T) {
	d := newLakeDAG(t, "warn")
	body, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	body = []byte(strings.Replace(string(body), `mode: append, sql: "SELECT id, amount FROM input"}`,
		`mode: append, max_batch_rows: 25, sql: "SELECT id, amount FROM input"}`, 1))
	if err := os.WriteFile(d.path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	r := d.runner(t)
	d.orders(t, 1, 30)
	once(t, r, "bronze_orders")
	if rep := once(t, r, "silver_log"); rep.RowsIn != 30 || rep.Batches != 2 {
		t.Fatalf("first run: %d rows in %d batches, want the whole table (30) in 2", rep.RowsIn, rep.Batches)
	}
	// Snapshots of 10, 10, 10 and 40 rows.
	for _, last := range []int{40, 50, 60, 100} {
		d.orders(t, 1, last)
		once(t, r, "bronze_orders")
	}
	var got []int64
	commits := countCommits(func() {
		rep := once(t, r, "silver_log")
		got = append(got, rep.RowsIn, int64(rep.Batches))
	})
	// Batches of 20, 10 and 40 rows: three commits.
	if want := []int64{70, 3}; !equalInts(got, want) || commits != 3 {
		t.Fatalf("max_batch_rows 25 over snapshots of 10, 10, 10, 40 rows: rows and batches %v, want %v; %d commits, want 3", got, want, commits)
	}
	if got := lakeRows(t, r, "silver.log"); len(got) != 100 {
		t.Fatalf("silver.log has %d rows, want 100", len(got))
	}
}
