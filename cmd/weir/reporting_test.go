package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weirhq/weir/report/pipes"
)

// compileSchema compiles a schema under testdata/schemas, asserting formats.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join("testdata", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validate checks one JSON document against sch.
func validate(t *testing.T, sch *jsonschema.Schema, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s\ndoes not validate: %v", doc, err)
	}
}

// quickstart copies examples/quickstart (without a lake) into a temporary
// folder and returns its dagfile.
func quickstart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "lake"))
	return filepath.Join(dir, "weir.yaml")
}

// runCmdErr runs the CLI in-process with stdout and stderr captured.
func runCmdErr(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		t.Logf("weir %s: %v", strings.Join(args, " "), err)
	}
	return exitCode(err), out.String(), errOut.String()
}

type pipesMsg struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// pipesEnv sets up a simulated Dagster Pipes bootstrap for asset keys:
// the context in a file or inline, the messages to a file or a stream.
func pipesEnv(t *testing.T, keys []string, contextInFile bool, messages map[string]any) {
	t.Helper()
	ctxData := map[string]any{"asset_keys": keys, "run_id": "0f3c7a52-4b6e-4c8e-9d61-1c2b3a4d5e6f", "job_name": "quickstart",
		"retry_number": 0, "extras": map[string]any{}, "code_version_by_asset_key": nil, "provenance_by_asset_key": nil,
		"partition_key": nil, "partition_key_range": nil, "partition_time_window": nil}
	ctxParams := map[string]any{"data": ctxData}
	if contextInFile {
		p := filepath.Join(t.TempDir(), "context.json")
		b, _ := json.Marshal(ctxData)
		os.WriteFile(p, b, 0o644)
		ctxParams = map[string]any{"path": p}
	}
	for name, v := range map[string]any{pipes.EnvContext: ctxParams, pipes.EnvMessages: messages} {
		enc, err := pipes.EncodeParam(v)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(name, enc)
	}
}

// readMessages validates every line as a Pipes message and decodes it.
func readMessages(t *testing.T, sch *jsonschema.Schema, text string) []pipesMsg {
	t.Helper()
	var msgs []pipesMsg
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"__dagster_pipes_version"`)) {
			continue // the run's own output on the same stream
		}
		validate(t, sch, line)
		var m pipesMsg
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// TestOncePipes_Quickstart runs every quickstart task under a simulated
// Pipes context (context from a file and inline; messages to a file, to
// stderr and buffered to stdout) and checks the messages: valid per the
// Pipes message schema, opened first and closed last, one
// materialization per sink with its metadata typed, one asset check per
// contract.
func TestOncePipes_Quickstart(t *testing.T) {
	sch := compileSchema(t, "PipesMessage.schema.json")
	path := quickstart(t)
	tasks := []struct {
		task, key string
		contract  bool
	}{
		{"bronze_orders", "lake/bronze/orders", false},
		{"bronze_customers", "lake/bronze/customers", false},
		{"silver_orders", "lake/silver/orders", true},
		{"gold_revenue_by_country", "lake/gold/revenue_by_country", true},
	}
	for i, tt := range tasks {
		t.Run(tt.task, func(t *testing.T) {
			msgFile := filepath.Join(t.TempDir(), "messages.jsonl")
			channels := []map[string]any{{"path": msgFile}, {"stdio": "stderr"}, {"buffered_stdio": "stdout"}}
			channel := channels[i%len(channels)]
			// the generated code's keys for a task's step; none for a hand-run step
			pipesEnv(t, []string{tt.key}, i%2 == 0, channel)
			code, stdout, stderr := runCmdErr(t, "once", "--task", tt.task, "-f", path, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			text := map[string]string{"path": "", "stdio": stderr, "buffered_stdio": stdout}
			for k := range channel {
				if k == "path" {
					b, err := os.ReadFile(msgFile)
					if err != nil {
						t.Fatal(err)
					}
					text["path"] = string(b)
				}
				msgs := readMessages(t, sch, text[k])
				checkPipesRun(t, msgs, tt.key, tt.contract)
			}
		})
	}
	// a hand-written asset keyed otherwise: its one key names the one table
	t.Run("own key", func(t *testing.T) {
		msgFile := filepath.Join(t.TempDir(), "messages.jsonl")
		pipesEnv(t, []string{"my/customers"}, false, map[string]any{"path": msgFile})
		if code, _, stderr := runCmdErr(t, "once", "--task", "bronze_customers", "-f", path); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, _ := os.ReadFile(msgFile)
		checkPipesRun(t, readMessages(t, sch, string(b)), "my/customers", false)
	})
	// nothing new: the declared check still gets a (passed) result
	t.Run("silver_orders again", func(t *testing.T) {
		msgFile := filepath.Join(t.TempDir(), "messages.jsonl")
		pipesEnv(t, []string{"lake/silver/orders"}, true, map[string]any{"path": msgFile})
		if code, _, stderr := runCmdErr(t, "once", "--task", "silver_orders", "-f", path); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, _ := os.ReadFile(msgFile)
		count := map[string]int{}
		for _, m := range readMessages(t, sch, string(b)) {
			count[m.Method]++
			meta, _ := m.Params["metadata"].(map[string]any)
			switch m.Method {
			case "report_asset_check":
				if checked, _ := meta["checked"].(map[string]any); m.Params["passed"] != true || checked["raw_value"] != 0.0 {
					t.Errorf("check on nothing new: %v", m.Params)
				}
			case "report_asset_materialization":
				if nn, _ := meta["nothing_new"].(map[string]any); nn["raw_value"] != true {
					t.Errorf("materialization on nothing new: %v", meta)
				}
			}
		}
		if count["report_asset_check"] != 1 || count["report_asset_materialization"] != 1 {
			t.Errorf("message counts %v", count)
		}
	})
}

// checkPipesRun checks the messages of one passing run.
func checkPipesRun(t *testing.T, msgs []pipesMsg, key string, contract bool) {
	t.Helper()
	if len(msgs) < 3 || msgs[0].Method != "opened" || msgs[len(msgs)-1].Method != "closed" {
		t.Fatalf("messages %+v: want opened … closed", msgs)
	}
	if _, failed := msgs[len(msgs)-1].Params["exception"]; failed {
		t.Errorf("closed with an exception on a passing run: %v", msgs[len(msgs)-1].Params)
	}
	count := map[string]int{}
	for _, m := range msgs {
		count[m.Method]++
		switch m.Method {
		case "report_asset_materialization":
			if m.Params["asset_key"] != key {
				t.Errorf("materialization of %v, want %s", m.Params["asset_key"], key)
			}
			meta, _ := m.Params["metadata"].(map[string]any)
			for _, k := range []string{"rows_in", "rows_out", "quarantined", "lag", "elapsed_ms"} {
				v, _ := meta[k].(map[string]any)
				if v["type"] != "int" {
					t.Errorf("metadata %s = %v, want an int", k, meta[k])
				}
			}
			if v, _ := meta["lag_unit"].(map[string]any); v["type"] != "text" || v["raw_value"] == "" || v["raw_value"] == nil {
				t.Errorf("metadata lag_unit = %v, want the lag's unit", meta["lag_unit"])
			}
			if v, _ := meta["rows_out"].(map[string]any); v["raw_value"] == 0.0 {
				t.Errorf("rows_out 0 on a first run: %v", meta)
			}
		case "report_asset_check":
			if m.Params["asset_key"] != key || m.Params["check_name"] != pipes.ContractCheck || m.Params["passed"] != true {
				t.Errorf("check %v: want %s %s passed", m.Params, key, pipes.ContractCheck)
			}
			meta, _ := m.Params["metadata"].(map[string]any)
			if v, _ := meta["checked"].(map[string]any); v["type"] != "int" || v["raw_value"] == 0.0 {
				t.Errorf("check metadata checked = %v", meta["checked"])
			}
		}
	}
	want := 0
	if contract {
		want = 1
	}
	if count["report_asset_materialization"] != 1 || count["report_asset_check"] != want || count["opened"] != 1 || count["closed"] != 1 {
		t.Errorf("message counts %v: want one materialization and %d check(s)", count, want)
	}
}

// TestOncePipes_Failures: a contract broken past its threshold reports a
// failed check and closes with the exception; a run that fails before its
// contract is checked reports no check and no materialization.
func TestOncePipes_Failures(t *testing.T) {
	sch := compileSchema(t, "PipesMessage.schema.json")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "t.csv"), []byte("id,v\n1,5\n2,-1\n3,-2\n"), 0o644)
	path := filepath.Join(dir, "weir.yaml")
	os.WriteFile(path, []byte(`version: 1
connections:
  files: file://./data
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: files, table: t.csv, to: lake, dest_table: bronze.t}
  checked:
    model: {source: lake:bronze.t, sink: lake:silver.t, mode: append, sql: "SELECT id, v FROM input"}
    contract: {rules: [{name: positive, sql: "v > 0"}], max_bad_ratio: 0.5}
  broken_sql:
    model: {source: lake:bronze.t, sink: lake:silver.u, mode: append, sql: "SELECT nope FROM input"}
    contract: {rules: [{name: positive, sql: "v > 0"}]}
`), 0o644)
	if code, _ := runCmd(t, "once", "--task", "bronze", "-f", path); code != ExitOK {
		t.Fatalf("bronze exited %d", code)
	}
	for _, tt := range []struct {
		task      string
		wantCheck bool
	}{{"checked", true}, {"broken_sql", false}} {
		t.Run(tt.task, func(t *testing.T) {
			msgFile := filepath.Join(t.TempDir(), "messages.jsonl")
			pipesEnv(t, []string{"lake/silver/t"}, false, map[string]any{"path": msgFile})
			if code, _, _ := runCmdErr(t, "once", "--task", tt.task, "-f", path); code == ExitOK {
				t.Fatal("the run passed")
			}
			b, _ := os.ReadFile(msgFile)
			msgs := readMessages(t, sch, string(b))
			count := map[string]int{}
			for _, m := range msgs {
				count[m.Method]++
				if m.Method == "report_asset_check" {
					meta, _ := m.Params["metadata"].(map[string]any)
					rule, _ := meta["rule: positive"].(map[string]any)
					if m.Params["passed"] != false || rule["raw_value"] != 2.0 {
						t.Errorf("check %v: want failed, 2 rows breaking positive", m.Params)
					}
				}
			}
			last := msgs[len(msgs)-1]
			exc, _ := last.Params["exception"].(map[string]any)
			if last.Method != "closed" || exc["message"] == nil {
				t.Errorf("last message %+v: want closed with the exception", last)
			}
			want := 0
			if tt.wantCheck {
				want = 1
			}
			if count["report_asset_check"] != want || count["report_asset_materialization"] != 0 {
				t.Errorf("message counts %v: want %d check(s), no materialization", count, want)
			}
		})
	}
}

// receiver is an OpenLineage HTTP endpoint that keeps what it is sent.
type receiver struct {
	mu     sync.Mutex
	events [][]byte
	auth   []string
	paths  []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.events = append(rc.events, b)
	rc.auth = append(rc.auth, r.Header.Get("Authorization"))
	rc.paths = append(rc.paths, r.URL.Path)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

type olEvent struct {
	EventType string `json:"eventType"`
	Run       struct {
		RunID  string         `json:"runId"`
		Facets map[string]any `json:"facets"`
	} `json:"run"`
	Job     struct{ Namespace, Name string } `json:"job"`
	Inputs  []olDataset                      `json:"inputs"`
	Outputs []olDataset                      `json:"outputs"`
}

type olDataset struct {
	Namespace    string         `json:"namespace"`
	Name         string         `json:"name"`
	Facets       map[string]any `json:"facets"`
	OutputFacets map[string]any `json:"outputFacets"`
}

// TestOnceOpenLineage_HTTP: a passing run sends START and COMPLETE, a
// failing one START and FAIL, to the OPENLINEAGE_URL receiver, each valid
// per the RunEvent schema, with the datasets named by the naming spec,
// the schema and row count facets, and the parent run from the
// environment.
func TestOnceOpenLineage_HTTP(t *testing.T) {
	sch := compileSchema(t, "RunEvent.schema.json")
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OPENLINEAGE_URL", srv.URL)
	t.Setenv("OPENLINEAGE_API_KEY", "k3y")
	t.Setenv("OPENLINEAGE_NAMESPACE", "prod")
	t.Setenv("OPENLINEAGE_PARENT_ID", "airflow/quickstart.bronze_orders/01890f9e-8d4e-7a6b-9c3d-2e1f0a9b8c7d")
	path := quickstart(t)
	lake := filepath.Join(filepath.Dir(path), "lake")
	if code, _ := runCmd(t, "once", "--task", "bronze_orders", "-f", path); code != ExitOK {
		t.Fatalf("bronze_orders exited %d", code)
	}
	if code, _ := runCmd(t, "once", "--task", "silver_orders", "-f", path); code != ExitOK {
		t.Fatalf("silver_orders exited %d", code)
	}
	t.Setenv("OPENLINEAGE_DISABLED", "true") // gold's lookup: no events
	if code, _ := runCmd(t, "once", "--task", "bronze_customers", "-f", path); code != ExitOK {
		t.Fatalf("bronze_customers exited %d", code)
	}
	t.Setenv("OPENLINEAGE_DISABLED", "")
	// a failing run
	os.WriteFile(filepath.Join(filepath.Dir(path), "models", "gold_revenue_by_country.sql"), []byte("SELECT nope FROM o"), 0o644)
	if code, _ := runCmd(t, "once", "--task", "gold_revenue_by_country", "-f", path); code == ExitOK {
		t.Fatal("gold_revenue_by_country with bad SQL passed")
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.events) != 6 {
		t.Fatalf("received %d events, want 6", len(rc.events))
	}
	var evs []olEvent
	for i, b := range rc.events {
		validate(t, sch, b)
		var e olEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
		if rc.auth[i] != "Bearer k3y" || rc.paths[i] != "/api/v1/lineage" {
			t.Errorf("event %d: Authorization %q path %q", i, rc.auth[i], rc.paths[i])
		}
		parent, _ := e.Run.Facets["parent"].(map[string]any)
		if job, _ := parent["job"].(map[string]any); job["name"] != "quickstart.bronze_orders" {
			t.Errorf("event %d parent %v", i, e.Run.Facets["parent"])
		}
	}
	for i, want := range []string{"START", "COMPLETE", "START", "COMPLETE", "START", "FAIL"} {
		if evs[i].EventType != want {
			t.Errorf("event %d is %s, want %s", i, evs[i].EventType, want)
		}
	}
	for i := 0; i < len(evs); i += 2 {
		if evs[i].Run.RunID != evs[i+1].Run.RunID || i > 0 && evs[i].Run.RunID == evs[i-2].Run.RunID {
			t.Errorf("events %d and %d: run ids %s %s: one per run", i, i+1, evs[i].Run.RunID, evs[i+1].Run.RunID)
		}
	}
	if evs[1].Job.Namespace != "prod" || evs[1].Job.Name != "quickstart.bronze_orders" {
		t.Errorf("job %+v", evs[1].Job)
	}
	in, out := evs[1].Inputs, evs[1].Outputs
	wantIn := filepath.Join(filepath.Dir(path), "data", "orders.csv")
	if len(in) != 1 || in[0].Namespace != "file" || in[0].Name != wantIn {
		t.Errorf("inputs %+v, want file %s", in, wantIn)
	}
	wantOut := filepath.Join(lake, "bronze.db", "orders")
	if len(out) != 1 || out[0].Namespace != "file" || out[0].Name != wantOut {
		t.Fatalf("outputs %+v, want file %s", out, wantOut)
	}
	stats, _ := out[0].OutputFacets["outputStatistics"].(map[string]any)
	schema, _ := out[0].Facets["schema"].(map[string]any)
	fields, _ := schema["fields"].([]any)
	if stats["rowCount"] == nil || stats["rowCount"] == 0.0 || len(fields) == 0 {
		t.Errorf("COMPLETE output facets: stats %v schema %v", stats, schema)
	}
	// silver: its quarantine table is an output too, with the rows it got
	var quarantine *olDataset
	for i, d := range evs[3].Outputs {
		if d.Name == filepath.Join(lake, "silver.db", "orders__quarantine") {
			quarantine = &evs[3].Outputs[i]
		}
	}
	if quarantine == nil {
		t.Errorf("silver_orders COMPLETE outputs %+v: no quarantine table", evs[3].Outputs)
	} else if stats, _ := quarantine.OutputFacets["outputStatistics"].(map[string]any); stats["rowCount"] == nil || stats["rowCount"] == 0.0 {
		t.Errorf("quarantine output facets %v", quarantine.OutputFacets)
	}
	msg, _ := evs[5].Run.Facets["errorMessage"].(map[string]any)
	if s, _ := msg["message"].(string); !strings.Contains(s, "nope") {
		t.Errorf("FAIL errorMessage %v", evs[5].Run.Facets)
	}
	if len(evs[5].Inputs) != 2 {
		t.Errorf("gold FAIL inputs %+v: want silver.orders and bronze.customers", evs[5].Inputs)
	}
}

// TestOnceOpenLineage_Transports: the file and console transports, a
// receiver that is down (a warning; the run passes) and a bad transport
// type (likewise).
func TestOnceOpenLineage_Transports(t *testing.T) {
	sch := compileSchema(t, "RunEvent.schema.json")
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	logFile := filepath.Join(t.TempDir(), "events.jsonl")
	eventsPrefix := filepath.Join(t.TempDir(), "event")
	tests := []struct {
		name     string
		env      map[string]string
		warning  string
		fromFile bool
	}{
		{"file", map[string]string{"OPENLINEAGE__TRANSPORT__TYPE": "file", "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": logFile, "OPENLINEAGE__TRANSPORT__APPEND": "true"}, "", true},
		{"file per event", map[string]string{"OPENLINEAGE__TRANSPORT__TYPE": "file", "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": eventsPrefix}, "", true},
		{"console", map[string]string{"OPENLINEAGE__TRANSPORT__TYPE": "console"}, "", false},
		{"receiver down", map[string]string{"OPENLINEAGE__TRANSPORT__TYPE": "http", "OPENLINEAGE__TRANSPORT__URL": strings.Replace(down.URL, "http://", "http://user:s3cret@", 1)}, "openlineage START", false},
		{"bad type", map[string]string{"OPENLINEAGE__TRANSPORT__TYPE": "kafka"}, "transport type", false},
	}
	path := writeLake(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCmdErr(t, "once", "--task", "bronze", "-f", path)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.warning != "" && !strings.Contains(stderr, tt.warning) {
				t.Errorf("stderr %q: want a warning %q", stderr, tt.warning)
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("stderr shows the password: %s", stderr)
			}
			text := stderr
			if tt.fromFile {
				files, _ := filepath.Glob(tt.env["OPENLINEAGE__TRANSPORT__LOG_FILE_PATH"] + "*")
				if tt.env["OPENLINEAGE__TRANSPORT__APPEND"] != "true" && len(files) != 2 {
					t.Errorf("files %v: want one per event", files)
				}
				text = ""
				for _, f := range files {
					b, _ := os.ReadFile(f)
					text += string(b)
				}
			}
			if tt.warning != "" {
				return
			}
			var n int
			for _, line := range strings.Split(text, "\n") {
				if strings.Contains(line, `"eventType"`) {
					validate(t, sch, []byte(line))
					n++
				}
			}
			if n != 2 {
				t.Errorf("%d events, want START and COMPLETE: %s", n, text)
			}
		})
	}
}

// TestOnceReportFile: --report-file, or the file $WEIR_REPORT_FILE names,
// gets the JSON report (Argo's output parameter, the pod's XCom), the same
// as --json prints; a run that fails before it has a report (a missing
// dagfile: exit 2) still writes the task and the error.
func TestOnceReportFile(t *testing.T) {
	path := writeLake(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.json")
	code, out := runCmd(t, "once", "--task", "bronze", "-f", path, "--json", "--report-file", file)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var fromFile, fromStdout map[string]any
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &fromFile); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(out), &fromStdout)
	if fromFile["run_id"] == nil || fromFile["run_id"] != fromStdout["run_id"] || fromFile["rows"] != 2.0 {
		t.Errorf("report file %s, stdout %s", b, out)
	}

	envFile := filepath.Join(dir, "from-env.json")
	t.Setenv("WEIR_REPORT_FILE", envFile)
	if code, _ := runCmd(t, "once", "--task", "bronze", "-f", path); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	b, _ = os.ReadFile(envFile)
	if err := json.Unmarshal(b, &fromFile); err != nil || fromFile["task"] != "bronze" || fromFile["nothing_new"] != true {
		t.Errorf("$WEIR_REPORT_FILE: %s (%v)", b, err)
	}

	if code, _ := runCmd(t, "once", "--task", "bronze", "-f", filepath.Join(dir, "none.yaml")); code != ExitBadInput {
		t.Fatalf("a missing dagfile exited %d", code)
	}
	b, _ = os.ReadFile(envFile)
	var failed map[string]any
	if err := json.Unmarshal(b, &failed); err != nil || failed["task"] != "bronze" || failed["error"] == nil {
		t.Errorf("report file of a run without a report: %s (%v)", b, err)
	}
}

// TestOnceReporting_NeverFails: a malformed Pipes bootstrap is a warning
// and the run passes; a report file that cannot be written fails it.
func TestOnceReporting_NeverFails(t *testing.T) {
	path := writeLake(t)
	t.Setenv(pipes.EnvContext, "not base64!")
	t.Setenv(pipes.EnvMessages, "eJyrViouScnMV7JSADFSi4qUagFBNAaS")
	code, _, stderr := runCmdErr(t, "once", "--task", "bronze", "-f", path)
	if code != ExitOK || !strings.Contains(stderr, "warning: dagster pipes") {
		t.Errorf("a malformed Pipes context: exit %d, stderr %q", code, stderr)
	}
	if code, _ := runCmd(t, "once", "--task", "bronze", "-f", path, "--report-file", filepath.Join(t.TempDir(), "no", "such", "dir")); code != ExitFailure {
		t.Errorf("an unwritable report file: exit %d, want %d", code, ExitFailure)
	}
}
