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
	cmd := exec.Command("go", "build", "-tags=duckdb_arrow", "-o", bin, "../cmd/weir")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build weir: %v\n%s", err, out)
	}
	return bin
}

// copyQuickstart copies examples/quickstart without its lake.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "quickstart")
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
