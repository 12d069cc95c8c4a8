package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintCmd_Contracts: weir lint binds every contract type name and rule
// in DuckDB: an unknown type, rule SQL that does not parse or bind, and an
// accepted value that is not of its column's type fail (exit 1) at their
// file:line:col; a rule over a column the contract does not list warns; a
// sound contract passes.
func TestLintCmd_Contracts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bad:
    model: {source: lake:s.x, sink: lake:s.bad, sql: SELECT 1}
    contract: contracts/bad.yaml
  typo:
    model: {source: lake:s.x, sink: lake:s.typo, sql: SELECT 1}
    contract:
      columns: [{name: n, type: numbr}]
  good:
    model: {source: lake:s.x, sink: lake:s.good, sql: SELECT 1}
    contract:
      columns: [{name: fare, type: float}, {name: cap, type: "DECIMAL(12,2)"}, {name: kind, type: int}, {name: s}]
      rules:
        - sql: fare <= cap AND s <> 'x'
        - accepted_values: {column: kind, values: [1, 2]}
        - unique: {columns: [kind, s], nulls_distinct: false}
        - range: {column: cap, min: 0, max: 100}
`), 0o644)
	os.MkdirAll(filepath.Join(dir, "contracts"), 0o755)
	os.WriteFile(filepath.Join(dir, "contracts", "bad.yaml"), []byte(`columns:
  - {name: fare, type: double}
  - {name: kind, type: integer}
rules:
  - sql: fare >=
  - sql: nosuchfn(fare)
  - name: other_positive
    sql: other > 0
  - accepted_values: {column: kind, values: [paid]}
  - sql: fare <= kind
`), 0o644)
	code, out := runCmd(t, "lint", "-f", path)
	if code != ExitBadInput {
		t.Errorf("lint exited %d, want 2 (bad input)\n%s", code, out)
	}
	bad := filepath.Join(dir, "contracts", "bad.yaml")
	for _, want := range []string{
		path + ":11:17: error CONTRACT-001: task typo: contract: column n: type \"numbr\": ",
		bad + ":5:5: error CONTRACT-001: task bad: contract: rule sql: fare >=: Parser Error: ",
		bad + ":6:5: error CONTRACT-001: task bad: contract: rule sql: nosuchfn(fare): Catalog Error: Scalar Function with name nosuchfn does not exist",
		bad + ":7:5: warning CONTRACT-002: task bad: contract: rule other_positive: Binder Error: Referenced column \"other\" not found",
		bad + ":9:5: error CONTRACT-001: task bad: contract: rule accepted_values(kind): value paid is not a BIGINT: Conversion Error: Could not convert string 'paid' to INT64",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "CONTRACT-00"); n != 5 {
		t.Errorf("%d contract findings, want the 5 above (none for task good):\n%s", n, out)
	}
}

// TestLintCmd_EnvFrom: --env-from names the variables the pods will have;
// a task whose own connections need one more is an error (exit 1).
func TestLintCmd_EnvFrom(t *testing.T) {
	dir := t.TempDir()
	partial := filepath.Join(dir, "partial.env")
	os.WriteFile(partial, []byte("# the app's secret\nexport APP_PG_URL=postgres://x\nSHOP_USER=u\n"), 0o644)
	full := filepath.Join(dir, "full.env")
	os.WriteFile(full, []byte("APP_PG_URL=a\nSHOP_USER=b\nSHOP_PASSWORD=c\nKAFKA_BROKERS=d\nCH_USER\nCH_PASSWORD=\n"), 0o644)
	bad := filepath.Join(dir, "bad.env")
	os.WriteFile(bad, []byte("not a name=1\n"), 0o644)
	const dag = "../../examples/medallion/weir.yaml"

	code, out := runCmd(t, "lint", "-f", dag, "--env-from", partial, "--format", "json")
	var r lintReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != ExitBadInput {
		t.Fatalf("partial: exit %d, %v: %s", code, err, out)
	}
	missing := map[string]string{}
	for _, f := range r.Findings {
		if f.Rule == "ENV-001" {
			missing[f.Task] = f.Message
		}
	}
	if len(missing) != 3 || !strings.HasSuffix(missing["bronze_catalog"], "does not provide: SHOP_PASSWORD") || missing["bronze_orders"] != "" {
		t.Errorf("ENV-001 findings: %v", missing)
	}
	if code, out := runCmd(t, "lint", "-f", dag, "--env-from", partial, "--env-from", full); code != 0 || strings.Contains(out, "ENV-001") {
		t.Errorf("full: exit %d: %s", code, out)
	}
	if code, _ := runCmd(t, "lint", "-f", dag, "--env-from", bad); code != ExitBadInput {
		t.Errorf("bad env file: exit %d, want 2", code)
	}
}
