package generate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weirhq/weir/dagfile"
)

// fakeWeirFile loads the quickstart dagfile for runs of testdata/fakeweir.
func fakeWeirFile(t *testing.T) (*dagfile.File, Options) {
	t.Helper()
	f, err := dagfile.LoadStatic("testdata/quickstart/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.Abs("testdata/fakeweir")
	if err != nil {
		t.Fatal(err)
	}
	return f, Options{DagfilePath: "weir.yaml", WeirBin: bin}
}

// outcome is what running one generated task led to.
type outcome struct {
	Outcome      string         `json:"outcome"`
	MaxRetries   int            `json:"max_retries"`
	Wait         float64        `json:"seconds_to_wait"`
	AllowRetries *bool          `json:"allow_retries"`
	Results      []resultRecord `json:"results"`
}

type resultRecord struct {
	Key      []string       `json:"key"`
	Metadata map[string]any `json:"metadata"`
}

// runTask runs one task of a generated file under the stubs with weir
// exiting exit, as try number try, and returns the outcome.
func runTask(t *testing.T, kind, path, task string, exit, try int) outcome {
	t.Helper()
	out := runPython(t, []string{"FAKE_WEIR_EXIT=" + strconv.Itoa(exit)}, "weir_inspect.py", kind, path, task, strconv.Itoa(try))
	var o outcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return o
}

func TestAirflow_ExitCodes(t *testing.T) {
	t.Parallel()
	f, opts := fakeWeirFile(t)
	// bronze_orders has retries: 1 in the quickstart dagfile.
	tests := []struct {
		exit, try int
		want      string
	}{
		{0, 1, "success"},
		{75, 1, "AirflowException"},    // locked: retried
		{75, 4, "AirflowException"},    // still retried; Airflow stops after retries+LOCK_RETRIES
		{2, 1, "AirflowFailException"}, // bad input: never retried
		{1, 1, "AirflowException"},     // within the dagfile's retries
		{1, 2, "AirflowFailException"}, // past them
	}
	for _, op := range []string{OperatorBash, OperatorKubernetes} {
		opts.Operator = op
		files, err := Airflow(f, opts)
		if err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, "dag.py", files["weir_quickstart.py"])
		for _, tc := range tests {
			if got := runTask(t, "airflow", path, "bronze_orders", tc.exit, tc.try); got.Outcome != tc.want {
				t.Errorf("%s: exit %d on try %d: %s, want %s", op, tc.exit, tc.try, got.Outcome, tc.want)
			}
		}
	}
}

func TestDagster_ExitCodes(t *testing.T) {
	t.Parallel()
	f, opts := fakeWeirFile(t)
	files, err := Dagster(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "definitions.py", files["definitions.py"])
	ok := runTask(t, "dagster", path, "silver_orders", 0, 1)
	if ok.Outcome != "success" || len(ok.Results) != 1 || ok.Results[0].Metadata["rows"] != 42.0 ||
		ok.Results[0].Metadata["offsets"] == nil || ok.Results[0].Metadata["elapsed_ms"] != 7.0 {
		t.Errorf("exit 0: %+v", ok)
	}
	if got := runTask(t, "dagster", path, "silver_orders", 75, 1); got.Outcome != "RetryRequested" || got.MaxRetries != 1+LockRetries || got.Wait != 30 {
		t.Errorf("exit 75: %+v", got)
	}
	if got := runTask(t, "dagster", path, "silver_orders", 2, 1); got.Outcome != "Failure" || got.AllowRetries == nil || *got.AllowRetries {
		t.Errorf("exit 2: %+v", got)
	}
	if got := runTask(t, "dagster", path, "silver_orders", 1, 1); got.Outcome != "Failure" || got.AllowRetries == nil || !*got.AllowRetries {
		t.Errorf("exit 1: %+v", got)
	}
}

func TestRender_NoSecrets(t *testing.T) {
	const secret = "hunter2"
	env := map[string]string{"APP_PG_URL": "postgres://weir:" + secret + "@127.0.0.1/app", "SHOP_USER": "u", "SHOP_PASSWORD": secret,
		"KAFKA_BROKERS": "127.0.0.1:9092", "CH_USER": "u", "CH_PASSWORD": secret}
	data, err := os.ReadFile("../examples/medallion/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := dagfile.Parse(data, "../examples/medallion/weir.yaml", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range Targets {
		for _, op := range []string{OperatorBash, OperatorKubernetes} {
			files, err := Render(target, f, Options{Operator: op})
			if err != nil {
				t.Fatal(err)
			}
			for name, out := range files {
				if strings.Contains(string(out), secret) || strings.Contains(string(out), "127.0.0.1:9092") {
					t.Errorf("%s (%s) holds an expanded connection value", name, op)
				}
			}
		}
	}
}

func TestRender_Select(t *testing.T) {
	f, err := dagfile.LoadStatic("../examples/medallion/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := newView(f, Options{Select: []string{"tag:gold", "export_revenue"}}, "airflow")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, task := range v.Tasks {
		names = append(names, task.Name+"<"+strings.Join(task.Upstream, ",")+">")
	}
	want := "gold_revenue<> gold_funnel<> export_revenue<gold_funnel,gold_revenue>"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("selected %s, want %s", got, want)
	}
}

func TestRender_Errors(t *testing.T) {
	f, err := dagfile.LoadStatic("testdata/quickstart/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		opts   Options
		want   string
	}{
		{"airflow", Options{Operator: "docker"}, `operator "docker": use bash or kubernetes`},
		{"argo", Options{Select: []string{"tag:nope"}}, `generate argo: select "tag:nope": no task matches (tasks: bronze_customers, bronze_orders, gold_revenue_by_country, silver_orders; tags: bronze, gold, quickstart, silver)`},
		{"prefect", Options{}, `unknown target "prefect": use airflow, dagster or argo`},
	}
	for _, tc := range tests {
		if _, err := Render(tc.target, f, tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("Render(%s) error = %v, want %s", tc.target, err, tc.want)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	paths, err := Write(dir, map[string][]byte{"y.py": []byte("y"), "x.yaml": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Base(paths[0]) != "x.yaml" {
		t.Errorf("paths %v", paths)
	}
	entries, _ := os.ReadDir(dir)
	if data, _ := os.ReadFile(paths[1]); string(data) != "y" || len(entries) != 2 {
		t.Errorf("wrote %q, %d entries", data, len(entries))
	}
}

func TestShellQuote(t *testing.T) {
	got := shellJoin([]string{"weir", "once", "-f", "my dags/it's.yaml", "--json"})
	if want := `weir once -f 'my dags/it'\''s.yaml' --json`; got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}

// TestAirflow_AirflowConn: a connection with airflow_conn: gets the Airflow
// Connection's URI in its variable when the task runs (BaseHook, at run
// time), only in the tasks that use it; the file holds no URI.
func TestAirflow_AirflowConn(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/quickstart/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "  files: file://./data\n", "  files: {url: \"${FILES_URL}\", airflow_conn: weir_files}\n", 1))
	f, err := dagfile.Parse(data, "testdata/quickstart/weir.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	bin := filepath.Join(dir, "weir")
	os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s|%s' \"$1 $2 $3\" \"${FILES_URL-unset}\" >> \""+seen+"\"\necho '{}'\n"), 0o755)
	files, err := Airflow(f, Options{WeirBin: bin})
	if err != nil {
		t.Fatal(err)
	}
	const uri = "file:///srv/data?x=p%40ss"
	if strings.Contains(string(files["weir_quickstart.py"]), uri) {
		t.Fatal("the URI is in the generated file")
	}
	path := writeTemp(t, "weir_quickstart.py", files["weir_quickstart.py"])
	for _, version := range []string{"2", "3"} {
		for task, want := range map[string]string{"bronze_orders": uri, "silver_orders": "unset"} {
			os.Remove(seen)
			out := runPython(t, []string{"WEIR_STUB_AIRFLOW=" + version, `WEIR_STUB_CONNECTIONS={"weir_files": "` + uri + `"}`},
				"weir_inspect.py", "airflow", path, task, "1")
			got, _ := os.ReadFile(seen)
			if !strings.Contains(string(out), `"success"`) || string(got) != "once --task "+task+"|"+want {
				t.Errorf("airflow %s, task %s: %s; weir saw %q, want FILES_URL=%s", version, task, out, got, want)
			}
		}
	}
	bad := strings.Replace(string(data), `url: "${FILES_URL}"`, `url: "file://${DIR}/data"`, 1)
	if _, err := dagfile.Parse([]byte(bad), "w.yaml", nil); err == nil || !strings.Contains(err.Error(), "with airflow_conn the url is one ${VAR}") {
		t.Errorf("airflow_conn on a URL that is not one variable: %v", err)
	}
}
