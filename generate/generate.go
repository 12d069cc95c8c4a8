package generate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/template"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/templates"
)

// Exit codes of `weir once` that the generated code treats specially.
const (
	ExitLocked   = 75 // EX_TEMPFAIL: the sink is locked by another run; retried
	ExitBadInput = 2  // bad input, caught before a row moved; never retried
)

// LockRetries is how many tries beyond the dagfile's retries a task gets
// for exit 75, so a lock held by another run never fails a task that has
// retries: 0.
const LockRetries = 3

// Where a generated task's run report goes, besides its last stdout line
// (which Airflow's BashOperator pushes to XCom): `weir once` writes it to
// the file $WEIR_REPORT_FILE names, which the generated pod specs set to
// the KubernetesPodOperator's XCom file and to the Argo step's output
// parameter "report".
const (
	ReportFileEnv     = "WEIR_REPORT_FILE"
	AirflowXComReport = "/airflow/xcom/return.json"
	ArgoReport        = "/tmp/weir-report.json"
)

// Defaults of Options.
const (
	DefaultWeirBin = "weir"
	DefaultImage   = "weir:latest"
	DefaultSecret  = "weir-env"
)

// Operators of the Airflow target.
const (
	OperatorBash       = "bash"
	OperatorKubernetes = "kubernetes"
)

// Targets are the orchestrators Render knows, sorted.
var Targets = []string{"airflow", "argo", "dagster"}

// Options control the generated code.
type Options struct {
	// DagfilePath is the dagfile's path where the generated code runs.
	// Airflow (bash) and Dagster resolve a relative one against the folder
	// of the generated file (a worker runs tasks in a temporary directory);
	// the default is the dagfile's path relative to OutDir. Pods (Argo,
	// KubernetesPodOperator) use it as it is, in the image; their default is
	// the File's Path.
	DagfilePath string
	WeirBin     string   // the weir executable in commands (default "weir")
	Image       string   // the weir container image: KubernetesPodOperator and Argo (default: deploy: image:, else "weir:latest")
	Operator    string   // Airflow operator: "bash" (default) or "kubernetes"
	Select      []string // task selectors: NAME, tag:NAME, kind:KIND (default: every task)
	Secret      string   // the Kubernetes Secret holding the connections' variables (default "weir-env")
	OutDir      string   // the output folder: the header's regenerate command, and where relative dagfile paths start (default: the current directory)
}

// withDefaults fills the empty options and checks Operator.
func (o Options) withDefaults(f *dagfile.File) (Options, error) {
	o.WeirBin = or(o.WeirBin, DefaultWeirBin)
	o.Image = or(o.Image, f.Deploy.Image, DefaultImage)
	o.Secret = or(o.Secret, DefaultSecret)
	o.Operator = or(o.Operator, OperatorBash)
	if o.Operator != OperatorBash && o.Operator != OperatorKubernetes {
		return o, fmt.Errorf("operator %q: use %s or %s", o.Operator, OperatorBash, OperatorKubernetes)
	}
	return o, nil
}

// or returns the first non-empty string.
func or(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Render renders target (one of Targets) and returns file name → contents.
func Render(target string, f *dagfile.File, opts Options) (map[string][]byte, error) {
	switch target {
	case "airflow":
		return Airflow(f, opts)
	case "dagster":
		return Dagster(f, opts)
	case "argo":
		return Argo(f, opts)
	}
	return nil, fmt.Errorf("unknown target %q: use airflow, dagster or argo", target)
}

// Airflow renders one DAG file, weir_<name>.py, with one task per dagfile task.
func Airflow(f *dagfile.File, opts Options) (map[string][]byte, error) {
	v, err := newView(f, opts, "airflow")
	if err != nil {
		return nil, err
	}
	return render(v, map[string]string{"weir_" + v.Name + ".py": "airflow.py.tmpl"})
}

// Dagster renders definitions.py with one asset per dagfile task.
func Dagster(f *dagfile.File, opts Options) (map[string][]byte, error) {
	v, err := newView(f, opts, "dagster")
	if err != nil {
		return nil, err
	}
	return render(v, map[string]string{"definitions.py": "dagster.py.tmpl"})
}

// Argo renders <name>.workflowtemplate.yaml and, when the dagfile has a
// schedule, <name>.cronworkflow.yaml.
func Argo(f *dagfile.File, opts Options) (map[string][]byte, error) {
	v, err := newView(f, opts, "argo")
	if err != nil {
		return nil, err
	}
	files := map[string]string{v.KubeName + ".workflowtemplate.yaml": "argo-workflowtemplate.yaml.tmpl"}
	if v.Cron != "" {
		files[v.KubeName+".cronworkflow.yaml"] = "argo-cronworkflow.yaml.tmpl"
	}
	return render(v, files)
}

var tmpl = template.Must(template.New("").Funcs(funcs).ParseFS(templates.FS, "*.tmpl"))

// render executes each template with v.
func render(v *view, files map[string]string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, t := range files {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, t, v); err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		out[name] = b.Bytes()
	}
	return out, nil
}

// Write writes files into dir (created if needed), each through a temporary
// file renamed into place, and returns the paths written, sorted.
func Write(dir string, files map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	var paths []string
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := writeFile(path, data); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}

// writeFile replaces path with data atomically.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".weir-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// localDagfile is the dagfile path the Python targets join to the folder of
// the generated file: DagfilePath when set, else the dagfile relative to
// OutDir (absolute when that cannot be computed).
func localDagfile(f *dagfile.File, o Options) string {
	if o.DagfilePath != "" {
		return o.DagfilePath
	}
	out, err1 := filepath.Abs(or(o.OutDir, "."))
	path, err2 := filepath.Abs(f.Path)
	if err1 != nil || err2 != nil {
		return f.Path
	}
	if rel, err := filepath.Rel(out, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// podDagfile is the dagfile path inside a pod: DagfilePath when set, else
// deploy: dagfile:, else the File's Path (relative to the image's working
// directory).
func podDagfile(f *dagfile.File, o Options) string {
	return or(o.DagfilePath, f.Deploy.Dagfile, f.Path)
}

// Command returns the argv that runs task t: weir once --task NAME -f DAGFILE --json.
func Command(t *dagfile.Task, weirBin, dagfilePath string) []string {
	return append([]string{weirBin}, args(t.Name, dagfilePath)...)
}

// fanoutArgs are weir's arguments in a step of a backfill's fan-out:
// VERB --task NAME -f DAGFILE FLAGS…; the claim store and the shards come
// from the task's backfill: in the dagfile (its URL from the environment).
func fanoutArgs(verb, task, dagfilePath string, flags ...string) []string {
	return append([]string{verb, "--task", task, "-f", dagfilePath}, flags...)
}

// args are the arguments of weir in every generated task.
func args(task, dagfilePath string) []string {
	return []string{"once", "--task", task, "-f", dagfilePath, "--json"}
}
