package generate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"gopkg.in/yaml.v3"
)

// TestEndToEndQuickstart runs the quickstart the way each orchestrator
// would: every generated task's exact argv (Airflow's as the recording stub
// reads it from the generated DAG file, Argo's from the WorkflowTemplate's
// container, with the image's weir at argv[0]), as a subprocess, in the
// generated dependency order. The sinks must equal those of
// `weir run --once` on a fresh copy.
func TestEndToEndQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	direct := copyQuickstart(t)
	run(t, bin, "run", "--once", "-f", filepath.Join(direct, "weir.yaml"))
	targets := map[string]func(t *testing.T, bin, dagfile string) map[string]generated{
		"airflow": airflowTasks, "argo": argoTasks,
	}
	for name, tasks := range targets {
		t.Run(name, func(t *testing.T) {
			dir := copyQuickstart(t)
			byName := tasks(t, bin, filepath.Join(dir, "weir.yaml"))
			for _, task := range dependencyOrder(t, byName) {
				argv := byName[task].argv
				if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("task %s (%q): %v\n%s", task, argv, err, out)
				}
			}
			for _, table := range []string{"bronze.orders", "bronze.customers", "silver.orders", "silver.orders__quarantine", "gold.revenue_by_country"} {
				got, want := readSink(t, bin, dir, table), readSink(t, bin, direct, table)
				if got != want || got == "" {
					t.Errorf("%s: the %s-ordered run and weir run --once differ: %s", table, name, firstDiff(got, want))
				}
			}
		})
	}
}

// generated is one orchestrator task: its command and upstream tasks.
type generated struct {
	argv     []string
	upstream []string
}

func quickstartFile(t *testing.T, path string) *dagfile.File {
	t.Helper()
	f, err := dagfile.LoadStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func airflowTasks(t *testing.T, bin, path string) map[string]generated {
	files, err := Airflow(quickstartFile(t, path), Options{WeirBin: bin, DagfilePath: path})
	if err != nil {
		t.Fatal(err)
	}
	py := writeTemp(t, "weir_quickstart.py", files["weir_quickstart.py"])
	var dag airflowDAG
	out := runPython(t, []string{"WEIR_STUB_AIRFLOW=3"}, "weir_inspect.py", "airflow", py)
	if err := json.Unmarshal(out, &dag); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byName := map[string]generated{}
	for name, task := range dag.Tasks {
		byName[name] = generated{argv: task.Argv, upstream: task.Upstream}
	}
	return byName
}

func argoTasks(t *testing.T, bin, path string) map[string]generated {
	f := quickstartFile(t, path)
	files, err := Argo(f, Options{Image: "weir:e2e", DagfilePath: path})
	if err != nil {
		t.Fatal(err)
	}
	var wt argoDoc
	if err := yaml.Unmarshal(files[kubeName(f.Name)+".workflowtemplate.yaml"], &wt); err != nil {
		t.Fatal(err)
	}
	byName := map[string]generated{}
	for name, task := range gotArgo(t, wt) {
		argv := append([]string{bin}, task.Argv[1:]...) // the image's weir
		byName[name] = generated{argv: argv, upstream: task.Deps}
	}
	return byName
}

// dependencyOrder sorts tasks so each runs after its upstreams.
func dependencyOrder(t *testing.T, tasks map[string]generated) []string {
	var order []string
	done := map[string]bool{}
	for len(order) < len(tasks) {
		progressed := false
		for _, name := range sortedKeys(tasks) {
			if !done[name] && all(tasks[name].upstream, done) {
				order, done[name], progressed = append(order, name), true, true
			}
		}
		if !progressed {
			t.Fatalf("generated DAG has a cycle: %v", tasks)
		}
	}
	return order
}

func all(names []string, done map[string]bool) bool {
	return !slices.ContainsFunc(names, func(n string) bool { return !done[n] })
}

func sortedKeys(m map[string]generated) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func buildWeir(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weir")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/weir")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build weir: %v\n%s", err, out)
	}
	return bin
}

// copyQuickstart copies examples/quickstart without its lake.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	return copyQuickstartTo(t, t.TempDir())
}

// copyQuickstartTo copies examples/quickstart without its lake into base/quickstart.
func copyQuickstartTo(t *testing.T, base string) string {
	t.Helper()
	dst := filepath.Join(base, "quickstart")
	src := filepath.Join("..", "examples", "quickstart")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "lake" && d.IsDir() {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("weir %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// readSink reads a lake table as CSV, rows sorted (files may come in any order).
func readSink(t *testing.T, bin, dir, table string) string {
	t.Helper()
	lake := "iceberg://?catalog=sql&uri=sqlite://" + filepath.Join(dir, "lake", "catalog.db") + "&warehouse=file://" + filepath.Join(dir, "lake")
	out := run(t, bin, "read", lake, "--table", table, "--to", "-")
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(out, "\r\n", "\n")), "\n")
	if len(lines) > 1 {
		sort.Strings(lines[1:])
	}
	// _weir_run differs between runs by design: drop columns that name a run.
	return dropRunColumns(lines)
}

func dropRunColumns(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	header := strings.Split(lines[0], ",")
	keep := make([]bool, len(header))
	for i, h := range header {
		keep[i] = h != "_weir_run"
	}
	var b strings.Builder
	for _, l := range lines {
		cells := strings.Split(l, ",")
		for i, c := range cells {
			if i < len(keep) && keep[i] {
				b.WriteString(c + ",")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ": " + g[i] + " vs " + w[i]
		}
	}
	return "lengths " + strconv.Itoa(len(g)) + " vs " + strconv.Itoa(len(w))
}

// TestDeployedQuickstart runs every task of the generated Airflow DAG and
// Dagster definitions the way a worker does: the files generated from a
// relative -f and -o, each task executed by the orchestrator's operator
// (the stubs' BashOperator.execute, the asset function) from a fresh
// temporary working directory, with no environment but PATH, HOME and the
// variables the task's generated spec passes (none for the quickstart).
func TestDeployedQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the weir binary")
	}
	bin := buildWeir(t)
	stubs, err := filepath.Abs("testdata/stubs")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"airflow", "dagster"} {
		t.Run(target, func(t *testing.T) {
			// Below the package's folder, so that the relative paths
			// (.weir-deploy-N/quickstart/weir.yaml) name nothing from
			// another working directory.
			base, err := os.MkdirTemp(".", ".weir-deploy-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			dir := copyQuickstartTo(t, base)
			relDagfile := filepath.Join(dir, "weir.yaml")
			relOut := filepath.Join(base, "dags")
			f := quickstartFile(t, relDagfile)
			files, err := Render(target, f, Options{WeirBin: bin, OutDir: relOut})
			if err != nil {
				t.Fatal(err)
			}
			paths, err := Write(relOut, files)
			if err != nil || len(paths) != 1 {
				t.Fatalf("write: %v %v", paths, err)
			}
			py, _ := filepath.Abs(paths[0])
			for _, task := range f.Order() {
				if vars := f.Vars(task); len(vars) > 0 {
					t.Fatalf("task %s needs %v: the quickstart needs no server", task.Name, vars)
				}
				cmd := exec.Command(python3(t), filepath.Join(stubs, "weir_inspect.py"), target, py, task.Name, "1")
				cmd.Dir = t.TempDir()
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PYTHONPATH=" + stubs,
					"PYTHONDONTWRITEBYTECODE=1", "WEIR_STUB_AIRFLOW=3"}
				out, err := cmd.Output()
				var res struct{ Outcome, Message string }
				if jerr := json.Unmarshal(out, &res); err != nil || jerr != nil || res.Outcome != "success" {
					t.Fatalf("task %s from %s: %v %v %s", task.Name, cmd.Dir, err, jerr, out)
				}
			}
			abs, _ := filepath.Abs(dir)
			if got := readSink(t, bin, abs, "gold.revenue_by_country"); strings.Count(got, "\n") < 2 {
				t.Errorf("gold.revenue_by_country after the %s run: %q", target, got)
			}
		})
	}
}

// TestMedallion_EachTaskGetsItsOwnEnv: each task of examples/medallion,
// given only the variables its generated pod spec passes (the Argo
// container's env, the KubernetesPodOperator's secrets), resolves (what
// weir once --task checks before it runs), and never needs another task's.
func TestMedallion_EachTaskGetsItsOwnEnv(t *testing.T) {
	const path = "../examples/medallion/weir.yaml"
	f := quickstartFile(t, path)
	files, err := Argo(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wt argoDoc
	if err := yaml.Unmarshal(files[kubeName(f.Name)+".workflowtemplate.yaml"], &wt); err != nil {
		t.Fatal(err)
	}
	specs := map[string]map[string][]string{"argo": {}, "airflow": {}} // target → task → variables passed
	for _, task := range f.Tasks {
		at := gotArgo(t, wt)[kubeName(task.Name)]
		for _, e := range at.Env {
			name, _, _ := strings.Cut(e, "=")
			specs["argo"][task.Name] = append(specs["argo"][task.Name], name)
		}
	}
	py, err := Airflow(f, Options{Operator: OperatorKubernetes})
	if err != nil {
		t.Fatal(err)
	}
	var dag airflowDAG
	if err := json.Unmarshal(runPython(t, nil, "weir_inspect.py", "airflow", writeTemp(t, "weir_medallion.py", py["weir_medallion.py"])), &dag); err != nil {
		t.Fatal(err)
	}
	for name, task := range dag.Tasks {
		specs["airflow"][name] = task.Secrets
	}
	for target, byTask := range specs {
		for _, task := range f.Tasks {
			passed := byTask[task.Name]
			env := func(v string) (string, bool) {
				if slices.Contains(passed, v) {
					return "postgres://u@127.0.0.1:1/db", true
				}
				return "", false
			}
			g, err := dagfile.LoadLazy(path, env)
			if err != nil {
				t.Fatalf("%s %s: load: %v", target, task.Name, err)
			}
			if err := g.Resolve(g.Task(task.Name)); err != nil {
				t.Errorf("%s: task %s given %v: %v", target, task.Name, passed, err)
			}
			if len(passed) > 0 {
				short := func(v string) (string, bool) { x, ok := env(v); return x, ok && v != passed[0] }
				if g, _ := dagfile.LoadLazy(path, short); g.Resolve(g.Task(task.Name)) == nil {
					t.Errorf("%s: task %s resolves without %s", target, task.Name, passed[0])
				}
			}
		}
	}
}
