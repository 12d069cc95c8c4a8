package generate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/report/pipes"
)

var (
	pythonOnce sync.Once
	pythonExe  string
)

// python3 returns the python3 executable (resolved past version-manager
// shims, which are slow to start); without one the test skips, or fails when
// CI=true (CI never skips).
func python3(t *testing.T) string {
	t.Helper()
	pythonOnce.Do(func() {
		p, err := exec.LookPath("python3")
		if err != nil {
			return
		}
		pythonExe = p
		if out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output(); err == nil && len(out) > 1 {
			pythonExe = strings.TrimSpace(string(out))
		}
	})
	if pythonExe != "" {
		return pythonExe
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("python3 is not installed: the generated Python cannot be checked (CI=true never skips); install python3")
	}
	t.Skip("python3 is not installed")
	return ""
}

// runPython runs python3 with the stubs on PYTHONPATH and returns stdout.
func runPython(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	stubs, err := filepath.Abs("testdata/stubs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python3(t), args...)
	cmd.Env = append(os.Environ(), append([]string{"PYTHONPATH=" + stubs, "PYTHONDONTWRITEBYTECODE=1"}, env...)...)
	cmd.Dir = stubs
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// writeTemp writes data into a temporary file named name and returns its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// selected returns the tasks a case selects, by name.
func selected(t *testing.T, f *dagfile.File, opts Options) map[string]*dagfile.Task {
	t.Helper()
	sel, err := f.Select(opts.Select...)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*dagfile.Task{}
	for _, task := range sel {
		m[task.Name] = task
	}
	return m
}

// selectedUpstream is t's upstream tasks within the selection.
func selectedUpstream(task *dagfile.Task, sel map[string]*dagfile.Task) []string {
	up := []string{}
	for _, u := range task.Upstream {
		if sel[u] != nil {
			up = append(up, u)
		}
	}
	return up
}

type airflowTask struct {
	Operator       string   `json:"operator"`
	Upstream       []string `json:"upstream"`
	Argv           []string `json:"argv"`
	Retries        int      `json:"retries"`
	AirflowRetries int      `json:"airflow_retries"`
	RetryDelay     float64  `json:"retry_delay"`
	Timeout        float64  `json:"timeout"`
	Pool           string   `json:"pool"`
	Inlets         []string `json:"inlets"`
	Outlets        []string `json:"outlets"`
	XComPush       bool     `json:"xcom_push"`
	Secrets        []string `json:"secrets"`
	SkipOnExitCode []int    `json:"skip_on_exit_code"`
	Pod            any      `json:"pod,omitempty"` // KubernetesPodOperator: image, namespace, resources, volumes…
}

type airflowDAG struct {
	DagID         string                  `json:"dag_id"`
	Schedule      *string                 `json:"schedule"`
	MaxActiveRuns int                     `json:"max_active_runs"`
	Catchup       bool                    `json:"catchup"`
	Tasks         map[string]*airflowTask `json:"tasks"`
}

// wantAirflow is the DAG the dagfile describes, as the stubs record it
// from the generated file at py.
func wantAirflow(t *testing.T, f *dagfile.File, opts Options, py string) airflowDAG {
	opts, _ = opts.withDefaults(f)
	dagfilePath := filepath.Join(filepath.Dir(py), localDagfile(f, opts)) // found from the file
	if opts.Operator == OperatorKubernetes {
		dagfilePath = podDagfile(f, opts)
	}
	d := airflowDAG{DagID: f.Name, MaxActiveRuns: 1, Tasks: map[string]*airflowTask{}}
	if f.Schedule != "" {
		d.Schedule = &f.Schedule
	}
	sel := selected(t, f, opts)
	for name, task := range sel {
		at := &airflowTask{Operator: "BashOperator", Upstream: selectedUpstream(task, sel),
			Argv:    []string{opts.WeirBin, "once", "--task", name, "-f", dagfilePath, "--json"},
			Retries: task.Retries, AirflowRetries: task.Retries + LockRetries,
			RetryDelay: task.RetryDelay.Seconds(), Timeout: task.Timeout.Seconds(), Pool: task.Pool,
			Secrets: []string{}, SkipOnExitCode: []int{ExitLocked, ExitBadInput}, Inlets: []string{}, XComPush: true}
		if opts.Operator == OperatorKubernetes {
			at.Operator, at.Secrets = "KubernetesPodOperator", append(at.Secrets, f.Vars(task)...)
			at.Pod = wantPod(f, task, opts)
		}
		for _, s := range task.Sinks() {
			at.Outlets = append(at.Outlets, assetURI(f, s))
		}
		for _, s := range task.Sources() {
			at.Inlets = append(at.Inlets, assetURI(f, s))
		}
		d.Tasks[name] = at
	}
	return d
}

// wantPod is what the stubs record of a KubernetesPodOperator's pod: the
// image and the deploy: settings, as JSON would decode them.
func wantPod(f *dagfile.File, task *dagfile.Task, opts Options) any {
	d := task.Deploy
	pod := map[string]any{"image": opts.Image}
	for k, v := range map[string]string{"image_pull_policy": d.ImagePullPolicy, "namespace": d.Namespace, "service_account_name": d.ServiceAccount} {
		if v != "" {
			pod[k] = v
		}
	}
	if len(d.Requests)+len(d.Limits) > 0 {
		pod["container_resources"] = map[string]any{"requests": anyMap(d.Requests), "limits": anyMap(d.Limits)}
	}
	if len(d.Volumes) > 0 {
		var vols, mounts []any
		for _, v := range d.Volumes {
			vol := map[string]any{"name": v.Name}
			switch {
			case v.Claim != "":
				vol["persistent_volume_claim"] = map[string]any{"claim_name": v.Claim}
			case v.ConfigMap != "":
				vol["config_map"] = map[string]any{"name": v.ConfigMap}
			default:
				vol["secret"] = map[string]any{"secret_name": v.Secret}
			}
			vols = append(vols, vol)
			mounts = append(mounts, map[string]any{"name": v.Name, "mount_path": v.MountPath, "read_only": v.ReadOnly})
		}
		pod["volumes"], pod["volume_mounts"] = vols, mounts
	}
	return pod
}

func anyMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestAirflow_RecordedGraph(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases() {
		if !slices.Contains(c.targets, "airflow") || strings.HasPrefix(c.name, "backfill") { // one task per dagfile task; the fan-out: TestFanout_AirflowRun
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, _ := renderCase(t, c)
			files, err := Airflow(f, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := writeTemp(t, "weir_"+f.Name+".py", files["weir_"+f.Name+".py"])
			runPython(t, nil, "-m", "py_compile", path)
			want := wantAirflow(t, f, c.opts, path)
			for _, version := range []string{"2", "3"} {
				var got airflowDAG
				out := runPython(t, []string{"WEIR_STUB_AIRFLOW=" + version}, "weir_inspect.py", "airflow", path)
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("airflow %s: %v\n%s", version, err, out)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("airflow %s: recorded DAG differs from the dagfile\n got: %s\nwant: %s", version, js(got), js(want))
				}
			}
		})
	}
}

type dagsterAsset struct {
	Function   string     `json:"function"`
	Keys       [][]string `json:"keys"`
	Deps       [][]string `json:"deps"`
	Group      string     `json:"group"`
	Tags       []string   `json:"tags"`
	Retries    int        `json:"retries"`
	RetryDelay int        `json:"retry_delay"`
	Pool       string     `json:"pool"`
	Checks     []string   `json:"checks"` // asset/key:check of its contract
}

type dagsterDefs struct {
	Assets    map[string]*dagsterAsset `json:"assets"`
	Schedules []struct {
		Job  string `json:"job"`
		Cron string `json:"cron"`
	} `json:"schedules"`
}

// wantDagster is what the dagfile describes, as the dagster stub records it.
func wantDagster(t *testing.T, f *dagfile.File, opts Options) dagsterDefs {
	sel := selected(t, f, opts)
	d := dagsterDefs{Assets: map[string]*dagsterAsset{}}
	for name, task := range sel {
		a := &dagsterAsset{Function: "weir_" + name, Group: f.Name, Tags: append([]string{}, task.Tags...), Deps: [][]string{},
			Retries: task.Retries, RetryDelay: int(task.RetryDelay.Seconds()), Pool: task.Pool, Checks: []string{}}
		for _, s := range task.Sinks() {
			a.Keys = append(a.Keys, dagsterKey(s))
		}
		if task.Contract != nil {
			a.Checks = append(a.Checks, pipes.AssetKey(dagsterKey(task.Sink()))+":"+pipes.ContractCheck)
		}
		for _, u := range selectedUpstream(task, sel) {
			a.Deps = append(a.Deps, readKeys(task, f.Task(u))...)
		}
		slices.SortFunc(a.Deps, slices.Compare)
		d.Assets[name] = a
	}
	if f.Schedule != "" {
		d.Schedules = append(d.Schedules, struct {
			Job  string `json:"job"`
			Cron string `json:"cron"`
		}{f.Name, f.Cron()})
	}
	return d
}

// readKeys are the keys of the tables of up that task reads, or all of them.
func readKeys(task, up *dagfile.Task) [][]string {
	var read, all [][]string
	for _, w := range up.Sinks() {
		all = append(all, dagsterKey(w))
		if slices.Contains(task.Sources(), w) {
			read = append(read, dagsterKey(w))
		}
	}
	if len(read) > 0 {
		return read
	}
	return all
}

func dagsterKey(a dagfile.TableAddr) []string {
	parts := a.Parts()
	for i, p := range parts {
		parts[i] = pipes.KeyPart(p)
	}
	return parts
}

func TestDagster_RecordedDefinitions(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases() {
		if !slices.Contains(c.targets, "dagster") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, _ := renderCase(t, c)
			files, err := Dagster(f, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			path := writeTemp(t, "definitions.py", files["definitions.py"])
			runPython(t, nil, "-m", "py_compile", path)
			var got dagsterDefs
			out := runPython(t, nil, "weir_inspect.py", "dagster", path)
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if want := wantDagster(t, f, c.opts); !reflect.DeepEqual(got, want) {
				t.Errorf("recorded definitions differ from the dagfile\n got: %s\nwant: %s", js(got), js(want))
			}
		})
	}
}

func js(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}
