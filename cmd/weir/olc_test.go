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
	for _, f := range []string{"weir.yaml", "data/orders.csv", "data/customers.csv", "data/customer_changes.csv",
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
// (contract.dataset_rules).
func TestOLCExampleCmd(t *testing.T) {
	dir := copyOLCExample(t)
	path := filepath.Join(dir, "weir.yaml")
	if code, out := runCmd(t, "lint", "-f", path); code != ExitOK || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("lint exited %d:\n%s", code, out)
	}
	for _, task := range []string{"bronze_orders", "bronze_customers", "bronze_customer_changes", "dim_customer"} {
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

}

// TestLintCmd_OLC: weir lint checks an OLC contract at file:line:col:
// keys OLC does not define and the parts weir does not implement are
// refused by name (exit 2, bad input), and its types, row rules and dataset rules are bound in
// DuckDB like weir's own contracts'.
func TestLintCmd_OLC(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  silver:
    model: {source: lake:s.x, sink: lake:s.silver, sql: SELECT 1}
    contract: c.olc.yaml
`), 0o644)
	contract := filepath.Join(dir, "c.olc.yaml")
	os.WriteFile(contract, []byte(`version: 1.0.0
info: {title: T}
model:
  fields:
    - {name: id, type: integer, required: true, masking: hash}
    - {name: fare, type: flaot}
    - {name: kind, type: string, colour: red}
quality:
  row_rules:
    - {name: broken, sql: "id >"}
    - {name: nofn, sql: "nosuchfn(id)"}
    - {name: warn_only, sql: "id > 0", severity: warning}
  dataset_rules:
    - {name: total, sql: "SELECT sum(nosuch) FROM source", must_be_greater_than: 0}
    - {unique: [id]}
transformations:
  - {phase: pre, trim: {fields: [kind]}}
  - {phase: post, sql: "SELECT * FROM source"}
  - {phase: post, pivot: {id_vars: [id]}}
  - {phase: post, uppercase: {fields: [kind]}}
lineage: {enabled: true}
materialization: {strategy: merge, partition_by: [kind]}
`), 0o644)
	code, out := runCmd(t, "lint", "-f", path)
	if code != ExitBadInput {
		t.Errorf("lint exited %d, want 2 (bad input: OLC-001 names the key)\n%s", code, out)
	}
	for _, want := range []string{
		contract + ":5:49: error OLC-001: model.fields[0].masking: OLC model.fields[0].masking is not supported by weir: values are not masked",
		contract + ":7:34: error DAG-000: model.fields[2].colour: unknown key \"colour\"",
		contract + ":12:40: error OLC-001: quality.row_rules[2].severity: ",
		contract + ":18:19: error OLC-001: transformations[1].sql: ",
		contract + ":19:19: error OLC-001: transformations[2].pivot: ",
		contract + ":20:19: error DAG-000: transformations[3].uppercase: unknown key \"uppercase\"",
		contract + ":21:1: error OLC-001: lineage: ",
		contract + ":22:36: error OLC-001: materialization.partition_by: ",
		contract + ":22:29: error DAG-000: materialization.strategy: strategy merge needs primary_key:",
		"9 errors, 0 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}

	// The same contract with the refused parts taken out: its types and
	// rules are bound in DuckDB.
	os.WriteFile(contract, []byte(`version: 1.0.0
info: {title: T}
model:
  fields:
    - {name: id, type: integer, required: true}
    - {name: fare, type: flaot}
quality:
  row_rules:
    - {name: broken, sql: "id >"}
`), 0o644)
	code, out = runCmd(t, "lint", "-f", path)
	if code != ExitBadInput || !strings.Contains(out, contract+":6:7: error CONTRACT-001: task silver: contract: column fare: type \"flaot\"") {
		t.Errorf("lint exited %d:\n%s", code, out)
	}
	os.WriteFile(contract, []byte(`version: 1.0.0
info: {title: T}
model:
  fields:
    - {name: id, type: integer, required: true}
    - {name: fare, type: float}
quality:
  row_rules:
    - {name: broken, sql: "id >"}
    - {name: nofn, sql: "nosuchfn(id)"}
    - {name: ok, sql: "fare >= 0", phase: post}
  dataset_rules:
    - {name: total, sql: "SELECT sum(nosuch) FROM source", must_be_greater_than: 0}
    - {name: badfn, sql: "SELECT nosuchagg(fare) FROM source"}
    - {unique: [id]}
    - {null_ratio: {field: fare, max: 0.1}}
`), 0o644)
	code, out = runCmd(t, "lint", "-f", path)
	for _, want := range []string{
		contract + ":9:7: error CONTRACT-001: task silver: contract: rule broken: Parser Error: ",
		contract + ":10:7: error CONTRACT-001: task silver: contract: rule nofn: Catalog Error: Scalar Function with name nosuchfn does not exist",
		contract + ":13:7: warning CONTRACT-002: task silver: contract: dataset rule total: ",
		contract + ":14:7: error CONTRACT-001: task silver: contract: dataset rule badfn: Catalog Error: ",
		"3 errors, 1 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	if code != ExitBadInput {
		t.Errorf("lint exited %d, want 2", code)
	}
}
