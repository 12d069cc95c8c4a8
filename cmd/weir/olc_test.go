package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyOLCExample copies examples/olc (without a lake) to a temp dir.
func copyOLCExample(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join("..", "..", "examples", "olc"), t.TempDir()
	for _, f := range []string{"weir.yaml", "scd2.weir.yaml", "data/orders.csv", "data/customers.csv",
		"contracts/orders.olc.yaml", "contracts/dim_customer.olc.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestOLCExampleCmd: examples/olc passes weir lint (its OLC rules bound
// in DuckDB), and weir once runs it: the silver report carries the
// per-rule counts (contract.rules) and the dataset rules' outcomes
// (contract.dataset_rules). Its scd2 dimension is refused by lint (OLC-001
// at the key's file:line) and by once (exit 2) before a row moves.
func TestOLCExampleCmd(t *testing.T) {
	dir := copyOLCExample(t)
	path := filepath.Join(dir, "weir.yaml")
	if code, out := runCmd(t, "lint", "-f", path); code != ExitOK || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("lint exited %d:\n%s", code, out)
	}
	for _, task := range []string{"bronze_orders", "bronze_customers"} {
		if code, _ := runCmd(t, "once", "--task", task, "-f", path); code != ExitOK {
			t.Fatalf("once %s exited %d", task, code)
		}
	}
	code, out := runCmd(t, "once", "--task", "silver_orders", "--json", "-f", path)
	if code != ExitOK {
		t.Fatalf("once silver_orders exited %d: %s", code, out)
	}
	var rep struct {
		RowsOut     int64 `json:"rows_out"`
		Quarantined int64 `json:"quarantined"`
		Contract    struct {
			Passed       bool             `json:"passed"`
			Rules        map[string]int64 `json:"rules"`
			DatasetRules []struct {
				Name   string `json:"name"`
				Passed bool   `json:"passed"`
				Value  string `json:"value"`
			} `json:"dataset_rules"`
		} `json:"contract"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	c := rep.Contract
	if rep.RowsOut != 4 || rep.Quarantined != 4 || c.Passed || c.Rules["shipped_after_ordered"] != 1 || c.Rules["type(amount)"] != 1 ||
		len(c.DatasetRules) != 2 || c.DatasetRules[0].Name != "one_order_per_customer_instant" || c.DatasetRules[0].Passed || c.DatasetRules[0].Value != "2" {
		t.Fatalf("report: %s", out)
	}

	scd2 := filepath.Join(dir, "scd2.weir.yaml")
	code, out = runCmd(t, "lint", "-f", scd2)
	contract := filepath.Join(dir, "contracts", "dim_customer.olc.yaml")
	if code != 1 || !strings.Contains(out, contract+":17:3: error OLC-001: materialization.strategy:") ||
		!strings.Contains(out, contract+":18:3: error OLC-001: materialization.scd2:") {
		t.Fatalf("lint of the scd2 dimension exited %d:\n%s", code, out)
	}
	if code, _ := runCmd(t, "once", "--task", "dim_customer", "-f", scd2); code != ExitBadInput {
		t.Fatalf("once of the scd2 dimension exited %d, want %d", code, ExitBadInput)
	}
}
