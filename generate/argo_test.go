package generate

import (
	"fmt"
	"maps"
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
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Entrypoint     string `yaml:"entrypoint"`
		ServiceAccount string `yaml:"serviceAccountName"`
		Volumes        []struct {
			Name string `yaml:"name"`
			PVC  struct {
				Claim string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
			ConfigMap struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
			Secret struct {
				Name string `yaml:"secretName"`
			} `yaml:"secret"`
		} `yaml:"volumes"`
		Templates []argoTemplate `yaml:"templates"`
		Schedules []string       `yaml:"schedules"` // Argo ≥ 3.6 (v4 has no schedule:)
		Policy    string         `yaml:"concurrencyPolicy"`
		Workflow  struct {
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
	Deadline int `yaml:"activeDeadlineSeconds"`
	Sync     struct {
		Semaphores []struct {
			ConfigMap struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"configMapKeyRef"`
		} `yaml:"semaphores"` // Argo ≥ 3.6 (v4 has no semaphore:)
	} `yaml:"synchronization"`
	Container *struct {
		Image      string `yaml:"image"`
		PullPolicy string `yaml:"imagePullPolicy"`
		Resources  struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		Mounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
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
	Pools    []string // configmap/key of each semaphore
	Pod      []string // image, pull policy, resources, mounts (name:path:ro)
	Report   string   // the output parameter "report": the file $WEIR_REPORT_FILE names
}

// podOf lists a container's pod settings in the order wantPodArgo does.
func podOf(image, pull string, req, lim map[string]string, mounts []string) []string {
	out := []string{"image=" + image, "pull=" + pull}
	for _, k := range slices.Sorted(maps.Keys(req)) {
		out = append(out, "requests."+k+"="+req[k])
	}
	for _, k := range slices.Sorted(maps.Keys(lim)) {
		out = append(out, "limits."+k+"="+lim[k])
	}
	return append(out, mounts...)
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
			Limit: tp.Retry.Limit, Deadline: tp.Deadline, Env: []string{}, Pools: []string{}}
		var mounts []string
		for _, m := range tp.Container.Mounts {
			mounts = append(mounts, fmt.Sprintf("%s:%s:%v", m.Name, m.MountPath, m.ReadOnly))
		}
		c := tp.Container
		at.Pod = podOf(c.Image, c.PullPolicy, c.Resources.Requests, c.Resources.Limits, mounts)
		for _, sem := range tp.Sync.Semaphores {
			at.Pools = append(at.Pools, sem.ConfigMap.Name+"/"+sem.ConfigMap.Key)
		}
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
		at := argoTask{Deps: []string{}, Argv: []string{opts.WeirBin, "once", "--task", name, "-f", podDagfile(f, opts), "--json"},
			Limit: strconv.Itoa(task.Retries + LockRetries), Deadline: int(task.Timeout.Seconds()), Env: []string{}, Pools: []string{}, Report: ArgoReport}
		if task.Pool != "" {
			at.Pools = append(at.Pools, "weir-pools/"+task.Pool)
		}
		var mounts []string
		for _, v := range task.Deploy.Volumes {
			mounts = append(mounts, fmt.Sprintf("%s:%s:%v", v.Name, v.MountPath, v.ReadOnly))
		}
		at.Pod = podOf(opts.Image, task.Deploy.ImagePullPolicy, task.Deploy.Requests, task.Deploy.Limits, mounts)
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
		if !slices.Contains(c.targets, "argo") || c.name == "backfill" { // one step per task; the fan-out's steps: TestFanout_Argo
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
			checkArgoPods(t, f, wt, c.opts)
			checkCron(t, f, files)
		})
	}
}

// checkArgoPods checks the workflow-level deploy: settings: namespace,
// service account, and every task's volume declared once.
func checkArgoPods(t *testing.T, f *dagfile.File, wt argoDoc, opts Options) {
	t.Helper()
	if wt.Metadata.Namespace != f.Deploy.Namespace || wt.Spec.ServiceAccount != f.Deploy.ServiceAccount {
		t.Errorf("namespace %q, service account %q; deploy: %+v", wt.Metadata.Namespace, wt.Spec.ServiceAccount, f.Deploy)
	}
	want := map[string]string{}
	for _, task := range selected(t, f, opts) {
		for _, v := range task.Deploy.Volumes {
			want[v.Name] = "pvc=" + v.Claim + " cm=" + v.ConfigMap + " secret=" + v.Secret
		}
	}
	got := map[string]string{}
	for _, v := range wt.Spec.Volumes {
		if _, dup := got[v.Name]; dup {
			t.Errorf("volume %s declared twice", v.Name)
		}
		got[v.Name] = "pvc=" + v.PVC.Claim + " cm=" + v.ConfigMap.Name + " secret=" + v.Secret.Name
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("volumes %v, want %v", got, want)
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
	if cw.Kind != "CronWorkflow" || !slices.Equal(cw.Spec.Schedules, []string{f.Cron()}) || cw.Spec.Policy != "Forbid" || cw.Spec.Workflow.Ref.Name != kubeName(f.Name) {
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
