package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Attack tests of session 13, by an outside tester: a model's contract.

// TestAttackS13_ContractIntegerFraction: docs/contracts.md promises that a
// number with a fraction does not cast into an integer type. The check went
// through DOUBLE, which has no fraction digits left at 12345678901234567.5:
// DuckDB rounded it to 12345678901234568, the row passed the contract and
// landed, exit 0. Both rows must be quarantined (type(x)).
func TestAttackS13_ContractIntegerFraction(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "t.csv"), []byte("id,x\n1,7.5\n2,12345678901234567.5\n3,42\n"), 0o644)
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: files, table: t.csv, to: lake, dest_table: bronze.t}
  silver:
    model: {source: lake:bronze.t, sink: lake:silver.t, mode: replace, sql: "SELECT id, x FROM input"}
    contract: {columns: [{name: x, type: BIGINT}]}
`), 0o644)
	if code, out := runCmd(t, "once", "--task", "bronze", "-f", path); code != ExitOK {
		t.Fatalf("once bronze: exit %d: %s", code, out)
	}
	code, out := runCmd(t, "once", "--task", "silver", "-f", path, "--json")
	if code != ExitOK {
		t.Fatalf("once silver: exit %d: %s", code, out)
	}
	var rep struct {
		Rows        int64 `json:"rows"`
		Quarantined int64 `json:"quarantined"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if rep.Rows != 1 || rep.Quarantined != 2 {
		t.Fatalf("%d rows landed and %d were quarantined, want 1 and 2 (7.5 and 12345678901234567.5 are not BIGINTs): %s", rep.Rows, rep.Quarantined, out)
	}
}
