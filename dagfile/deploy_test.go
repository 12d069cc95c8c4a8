package dagfile

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse_Deploy(t *testing.T) {
	data := `version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
deploy:
  image: registry.invalid/weir:1.2
  image_pull_policy: IfNotPresent
  namespace: data
  service_account: weir
  dagfile: /weir/weir.yaml
  resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {memory: 4Gi}}
  volumes:
    - {name: lake, claim: weir-lake, mount_path: /weir/lake}
tasks:
  a:
    model: {source: lake:b.x, sink: lake:s.x, sql: SELECT 1}
    deploy:
      resources: {limits: {memory: 8Gi}}
      volumes: [{name: cfg, config_map: weir-cfg, mount_path: /etc/weir, read_only: true}]
  b:
    model: {source: lake:s.x, sink: lake:g.x, sql: SELECT 1}
`
	f, err := Parse([]byte(data), "w.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	lake := Volume{Name: "lake", Claim: "weir-lake", MountPath: "/weir/lake"}
	want := Deploy{Image: "registry.invalid/weir:1.2", ImagePullPolicy: "IfNotPresent", Namespace: "data",
		ServiceAccount: "weir", Dagfile: "/weir/weir.yaml",
		Requests: map[string]string{"cpu": "500m", "memory": "1Gi"}, Limits: map[string]string{"memory": "4Gi"},
		Volumes: []Volume{lake}}
	if !reflect.DeepEqual(f.Deploy, want) || !reflect.DeepEqual(f.Task("b").Deploy, want) {
		t.Errorf("deploy:\n got %+v\n  b: %+v\nwant %+v", f.Deploy, f.Task("b").Deploy, want)
	}
	a := want
	a.Limits = map[string]string{"memory": "8Gi"}
	a.Volumes = []Volume{lake, {Name: "cfg", ConfigMap: "weir-cfg", MountPath: "/etc/weir", ReadOnly: true}}
	if !reflect.DeepEqual(f.Task("a").Deploy, a) {
		t.Errorf("task a:\n got %+v\nwant %+v", f.Task("a").Deploy, a)
	}
	if got := f.Connections["lake"].LocalPaths(); !reflect.DeepEqual(got, []string{"./lake/catalog.db", "./lake"}) {
		t.Errorf("LocalPaths = %q", got)
	}
}

func TestParse_DeployMalformed(t *testing.T) {
	tests := []struct{ deploy, want string }{
		{"deploy: {image_pull_policy: Sometimes}", `bad image_pull_policy "Sometimes"`},
		{"deploy: {namespace: Data_1}", `"Data_1" is not a Kubernetes name`},
		{"deploy: {resources: {requests: {memory: lots}}}", `bad quantity "lots"`},
		{"deploy: {resources: {wants: {}}}", `unknown key "wants"`},
		{"deploy: {volumes: [{name: v, mount_path: /x}]}", "exactly one of claim:"},
		{"deploy: {volumes: [{name: v, claim: c, secret: s, mount_path: /x}]}", "exactly one of claim:"},
		{"deploy: {volumes: [{name: v, claim: c, mount_path: x}]}", `mount_path "x" must be absolute`},
		{"deploy: {volumes: [{claim: c, mount_path: /x}]}", "needs name:"},
		{"deploy: {imag: x}", `(did you mean "image"?)`},
	}
	for _, tc := range tests {
		data := "version: 1\nconnections:\n  lake: iceberg://?catalog=sql\n" + tc.deploy + "\ntasks:\n  a: {model: {source: lake:b.x, sink: lake:s.x, sql: SELECT 1}}\n"
		_, err := Parse([]byte(data), "w.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.deploy, err, tc.want)
		}
	}
	task := "version: 1\nconnections:\n  lake: iceberg://?catalog=sql\ntasks:\n  a: {model: {source: lake:b.x, sink: lake:s.x, sql: SELECT 1}, deploy: {image: x}}\n"
	if _, err := Parse([]byte(task), "w.yaml", nil); err == nil || !strings.Contains(err.Error(), `unknown key "image"`) {
		t.Errorf("a task's deploy: image: got %v", err)
	}
}

// TestLint_PodLocalFiles: with deploy:, a task on local files with no
// volume is K8S-001; a volume (the file's or the task's) silences it; a
// task on servers only never has it. PodFindings applies it without deploy:.
func TestLint_PodLocalFiles(t *testing.T) {
	const conns = "version: 1\nconnections:\n  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake\n" +
		"  files: ./data\n  pg: postgres://u@h/db\n  s3: s3://bucket/p\n"
	const tasks = "tasks:\n  a: {model: {source: lake:b.x, sink: lake:s.x, sql: SELECT 1}}\n" +
		"  b: {transfer: {from: files, table: x.csv, to: pg, dest_table: s.x}}\n" +
		"  c: {transfer: {from: pg, table: s.y, to: s3}}\n"
	tests := []struct {
		name, deploy string
		want         []string // tasks with K8S-001
	}{
		{"no deploy", "", nil},
		{"deploy without volumes", "deploy: {namespace: data}\n", []string{"a", "b"}},
		{"a volume", "deploy: {volumes: [{name: v, claim: c, mount_path: /weir}]}\n", nil},
	}
	for _, tc := range tests {
		got, err := Check([]byte(conns+tc.deploy+tasks), "w.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var flagged []string
		for _, f := range got {
			if f.Rule == RulePodLocalFiles {
				flagged = append(flagged, f.Task)
				if f.Severity != SeverityWarning || !strings.Contains(f.Message, "no volume is mounted") {
					t.Errorf("%s: %v", tc.name, f)
				}
			} else if f.Severity != SeverityInfo {
				t.Errorf("%s: unexpected %v", tc.name, f)
			}
		}
		if strings.Join(flagged, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: K8S-001 for %v, want %v", tc.name, flagged, tc.want)
		}
	}
	f, err := Parse([]byte(conns+tasks), "w.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := PodFindings(f)
	if err != nil || len(pods) != 2 || !strings.Contains(pods[0].Message, "./lake/catalog.db, ./lake") {
		t.Errorf("PodFindings: %v %v", pods, err)
	}
	withVol := conns + tasks + "  d: {model: {source: lake:s.x, sink: lake:g.x, sql: SELECT 1}, deploy: {volumes: [{name: v, claim: c, mount_path: /l}]}}\n"
	f, _ = Parse([]byte(withVol), "w.yaml", nil)
	if pods, _ := PodFindings(f, "d"); len(pods) != 0 {
		t.Errorf("a task's own volume: %v", pods)
	}
}
