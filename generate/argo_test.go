package generate

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/weirhq/weir/dagfile"
	"gopkg.in/yaml.v3"
)

// argoDoc is the part of an Argo manifest the tests read.
type argoDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Entrypoint string         `yaml:"entrypoint"`
		Templates  []argoTemplate `yaml:"templates"`
		Schedule   string         `yaml:"schedule"`
		Policy     string         `yaml:"concurrencyPolicy"`
		Workflow   struct {
			Ref struct {
				Name string `yaml:"name"`
			} `yaml:"workflowTemplateRef"`
		} `yaml:"workflowSpec"`
	} `yaml:"spec"`
}

type argoTemplate struct {
	Name string `yaml:"name"`
	DAG  *struct {
		FailFast *bool `yaml:"failFast"`
		Tasks    []struct {
			Name         string   `yaml:"name"`
			Template     string   `yaml:"template"`
			Dependencies []string `yaml:"dependencies"`
		} `yaml:"tasks"`
	} `yaml:"dag"`
	Retry struct {
		Limit      string `yaml:"limit"`
		Expression string `yaml:"expression"`
	} `yaml:"retryStrategy"`
	Deadline  int `yaml:"activeDeadlineSeconds"`
	Container *struct {
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom struct {
				Secret struct {
					Name string `yaml:"name"`
					Key  string `yaml:"key"`
				} `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
	} `yaml:"container"`
	Outputs struct {
		Parameters []struct {
			Name      string `yaml:"name"`
			ValueFrom struct {
				Path    string `yaml:"path"`
				Default string `yaml:"default"`
			} `yaml:"valueFrom"`
		} `yaml:"parameters"`
	} `yaml:"outputs"`
}

// argoTask is one task of the DAG as the tests compare it.
type argoTask struct {
	Deps     []string
	Argv     []string
	Limit    string
	Deadline int
	Env      []string // NAME=secret/key
	Report   string   // the output parameter "report": the file $WEIR_REPORT_FILE names
}

// gotArgo reads the DAG out of a WorkflowTemplate.
func gotArgo(t *testing.T, wt argoDoc) map[string]argoTask {
	t.Helper()
	byName := map[string]argoTemplate{}
	for _, tp := range wt.Spec.Templates {
		byName[tp.Name] = tp
	}
	entry := byName[wt.Spec.Entrypoint]
	if entry.DAG == nil || entry.DAG.FailFast == nil || *entry.DAG.FailFast {
		t.Fatalf("entrypoint %q is not a DAG with failFast: false", wt.Spec.Entrypoint)
	}
	got := map[string]argoTask{}
	for _, task := range entry.DAG.Tasks {
		tp := byName[task.Template]
		if tp.Container == nil {
			t.Fatalf("task %s: template %q has no container", task.Name, task.Template)
		}
		at := argoTask{Deps: append([]string{}, task.Dependencies...), Argv: slices.Concat(tp.Container.Command, tp.Container.Args),
			Limit: tp.Retry.Limit, Deadline: tp.Deadline, Env: []string{}}
		for _, e := range tp.Container.Env {
			if e.Name == ReportFileEnv {
				for _, p := range tp.Outputs.Parameters {
					if p.Name == "report" && p.ValueFrom.Path == e.Value && p.ValueFrom.Default != "" {
						at.Report = e.Value
					}
				}
				continue
			}
			if e.Value != "" {
				t.Errorf("task %s: env %s is inlined", task.Name, e.Name)
			}
			at.Env = append(at.Env, e.Name+"="+e.ValueFrom.Secret.Name+"/"+e.ValueFrom.Secret.Key)
		}
		got[task.Name] = at
	}
	return got
}

// wantArgo is the DAG the dagfile describes, in Argo's names.
func wantArgo(t *testing.T, f *dagfile.File, opts Options) map[string]argoTask {
	opts, _ = opts.withDefaults(f)
	sel := selected(t, f, opts)
	want := map[string]argoTask{}
	for name, task := range sel {
		at := argoTask{Deps: []string{}, Argv: []string{opts.WeirBin, "once", "--task", name, "-f", opts.DagfilePath, "--json"},
			Limit: strconv.Itoa(task.Retries + LockRetries), Deadline: int(task.Timeout.Seconds()), Env: []string{}, Report: ArgoReport}
		for _, u := range selectedUpstream(task, sel) {
			at.Deps = append(at.Deps, kubeName(u))
		}
		for _, v := range f.Vars(task) {
			at.Env = append(at.Env, v+"="+opts.Secret+"/"+v)
		}
		want[kubeName(name)] = at
	}
	return want
}

func TestArgo_ParsedDAG(t *testing.T) {
	for _, c := range goldenCases() {
		if !slices.Contains(c.targets, "argo") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			f, _ := renderCase(t, c)
			files, err := Argo(f, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var wt argoDoc
			if err := yaml.Unmarshal(files[kubeName(f.Name)+".workflowtemplate.yaml"], &wt); err != nil {
				t.Fatal(err)
			}
			if wt.APIVersion != "argoproj.io/v1alpha1" || wt.Kind != "WorkflowTemplate" || wt.Metadata.Name != kubeName(f.Name) {
				t.Errorf("header: %s %s %s", wt.APIVersion, wt.Kind, wt.Metadata.Name)
			}
			if got, want := gotArgo(t, wt), wantArgo(t, f, c.opts); !reflect.DeepEqual(got, want) {
				t.Errorf("DAG differs from the dagfile\n got: %s\nwant: %s", js(got), js(want))
			}
			checkCron(t, f, files)
		})
	}
}

// checkCron checks the CronWorkflow (present exactly when f has a schedule).
func checkCron(t *testing.T, f *dagfile.File, files map[string][]byte) {
	data, ok := files[kubeName(f.Name)+".cronworkflow.yaml"]
	if ok != (f.Schedule != "") {
		t.Fatalf("cronworkflow present %v, schedule %q", ok, f.Schedule)
	}
	if !ok {
		return
	}
	var cw argoDoc
	if err := yaml.Unmarshal(data, &cw); err != nil {
		t.Fatal(err)
	}
	if cw.Kind != "CronWorkflow" || cw.Spec.Schedule != f.Cron() || cw.Spec.Policy != "Forbid" || cw.Spec.Workflow.Ref.Name != kubeName(f.Name) {
		t.Errorf("cronworkflow: %+v", cw.Spec)
	}
}

func TestRetryExpr(t *testing.T) {
	tests := map[int]string{
		0: "asInt(lastRetry.exitCode) == 75",
		2: "asInt(lastRetry.exitCode) == 75 || (asInt(lastRetry.exitCode) != 2 && asInt(retries) < 2)",
	}
	for retries, want := range tests {
		if got := retryExpr(retries); got != want {
			t.Errorf("retryExpr(%d) = %q, want %q", retries, got, want)
		}
	}
}
