package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// joinYAML: orders read incrementally, joined to customers declared as a
// lookup with its key; gold_full is the same SQL recomputed by DuckDB
// over all the data (mode replace) on every pass.
const joinYAML = `version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze_orders:
    transfer: {from: files, table: orders.csv, to: lake, dest_table: bronze.orders, mode: append, cursor: id}
  bronze_customers:
    transfer: {from: files, table: customers.csv, to: lake, dest_table: bronze.customers}
  gold:
    model:
      sources: {o: lake:bronze.orders, c: lake:bronze.customers}
      lookup: {c: {key: customer_id, on_missing: ON_MISSING}}
      sink: lake:gold.orders
      mode: append
      sql: SELECT o.id, o.customer_id, c.country, o.amount FROM o JOIN c USING (customer_id)
  gold_full:
    model:
      sources: {o: lake:bronze.orders, c: lake:bronze.customers}
      lookup: [c]
      sink: lake:gold.full
      mode: replace
      sql: SELECT o.id, o.customer_id, c.country, o.amount FROM o JOIN c USING (customer_id)
    deps: [gold]
`

// TestRunner_LookupLateDimension: orders arrive before their customer on
// every other cycle (interleaved batches). With on_missing: hold no order
// is ever lost: after every cycle gold holds exactly the full recompute's
// rows minus the orders still waiting for their customer, a held cycle
// commits nothing and shows the wait as lag (report and weir status), and
// once the customers are in, gold equals the full recompute.
func TestRunner_LookupLateDimension(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weir.yaml")
	writeFile(t, path, strings.ReplaceAll(joinYAML, "ON_MISSING", "hold"))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })

	var orders strings.Builder
	orders.WriteString("id,customer_id,amount\n")
	var pending []string // ids of orders whose customer is not there yet
	const cycles = 8
	for c := range cycles {
		// Customers 1..2c+2; this cycle's orders name customers up to
		// 2c+3 on odd cycles (one not there yet), up to 2c+2 on even ones.
		customers := 2*c + 2
		var cs strings.Builder
		cs.WriteString("customer_id,country\n")
		for i := 1; i <= customers; i++ {
			fmt.Fprintf(&cs, "%d,C%02d\n", i, i)
		}
		writeFile(t, filepath.Join(dir, "data", "customers.csv"), cs.String())
		span := customers
		if c%2 == 1 {
			span++
		}
		for k := 1; k <= 10; k++ {
			id := c*10 + k
			cust := id%span + 1
			if k == 10 {
				cust = span // on odd cycles, the customer that comes next cycle
			}
			fmt.Fprintf(&orders, "%d,%d,%d.%02d\n", id, cust, id, id%100)
			pending = append(pending, fmt.Sprint(id))
		}
		writeFile(t, filepath.Join(dir, "data", "orders.csv"), orders.String())
		reps := pass(t, r)
		gold, full := lakeRows(t, r, "gold.orders"), lakeRows(t, r, "gold.full")
		slices.Sort(gold)
		slices.Sort(full)
		rep := reps["gold"]
		if c%2 == 1 {
			// An order names customer 2c+3: the batch waits.
			if rep.Held == 0 || rep.RowsOut != 0 || rep.Lag == 0 {
				t.Fatalf("cycle %d: a batch with an unmatched order was not held: %+v", c, rep)
			}
			for _, st := range r.Status(testContext(t), mustSelect(t, r)) {
				if st.Task == "gold" && st.Lag == 0 {
					t.Fatalf("cycle %d: weir status shows no lag while orders are held: %+v", c, st)
				}
			}
		} else {
			if rep.Held != 0 {
				t.Fatalf("cycle %d: held %d rows with every customer present", c, rep.Held)
			}
			pending = nil
		}
		// gold = full minus the pending orders, exactly.
		var want []string
		for _, row := range full {
			id, _, _ := strings.Cut(row, ",")
			if !slices.Contains(pending, id) {
				want = append(want, row)
			}
		}
		if !slices.Equal(gold, want) {
			t.Fatalf("cycle %d: gold (%d rows):\n%s\nwant the full recompute without the %d held orders (%d rows):\n%s",
				c, len(gold), strings.Join(gold, "\n"), len(pending), len(want), strings.Join(want, "\n"))
		}
	}
	// The last customer arrives with no new order: the held batch goes in.
	var cs strings.Builder
	cs.WriteString("customer_id,country\n")
	for i := 1; i <= 2*cycles+2; i++ {
		fmt.Fprintf(&cs, "%d,C%02d\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "data", "customers.csv"), cs.String())
	if rep := pass(t, r)["gold"]; rep.Held != 0 || rep.RowsOut == 0 || rep.Lag != 0 {
		t.Fatalf("the held batch was not committed once its customer arrived: %+v", rep)
	}
	gold, full := lakeRows(t, r, "gold.orders"), lakeRows(t, r, "gold.full")
	slices.Sort(gold)
	slices.Sort(full)
	if len(full) != cycles*10 || !slices.Equal(gold, full) {
		t.Fatalf("after the last customer gold has %d rows, the full recompute %d (want %d, equal)", len(gold), len(full), cycles*10)
	}
	for _, st := range r.Status(testContext(t), mustSelect(t, r)) {
		if st.Lag != 0 {
			t.Fatalf("status %s: lag %d after everything was committed", st.Task, st.Lag)
		}
	}
}

// TestRunner_LookupDropIsDeclared: on_missing: drop lets the SQL's inner
// join drop an order whose customer is not there yet; it is what the
// model declared, not silent: the run commits and moves on.
func TestRunner_LookupDropIsDeclared(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weir.yaml")
	writeFile(t, path, strings.ReplaceAll(joinYAML, "ON_MISSING", "drop"))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data", "customers.csv"), "customer_id,country\n1,FR\n")
	writeFile(t, filepath.Join(dir, "data", "orders.csv"), "id,customer_id,amount\n1,1,1.00\n2,2,2.00\n")
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if rep := pass(t, r)["gold"]; rep.Held != 0 || rep.RowsOut != 1 {
		t.Fatalf("on_missing: drop: %+v", rep)
	}
}
