package generate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weirhq/weir/dagfile"
)

// The dagfile of the fan-out tests: events has backfill: {shards: 8,
// workers: 4, claims: claims}, customers runs before it, events_copy after.
const fanoutDagfile = "testdata/backfill/weir.yaml"

func TestFanout_Argo(t *testing.T) {
	t.Parallel()
	f, err := dagfile.LoadStatic(fanoutDagfile)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Argo(f, Options{DagfilePath: "weir.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	var wt argoDoc
	if err := yaml.Unmarshal(files["backfill.workflowtemplate.yaml"], &wt); err != nil {
		t.Fatal(err)
	}
	var dag []struct {
		Name         string   `yaml:"name"`
		Template     string   `yaml:"template"`
		Dependencies []string `yaml:"dependencies"`
		WithSequence *struct {
			Count string `yaml:"count"`
		} `yaml:"withSequence"`
	}
	var raw struct {
		Spec struct {
			Templates []struct {
				Name string `yaml:"name"`
				DAG  struct {
					Tasks yaml.Node `yaml:"tasks"`
				} `yaml:"dag"`
			} `yaml:"templates"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(files["backfill.workflowtemplate.yaml"], &raw); err != nil {
		t.Fatal(err)
	}
	if err := raw.Spec.Templates[0].DAG.Tasks.Decode(&dag); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dag {
		n := ""
		if d.WithSequence != nil {
			n = " ×" + d.WithSequence.Count
		}
		got = append(got, d.Name+n+" after "+strings.Join(d.Dependencies, ","))
	}
	want := []string{"customers after ", "events-plan after customers", "events-workers ×4 after events-plan",
		"events-check after events-workers", "events-copy after events-check"}
	if !slices.Equal(got, want) {
		t.Errorf("DAG:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	steps := gotArgo(t, wt)
	wantArgs := map[string][]string{
		"events-plan":    {"weir", "backfill", "--task", "events", "-f", "weir.yaml"},
		"events-workers": {"weir", "worker", "--task", "events", "-f", "weir.yaml", "--wait"},
		"events-check":   {"weir", "worker", "--task", "events", "-f", "weir.yaml"},
	}
	for name, argv := range wantArgs {
		s := steps[name]
		if !slices.Equal(s.Argv, argv) {
			t.Errorf("%s argv = %v, want %v", name, s.Argv, argv)
		}
		// The claim store's URL comes from the Secret, as the task's
		// other connections do; nothing is inlined.
		if want := []string{"APP_PASS=weir-env/APP_PASS", "WEIR_CLAIMS_URL=weir-env/WEIR_CLAIMS_URL", "WH_PG_URL=weir-env/WH_PG_URL"}; !slices.Equal(s.Env, want) {
			t.Errorf("%s env = %v, want %v", name, s.Env, want)
		}
		if s.Report != "" || s.Limit != "3" || s.Deadline != 7200 {
			t.Errorf("%s: report %q, retry limit %s, deadline %d; want none, 3, 7200", name, s.Report, s.Limit, s.Deadline)
		}
	}
}

// TestFanout_NoSecrets: the claim store's URL, with its password, is never
// in the generated files, for any target or operator.
func TestFanout_NoSecrets(t *testing.T) {
	t.Setenv("WEIR_CLAIMS_URL", "postgres://weir:claims-s3cret@claims-db:5432/claims")
	t.Setenv("WH_PG_URL", "postgres://weir:wh-s3cret@wh-db:5432/wh")
	t.Setenv("APP_PASS", "app-s3cret")
	f, err := dagfile.Load(fanoutDagfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {Operator: OperatorKubernetes}} {
		for _, target := range []string{"airflow", "argo"} {
			files, err := Render(target, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range files {
				for _, secret := range []string{"s3cret", "claims-db"} {
					if strings.Contains(string(data), secret) {
						t.Errorf("%s (%s): %q is in the file", name, opts.Operator, secret)
					}
				}
			}
		}
	}
}

func TestFanout_DagsterRefused(t *testing.T) {
	f, err := dagfile.LoadStatic(fanoutDagfile)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dagster(f, Options{})
	if err == nil || !strings.Contains(err.Error(), "task events has backfill:") {
		t.Fatalf("Dagster: %v, want refused naming events", err)
	}
	if _, err := Dagster(f, Options{Select: []string{"customers", "events_copy"}}); err != nil {
		t.Errorf("Dagster without events: %v", err)
	}
}

// TestFanout_AirflowRun runs the generated DAG, both operators, as
// Airflow's scheduler would (the stubs' run: each task once its upstream
// tasks succeeded, the mapped workers' every instance) against the fake
// weir, and checks the calls: the plan once, 4 workers, the check last,
// then the downstream task; and that one failed worker fails the run, with
// neither the check nor the downstream task run.
func TestFanout_AirflowRun(t *testing.T) {
	t.Parallel()
	f, err := dagfile.LoadStatic(fanoutDagfile)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.Abs("testdata/fakeweir")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{OperatorBash, OperatorKubernetes} {
		files, err := Airflow(f, Options{DagfilePath: "weir.yaml", WeirBin: bin, Operator: op})
		if err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, "dag.py", files["weir_backfill.py"])
		run := func(fail string) (calls []string, res struct {
			Tasks [][]string `json:"tasks"`
			State string     `json:"state"`
		}) {
			log := filepath.Join(t.TempDir(), "calls")
			out := runPython(t, []string{"FAKE_WEIR_LOG=" + log, "FAKE_WEIR_FAIL=" + fail}, "weir_inspect.py", "airflow", path, "--run")
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				w := strings.Fields(line) // verb --task NAME -f DAGFILE flags…
				calls = append(calls, strings.Join(append([]string{w[0], w[2]}, w[5:]...), " "))
			}
			return calls, res
		}
		calls, res := run("")
		want := []string{"once customers --json", "backfill events", "worker events --wait", "worker events --wait",
			"worker events --wait", "worker events --wait", "worker events", "once events_copy --json"}
		if !slices.Equal(calls, want) || res.State != "success" {
			t.Errorf("%s: calls\n%s\nstate %s; want\n%s\nsuccess", op, strings.Join(calls, "\n"), res.State, strings.Join(want, "\n"))
		}
		calls, res = run("worker:2")
		want = []string{"once customers --json", "backfill events", "worker events --wait", "worker events --wait",
			"worker events --wait", "worker events --wait"}
		states := map[string]string{}
		for _, ts := range res.Tasks {
			states[ts[0]] = ts[1]
		}
		if !slices.Equal(calls, want) || res.State != "failed" || !strings.HasPrefix(states["events_workers"], "failed") ||
			states["events_check"] != "upstream_failed" || states["events_copy"] != "upstream_failed" {
			t.Errorf("%s, second worker failing: calls\n%s\nstates %v (%s); want\n%s\nthe workers failed, the rest upstream_failed",
				op, strings.Join(calls, "\n"), states, res.State, strings.Join(want, "\n"))
		}
	}
}
