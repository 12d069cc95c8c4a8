package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestReport_Contract: the report's contract result counts the rows
// checked and broken and, per rule label, the rows that break it (a row
// breaking two rules counts under both); a batch past max_bad_ratio fails
// the run with passed false in its report.
func TestReport_Contract(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "t.csv"), []byte("id,v,s\n1,5,a\n2,-1,a\n3,-2,zz\n4,7,a\n5,8,a\n"), 0o644)
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: files, table: t.csv, to: lake, dest_table: bronze.t}
  lax:
    model: {source: lake:bronze.t, sink: lake:silver.lax, mode: append, sql: "SELECT * FROM input"}
    contract:
      rules: [{name: positive, sql: "v > 0"}, {accepted_values: {column: s, values: [a]}}]
      max_bad_ratio: 0.5
  strict:
    model: {source: lake:bronze.t, sink: lake:silver.strict, mode: append, sql: "SELECT * FROM input"}
    contract:
      rules: [{name: positive, sql: "v > 0"}]
      max_bad_ratio: 0.1
  plain:
    model: {source: lake:bronze.t, sink: lake:silver.plain, mode: append, sql: "SELECT * FROM input"}
`), 0o644)
	r, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := r.Once(ctx, "bronze"); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Once(ctx, "lax")
	if err != nil {
		t.Fatal(err)
	}
	want := &ContractResult{Checked: 5, Broken: 2, MaxBadRatio: 0.5, Passed: true,
		Rules: map[string]int64{"positive": 2, "accepted_values(s)": 1}}
	if !reflect.DeepEqual(rep.Contract, want) || rep.Quarantined != 2 {
		t.Errorf("lax: contract %+v, quarantined %d; want %+v, 2", rep.Contract, rep.Quarantined, want)
	}
	rep, err = r.Once(ctx, "strict")
	if err == nil {
		t.Fatal("strict: 2 of 5 bad rows above max_bad_ratio 0.1 passed")
	}
	if rep.Contract == nil || rep.Contract.Passed || rep.Contract.Broken != 2 || rep.Contract.Rules["positive"] != 2 {
		t.Errorf("strict: contract %+v: want failed, 2 breaking positive", rep.Contract)
	}
	if rep, err := r.Once(ctx, "plain"); err != nil || rep.Contract != nil {
		t.Errorf("no contract: %+v %v", rep.Contract, err)
	}
}
