package generate

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weirhq/weir/report/pipes"
)

// TestDagsterPipes_Quickstart runs every asset of the generated Dagster
// definitions of examples/quickstart, in dependency order, with the real
// weir binary under the dagster stub's PipesSubprocessClient (the Pipes
// bootstrap in temporary files, messages read back and checked as
// Dagster reads them): each asset gets the materialization of its table
// from weir's messages, with row counts, and each contracted task the
// result of its declared asset check.
func TestDagsterPipes_Quickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	path := filepath.Join(copyQuickstart(t), "weir.yaml")
	f := quickstartFile(t, path)
	files, err := Dagster(f, Options{WeirBin: bin, DagfilePath: path})
	if err != nil {
		t.Fatal(err)
	}
	defs := writeTemp(t, "definitions.py", files["definitions.py"])
	for _, task := range f.Order() {
		var got struct {
			Outcome string `json:"outcome"`
			Results []struct {
				Key      []string       `json:"key"`
				Metadata map[string]any `json:"metadata"`
				Check    *string        `json:"check"`
				Passed   *bool          `json:"passed"`
			} `json:"results"`
		}
		out := runPython(t, nil, "weir_inspect.py", "dagster", defs, task.Name, "1")
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v\n%s", task.Name, err, out)
		}
		if got.Outcome != "success" {
			t.Fatalf("%s: %s", task.Name, out)
		}
		var keys, checks [][]string
		for _, r := range got.Results {
			if r.Check != nil {
				if !*r.Passed || *r.Check != pipes.ContractCheck || r.Metadata["checked"] == nil {
					t.Errorf("%s: check %s", task.Name, out)
				}
				checks = append(checks, r.Key)
				continue
			}
			keys = append(keys, r.Key)
			if rows, _ := r.Metadata["rows_out"].(float64); rows <= 0 {
				t.Errorf("%s: materialization metadata %v: want rows_out > 0 on the first run", task.Name, r.Metadata)
			}
		}
		var want [][]string
		for _, s := range task.Sinks() {
			want = append(want, dagsterKey(s))
		}
		if !slices.EqualFunc(keys, want, slices.Equal) {
			t.Errorf("%s: materialized %v, want %v", task.Name, keys, want)
		}
		wantChecks := 0
		if task.Contract != nil {
			wantChecks = 1
		}
		if len(checks) != wantChecks || wantChecks == 1 && !slices.Equal(checks[0], want[0]) {
			t.Errorf("%s: checks on %v, want %d on %v", task.Name, checks, wantChecks, want)
		}
	}
}

// TestAirflowXCom_Quickstart runs a generated quickstart task with the
// real weir binary under both operators' stubs: the task's XCom is weir's
// JSON report (BashOperator: the last stdout line; KubernetesPodOperator:
// the pod's /airflow/xcom/return.json, which weir writes because the pod
// spec sets WEIR_REPORT_FILE).
func TestAirflowXCom_Quickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	path := filepath.Join(copyQuickstart(t), "weir.yaml")
	f := quickstartFile(t, path)
	for _, op := range []string{OperatorBash, OperatorKubernetes} {
		files, err := Airflow(f, Options{WeirBin: bin, DagfilePath: path, Operator: op})
		if err != nil {
			t.Fatal(err)
		}
		dag := writeTemp(t, "dag.py", files["weir_quickstart.py"])
		var got struct {
			Outcome string `json:"outcome"`
			XCom    any    `json:"xcom"`
		}
		out := runPython(t, nil, "weir_inspect.py", "airflow", dag, "bronze_orders", "1")
		if err := json.Unmarshal(out, &got); err != nil || got.Outcome != "success" {
			t.Fatalf("%s: %v\n%s", op, err, out)
		}
		report, _ := got.XCom.(map[string]any)
		if s, ok := got.XCom.(string); ok { // the BashOperator pushes the line as it is
			json.Unmarshal([]byte(s), &report)
		}
		if report["task"] != "bronze_orders" || report["run_id"] == nil || report["rows_out"] == nil {
			t.Errorf("%s: XCom %v: want the run report", op, got.XCom)
		}
	}
}
