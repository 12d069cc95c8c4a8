package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// copyQuickstart copies examples/quickstart (without a lake) to a temp dir.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join("..", "examples", "quickstart"), t.TempDir()
	for _, name := range []string{"weir.yaml", "data/orders.csv", "data/customers.csv", "models/silver_orders.sql",
		"models/gold_revenue_by_country.sql", "contracts/silver_orders.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dst, "weir.yaml")
}

// TestQuickstart runs examples/quickstart as the README says (no server):
// one pass, then status; the contract quarantines the bundled bad rows.
func TestQuickstart(t *testing.T) {
	path := copyQuickstart(t)
	r, err := Load(path, Options{Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reps := pass(t, r)
	silver := reps["silver_orders"]
	if silver.RowsIn != 8000 || silver.Quarantined == 0 || silver.RowsOut+silver.Quarantined != 8000 {
		t.Fatalf("silver_orders: %+v", silver)
	}
	if gold := reps["gold_revenue_by_country"]; gold.RowsOut != 8 {
		t.Fatalf("gold_revenue_by_country wrote %d rows, want one per country (8)", gold.RowsOut)
	}
	for _, st := range r.Status(testContext(t), mustSelect(t, r)) {
		if st.Error != "" || st.Lag != 0 {
			t.Errorf("status %s: %+v", st.Task, st)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "lake", "catalog.db")); err != nil {
		t.Errorf("the lake is not next to the dagfile: %v", err)
	}
	if rep := once(t, r, "silver_orders"); !rep.NothingNew {
		t.Errorf("a second silver run: %+v", rep)
	}
}

// TestRunner_MissingSource: a model whose source table does not exist yet
// (its upstream has not loaded anything) has nothing to do; it does not fail.
func TestRunner_MissingSource(t *testing.T) {
	r := newLakeDAG(t, "warn").runner(t)
	if rep := once(t, r, "silver_log"); !rep.NothingNew {
		t.Fatalf("a model over a missing table: %+v", rep)
	}
	sts := r.Status(testContext(t), mustSelect(t, r))
	for _, st := range sts {
		if st.Task == "silver_log" && (len(st.Sources) != 1 || !st.Sources[0].Missing) {
			t.Fatalf("status of silver_log: %+v", st)
		}
	}
}
