package runner

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOLCExample runs examples/olc as its dagfile says (no server): an
// OLC contract with pre and post transformations, row rules (one row
// breaking two is quarantined once, attributed to both; a value that does
// not cast has the one reason type()), a dataset unique rule that fails
// without quarantining, and merge on primary_key; and an scd2 customer
// dimension. A second pass with a later version of an order and a new
// order merges them; a changed customer opens a version and closes the
// old one, an unchanged one writes nothing, a new one gets its first.
func TestOLCExample(t *testing.T) {
	path := copyExample(t, "olc", "weir.yaml", "data/orders.csv", "data/customers.csv", "data/customer_changes.csv",
		"contracts/orders.olc.yaml", "contracts/dim_customer.olc.yaml")
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m := r.file.Task("silver_orders").Model; m.Mode != "upsert" || !slices.Equal(m.Key, []string{"order_id"}) {
		t.Fatalf("materialization merge on [order_id] did not make the model upsert on it: mode %s key %v", m.Mode, m.Key)
	}
	if m := r.file.Task("dim_customer").Model; m.Mode != "upsert" || !slices.Equal(m.Key, []string{"customer_id", "valid_from"}) {
		t.Fatalf("scd2 did not make the model upsert on [customer_id valid_from]: mode %s key %v", m.Mode, m.Key)
	}
	reps := pass(t, r)
	silver := reps["silver_orders"]
	if dim := reps["dim_customer"]; dim.RowsOut != 3 {
		t.Fatalf("dim_customer: %+v", dim)
	}
	c := silver.Contract
	if silver.Quarantined != 4 || silver.RowsOut != 4 || c == nil || c.Checked != 8 || c.Broken != 4 {
		t.Fatalf("silver_orders: %+v contract %+v", silver, c)
	}
	wantRules := map[string]int64{"range(amount)": 1, "accepted_values(status)": 1, "shipped_after_ordered": 1,
		"type(amount)": 1, "ships_within_30_days": 1}
	if !maps.Equal(c.Rules, wantRules) {
		t.Errorf("contract.rules %v, want %v", c.Rules, wantRules)
	}
	if len(c.DatasetRules) != 2 || c.DatasetRules[0].Passed || c.DatasetRules[0].Value != "2" || !c.DatasetRules[1].Passed || c.Passed {
		t.Errorf("dataset rules %+v, passed %v: want one_order_per_customer_instant failed (2 rows), some_orders passed, contract not passed", c.DatasetRules, c.Passed)
	}
	// order_id, customer_id, status, amount, ordered_at, shipped_at, channel, size_band, days_to_ship, segment
	want := []string{
		`1,1,paid,120.5,2024-01-01T10:00:00,2024-01-03T09:00:00,web,medium,2,gold`,
		`2,2,paid,35,2024-01-01T11:00:00,2024-01-02T08:00:00,store,small,1,silver`,
		`3,3,pending,900,2024-01-02T12:00:00,(null),web,large,(null),bronze`,
		`8,2,paid,35,2024-01-01T11:00:00,(null),store,small,(null),silver`,
	}
	if got := sortedLake(t, r, "silver.orders"); !slices.Equal(got, want) {
		t.Fatalf("silver.orders:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	reasons := map[string]string{}
	for _, row := range lakeRows(t, r, "silver.orders__quarantine") {
		// seq, order_id, customer_id, amount, ordered_at, shipped_at, meta,
		// status, channel (the output after the pre transformations), then
		// _weir_reason and _weir_run
		cells := strings.SplitN(row, ",", 10)
		reasons[cells[1]] = cells[9][:strings.LastIndex(cells[9], ",")]
	}
	wantQ := map[string]string{"4": "range(amount)", "5": "accepted_values(status); shipped_after_ordered", "6": "type(amount): not decimal(12,2)", "7": "ships_within_30_days"}
	if len(reasons) != 4 || !maps.Equal(reasons, wantQ) {
		t.Fatalf("quarantine reasons by order_id %v, want %v", reasons, wantQ)
	}

	// A later version of order 3 (shipped) and a new order 9: merged.
	csv := filepath.Join(filepath.Dir(path), "data", "orders.csv")
	f, err := os.OpenFile(csv, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := os.OpenFile(filepath.Join(filepath.Dir(path), "data", "customer_changes.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// customer 2 changes segment, 3 repeats its segment (no new version), 4 is new
	changes.WriteString("4,2,gold,2024-03-01 00:00:00\n5,3,bronze,2024-03-01 00:00:00\n6,4,silver,2024-03-01 00:00:00\n")
	changes.Close()
	f.WriteString("9,3,3,PAID,900.00,2024-01-02 12:00:00,2024-01-04 12:00:00,\"{\"\"channel\"\": \"\"web\"\"}\"\n" +
		"10,9,1,paid,75.00,2024-01-05 10:00:00,2024-01-06 10:00:00,\"{\"\"channel\"\": \"\"app\"\"}\"\n")
	f.Close()
	reps = pass(t, r)
	if dim := reps["dim_customer"]; dim.RowsOut != 3 || dim.RowsIn != 3 {
		t.Fatalf("dim_customer, second pass: %+v", dim)
	}
	// customer_id, segment, updated_at, is_current, valid_from, valid_to
	wantDim := []string{
		`1,gold,2024-01-01T00:00:00,true,2024-01-01T00:00:00,(null)`,
		`2,gold,2024-03-01T00:00:00,true,2024-03-01T00:00:00,(null)`,
		`2,silver,2024-01-01T00:00:00,false,2024-01-01T00:00:00,2024-03-01T00:00:00`,
		`3,bronze,2024-01-01T00:00:00,true,2024-01-01T00:00:00,(null)`,
		`4,silver,2024-03-01T00:00:00,true,2024-03-01T00:00:00,(null)`,
	}
	if got := lakeRows(t, r, "silver.dim_customer"); !slices.Equal(sorted(got), wantDim) {
		t.Fatalf("silver.dim_customer:\n%s\nwant:\n%s", strings.Join(sorted(got), "\n"), strings.Join(wantDim, "\n"))
	}
	silver = reps["silver_orders"]
	if silver.RowsOut != 2 || silver.Quarantined != 0 || len(silver.Contract.Rules) != 0 || !silver.Contract.Passed {
		t.Fatalf("second pass: %+v contract %+v", silver, silver.Contract)
	}
	want = []string{want[0], want[1],
		`3,3,paid,900,2024-01-02T12:00:00,2024-01-04T12:00:00,web,large,2,bronze`,
		want[3],
		`9,1,paid,75,2024-01-05T10:00:00,2024-01-06T10:00:00,app,medium,1,gold`,
	}
	if got := sortedLake(t, r, "silver.orders"); !slices.Equal(got, want) {
		t.Fatalf("after the merge, silver.orders:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(lakeRows(t, r, "silver.orders__quarantine")); n != 4 {
		t.Fatalf("the quarantine has %d rows after the second pass, want 4", n)
	}
}

func sortedLake(t *testing.T, r *Runner, table string) []string {
	rows := lakeRows(t, r, table)
	slices.SortFunc(rows, func(a, b string) int {
		x, _, _ := strings.Cut(a, ",")
		y, _, _ := strings.Cut(b, ",")
		if len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	})
	return rows
}

func sorted(rows []string) []string {
	out := slices.Clone(rows)
	slices.Sort(out)
	return out
}
