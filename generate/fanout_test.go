package generate

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/weirhq/weir/dagfile"
)

// The dagfile of the fan-out tests: events has backfill: {shards: 8,
// workers: 4, claims: claims}, customers runs before it, events_copy after.
const fanoutDagfile = "testdata/backfill/weir.yaml"

// runFanout runs the DAG (the job) of the generated file at path once
// under the stubs against the fake weir, with env on top, decodes what
// weir_inspect prints into res, and returns weir's calls in order as "VERB
// TASK FLAGS…", and with each the "VAR=value" the fake weir logged
// ($FAKE_WEIR_VAR), else "".
func runFanout(t *testing.T, target, path string, res any, env ...string) (calls, vars []string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls")
	out := runPython(t, append(env, "FAKE_WEIR_LOG="+log), "weir_inspect.py", target, path, "--run")
	if err := json.Unmarshal(out, res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		argv, v, _ := strings.Cut(line, " | ")
		w := strings.Fields(argv) // verb --task NAME -f DAGFILE flags…
		calls = append(calls, strings.Join(append([]string{w[0], w[2]}, w[5:]...), " "))
		vars = append(vars, v)
	}
	return calls, vars
}

// renderFanout renders the fan-out dagfile for target under opts.
func renderFanout(t *testing.T, target string, opts Options) map[string][]byte {
	t.Helper()
	f, err := dagfile.LoadStatic(fanoutDagfile)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Render(target, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fakeWeir is the fake weir's absolute path (testdata/fakeweir).
func fakeWeir(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("testdata/fakeweir")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestFanout_Argo(t *testing.T) {
	t.Parallel()
	files := renderFanout(t, "argo", Options{DagfilePath: "weir.yaml"})
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
		for _, target := range Targets {
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

// TestFanout_AirflowRun runs the generated DAG, both operators, as
// Airflow's scheduler would (the stubs' run: each task once its upstream
// tasks succeeded, the mapped workers' every instance) against the fake
// weir, and checks the calls: the plan once, 4 workers, the check last,
// then the downstream task; and that one failed worker fails the run, with
// neither the check nor the downstream task run.
func TestFanout_AirflowRun(t *testing.T) {
	t.Parallel()
	for _, op := range []string{OperatorBash, OperatorKubernetes} {
		files := renderFanout(t, "airflow", Options{DagfilePath: "weir.yaml", WeirBin: fakeWeir(t), Operator: op})
		path := writeTemp(t, "dag.py", files["weir_backfill.py"])
		run := func(fail string) (calls []string, res struct {
			Tasks [][]string `json:"tasks"`
			State string     `json:"state"`
		}) {
			calls, _ = runFanout(t, "airflow", path, &res, "FAKE_WEIR_FAIL="+fail)
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

// TestFanout_DagsterGraph: the task with backfill: is a graph-backed asset
// whose op graph, as the stubs record it when its composition function
// runs, is plan (a DynamicOut, after the upstream asset) → the workers
// mapped over it → the check collecting them; the job runs on the
// multiprocess executor with room for the 4 workers at once.
func TestFanout_DagsterGraph(t *testing.T) {
	t.Parallel()
	files := renderFanout(t, "dagster", Options{DagfilePath: "weir.yaml"})
	path := writeTemp(t, "definitions.py", files["definitions.py"])
	var got struct {
		Assets map[string]struct {
			Deps [][]string `json:"deps"`
			Ops  []struct {
				Op       string   `json:"op"`
				Dynamic  bool     `json:"dynamic"`
				Mapped   bool     `json:"mapped"`
				Upstream []string `json:"upstream"`
				Collects []string `json:"collects"`
				Retries  int      `json:"retries"`
			} `json:"ops"`
		} `json:"assets"`
		Jobs []struct {
			Executor struct {
				Name   string         `json:"name"`
				Config map[string]int `json:"config"`
			} `json:"executor"`
		} `json:"jobs"`
	}
	out := runPython(t, nil, "weir_inspect.py", "dagster", path)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var ops []string
	for _, o := range got.Assets["events"].Ops {
		kind := map[bool]string{true: " (fans out)"}[o.Dynamic] + map[bool]string{true: " (mapped)"}[o.Mapped]
		if len(o.Collects) > 0 {
			kind += " (collects " + strings.Join(o.Collects, ",") + ")"
		}
		ops = append(ops, o.Op+kind+" after "+strings.Join(o.Upstream, ","))
	}
	want := []string{"weir_events_plan (fans out) after in:upstream_0", "weir_events_workers (mapped) after weir_events_plan",
		"weir_events_check (collects workers) after weir_events_workers"}
	if !slices.Equal(ops, want) {
		t.Errorf("events' ops:\n%s\nwant:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	if deps := got.Assets["events"].Deps; !reflect.DeepEqual(deps, [][]string{{"wh", "bronze", "customers"}}) {
		t.Errorf("events' deps = %v, want the customers table", deps)
	}
	if _, ok := got.Assets["events_copy"]; !ok || len(got.Assets["events_copy"].Ops) != 0 {
		t.Errorf("events_copy: %+v, want an ordinary asset", got.Assets["events_copy"])
	}
	if len(got.Jobs) != 1 || got.Jobs[0].Executor.Name != "multiprocess" || got.Jobs[0].Executor.Config["max_concurrent"] != 4 {
		t.Errorf("jobs = %+v, want one on the multiprocess executor, max_concurrent 4", got.Jobs)
	}
}

// TestFanout_DagsterRun runs the generated job under the stubs (each
// asset once its deps are materialized, a graph-backed asset's ops as
// steps, the mapped workers at the same time) against the fake weir with
// the claim store's URL in the code location's environment only: the plan
// once, 4 workers at once (the fake weir holds each until all 4 have
// started), the check, then the downstream asset, each seeing the URL; and
// that one failed worker fails the run, with neither the check nor the
// downstream asset run, and the table not materialized.
func TestFanout_DagsterRun(t *testing.T) {
	t.Parallel()
	files := renderFanout(t, "dagster", Options{DagfilePath: "weir.yaml", WeirBin: fakeWeir(t)})
	const claims = "postgres://weir:claims-s3cret@claims-db:5432/claims"
	path := writeTemp(t, "definitions.py", files["definitions.py"])
	type result struct {
		Steps        [][]string `json:"steps"`
		Materialized [][]string `json:"materialized"`
		State        string     `json:"state"`
	}
	run := func(env ...string) (calls []string, res result) {
		calls, vars := runFanout(t, "dagster", path, &res, append(env, "FAKE_WEIR_VAR=WEIR_CLAIMS_URL", "WEIR_CLAIMS_URL="+claims)...)
		for i, v := range vars {
			if v != "WEIR_CLAIMS_URL="+claims {
				t.Errorf("weir %s ran with %q, want the claim store's URL from the environment", calls[i], v)
			}
		}
		return calls, res
	}
	calls, res := run("FAKE_WEIR_BARRIER=worker:4")
	want := []string{"once customers --json", "backfill events", "worker events --wait", "worker events --wait",
		"worker events --wait", "worker events --wait", "worker events", "once events_copy --json"}
	if !slices.Equal(calls, want) || res.State != "success" || len(res.Materialized) != 3 {
		t.Errorf("calls\n%s\nstate %s, materialized %v; want\n%s\nsuccess, all 3 tables", strings.Join(calls, "\n"), res.State, res.Materialized, strings.Join(want, "\n"))
	}
	calls, res = run("FAKE_WEIR_FAIL=worker:2")
	want = want[:6]
	states := map[string]string{}
	for _, s := range res.Steps {
		states[s[0]] = s[1]
	}
	failed := 0
	for i := range 4 {
		if strings.HasPrefix(states[fmt.Sprintf("weir_events_workers[%d]", i)], "failure") {
			failed++
		}
	}
	if !slices.Equal(calls, want) || res.State != "failure" || failed != 1 ||
		states["weir_events_check"] != "skipped" || states["weir_events_copy"] != "skipped" ||
		!reflect.DeepEqual(res.Materialized, [][]string{{"wh", "bronze", "customers"}}) {
		t.Errorf("second worker failing: calls\n%s\nsteps %v (%s), materialized %v; want\n%s\none worker failed, the check and events_copy skipped, only customers materialized",
			strings.Join(calls, "\n"), res.Steps, res.State, res.Materialized, strings.Join(want, "\n"))
	}
}

// TestDagsterStub_RejectsMisuse: the dagster stubs fail, at import or at
// run, on what dagster rejects, so the fan-out tests cannot pass with code
// the real dagster would refuse; the first case is the correct shape.
func TestDagsterStub_RejectsMisuse(t *testing.T) {
	t.Parallel()
	const base = `import dagster as dg

@dg.op(out=dg.DynamicOut(int))
def plan(context):
    {PLAN}

@dg.op{WORK_ARGS}
def work(context, n: int) -> int:
    {WORK}

@dg.op(out=dg.Out(dg.Nothing))
def check(context, ns: list):
    {CHECK}

@dg.graph_asset(key=dg.AssetKey(["t"]), metadata={"weir/task": "t"}{ASSET_ARGS})
def t():
    {COMPOSE}

job = dg.define_asset_job(name="j", selection=dg.AssetSelection.assets(t))
defs = dg.Definitions(assets=[t], jobs=[job])
`
	good := map[string]string{
		"{WORK_ARGS}": "", "{ASSET_ARGS}": "",
		"{PLAN}":    "for i in range(3):\n        yield dg.DynamicOutput(i, mapping_key=str(i))",
		"{WORK}":    "return n",
		"{CHECK}":   "assert ns == [0, 1, 2]",
		"{COMPOSE}": "return check(plan().map(work).collect())",
	}
	tests := []struct {
		name, key, value, want string
	}{
		{"correct", "", "", ""},
		{"mapping key twice", "{PLAN}", "yield dg.DynamicOutput(1, mapping_key=\"a\")\n    yield dg.DynamicOutput(2, mapping_key=\"a\")", "yielded twice"},
		{"mapping key not a name", "{PLAN}", "yield dg.DynamicOutput(1, mapping_key=\"a-1\")", "only letters"},
		{"plain output from a DynamicOut", "{PLAN}", "return 1", "yield DynamicOutputs"},
		{"Output yielded from a DynamicOut", "{PLAN}", "yield 1", "not a DynamicOutput"},
		{"dynamic output not mapped", "{COMPOSE}", "return check(plan())", "use .map or .collect"},
		{"Nothing input as a parameter", "{WORK_ARGS}", `(ins={"n": dg.In(dg.Nothing)})`, "cannot be a parameter"},
		{"value for a Nothing output", "{CHECK}", "return 1", "for a Nothing output"},
		{"wrong type", "{WORK}", "return str(n)", "is no int"},
		{"no output returned", "{COMPOSE}", "check(plan().map(work).collect())", "return the output"},
		{"graph_asset takes no retry_policy", "{ASSET_ARGS}", ", retry_policy=dg.RetryPolicy(max_retries=1)", "unexpected keyword"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := base
			for k, v := range good {
				if k == tc.key {
					v = tc.value
				}
				src = strings.ReplaceAll(src, k, v)
			}
			path := writeTemp(t, "definitions.py", []byte(src))
			stubs, err := filepath.Abs("testdata/stubs")
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python3(t), "weir_inspect.py", "dagster", path, "--run")
			cmd.Env = append(os.Environ(), "PYTHONPATH="+stubs, "PYTHONDONTWRITEBYTECODE=1")
			cmd.Dir = stubs
			out, err := cmd.CombinedOutput()
			switch {
			case tc.want == "" && (err != nil || !strings.Contains(string(out), `"state": "success"`)):
				t.Errorf("the correct shape: %v\n%s", err, out)
			case tc.want != "" && (err == nil || !strings.Contains(string(out), tc.want)):
				t.Errorf("want a failure saying %q, got %v\n%s", tc.want, err, out)
			}
		})
	}
}
