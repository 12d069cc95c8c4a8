package runner

import (
	"testing"
)

// TestRunner_MedallionPostgres: bronze → silver → gold over Postgres; each
// of three appends to the app table reaches silver as exactly its new rows.
func TestRunner_MedallionPostgres(t *testing.T) {
	d := newPGDAG(t, medallionYAML)
	r := d.runner(t)
	d.insertOrders(t, 1, 100)
	reps := pass(t, r)
	if got := d.count(t, "silver_log"); got != 100 {
		t.Fatalf("silver_log has %d rows after the first pass, want 100", got)
	}
	if got, want := d.count(t, "silver_orders"), goodOrders(1, 100); got != want {
		t.Fatalf("silver_orders has %d rows, want %d", got, want)
	}
	if rep := reps["silver_orders"]; rep.Quarantined != badOrders(1, 100) || rep.RowsIn != 100 {
		t.Fatalf("silver_orders report: %+v", rep)
	}
	for i, first := range []int{101, 111, 121} {
		d.insertOrders(t, first, 10)
		reps := pass(t, r)
		rep := reps["silver_log"]
		if rep.RowsIn != 10 || rep.RowsOut != 10 {
			t.Fatalf("append %d: silver_log read %d and wrote %d rows, want 10", i+1, rep.RowsIn, rep.RowsOut)
		}
		if got := rep.Offsets["input"]; got.From != itoa(first-1) || got.To != itoa(first+9) {
			t.Fatalf("append %d: offsets %+v", i+1, got)
		}
		if got, want := d.count(t, "silver_orders"), goodOrders(1, first+9); got != want {
			t.Fatalf("append %d: silver_orders has %d rows, want %d", i+1, got, want)
		}
		if got := d.count(t, "silver_log"); got != int64(first+9) {
			t.Fatalf("append %d: silver_log has %d rows, want %d", i+1, got, first+9)
		}
	}
	assertGold(t, d)
	if rep := once(t, r, "silver_log"); !rep.NothingNew || rep.RowsOut != 0 || rep.Lag != 0 {
		t.Fatalf("a run with nothing new: %+v", rep)
	}
}

// assertGold compares gold with the same aggregate computed by Postgres.
func assertGold(t *testing.T, d *pgDAG) {
	t.Helper()
	var diff int64
	q := `SELECT count(*) FROM (
  (SELECT c.country, count(*) AS orders, sum(o.amount) AS revenue FROM S.silver_orders o JOIN S.bronze_customers c ON c.id = o.customer_id GROUP BY 1
   EXCEPT SELECT country, orders, revenue FROM S.gold_country)
  UNION ALL
  (SELECT country, orders, revenue FROM S.gold_country
   EXCEPT SELECT c.country, count(*), sum(o.amount) FROM S.silver_orders o JOIN S.bronze_customers c ON c.id = o.customer_id GROUP BY 1)) x`
	if err := d.fx.Pool.QueryRow(testContext(t), replaceS(q, d.s)).Scan(&diff); err != nil {
		t.Fatal(err)
	}
	if diff != 0 || d.count(t, "gold_country") != 4 {
		t.Fatalf("gold_country differs from the aggregate of silver in %d rows", diff)
	}
}
