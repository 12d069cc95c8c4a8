package generate

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/report/openlineage"
	"github.com/weirhq/weir/report/pipes"
)

// view is what the templates see of one dagfile.
type view struct {
	Name, KubeName, Description, Dagfile  string // Dagfile: relative to the generated Python file, or absolute
	PodDagfile                            string // the dagfile in a pod
	Header                                []string
	Schedule, Cron                        string
	WeirBin, Image, Secret                string
	Namespace, ServiceAccount, PullPolicy string           // deploy:
	Volumes                               []dagfile.Volume // every task's, by name (Argo declares them once)
	K8sModels                             bool             // a task sets resources or volumes (KubernetesPodOperator)
	AirflowConns                          bool             // a task maps Airflow Connections (airflow_conn:)
	Backfills                             bool             // a task has backfill: (its fan-out)
	MaxWorkers                            int              // the most workers of a backfill (Dagster's max_concurrent)
	Kubernetes                            bool
	LockRetries, ExitLocked, ExitBadInput int
	ReportFileEnv, XComReport, ArgoReport string
	Tags, AllVars                         []string
	Tasks                                 []*taskView // dependency order
	Edges                                 []edge
}

// taskView is what the templates see of one task.
type taskView struct {
	Name, KubeName, Func, Kind, Doc string
	Args                            []string // weir's arguments in a pod
	Retries, TotalRetries           int
	RetryDelay, Timeout             int    // seconds; Timeout 0: none
	RetryExpr                       string // Argo retryStrategy expression
	Pool                            string
	Check                           string // the asset check of its contract (Dagster); "" when none
	Tags, Vars                      []string
	Upstream, UpstreamKube          []string // selected upstream tasks only
	Sinks                           []sinkView
	Sources                         []sinkView // the tables it reads (Airflow inlets)
	DepKeys                         [][]string // asset keys this task's assets depend on
	Requests, Limits                []kv       // deploy: resources, sorted by name
	AirflowConns                    []kv       // variable → Airflow connection id (airflow_conn:), sorted
	Volumes                         []dagfile.Volume
	Steps                           []stepView // what the orchestrator runs: the task, or its backfill's plan, workers and check
	First, Last                     string     // the ids of its first and last step (dependencies enter First, leave Last)
	FirstKube, LastKube             string
	Workers                         int // the parallel workers of its backfill; 0: none
}

// stepView is one step the orchestrator runs for a task: `weir once`, or
// one of its backfill's plan (weir backfill), workers (weir worker --wait,
// Count in parallel) and check (weir worker: exit 0 only when caught up).
type stepView struct {
	ID, KubeName, Func string   // Airflow task id, Argo name, Dagster op name
	Doc                string   // the task's, and what this step does
	Role               string   // once, plan, workers, check
	Verb               string   // weir's subcommand
	Flags              []string // its flags after -f DAGFILE
	Args               []string // weir's arguments in a pod
	Count              int      // parallel copies (workers); 1 otherwise
	Report             bool     // writes the run report (weir once)
	Deps               []string // Argo: the steps it waits for
}

// Roles of steps.
const (
	RoleOnce    = "once"
	RolePlan    = "plan"
	RoleWorkers = "workers"
	RoleCheck   = "check"
)

// steps returns what the orchestrator runs for t: one `weir once`, or for a
// task with backfill: the plan, its workers and the check, one after the
// other. Argo dependencies from the task's upstream enter the first step.
func steps(t *dagfile.Task, pod string, upstreamKube []string) []stepView {
	kube := kubeName(t.Name)
	if t.Backfill == nil {
		return []stepView{{ID: t.Name, KubeName: kube, Func: "weir_" + t.Name, Doc: doc(t), Role: RoleOnce, Verb: "once", Flags: []string{"--json"},
			Args: args(t.Name, pod), Count: 1, Report: true, Deps: upstreamKube}}
	}
	step := func(role, verb string, count int, flags ...string) stepView {
		return stepView{ID: t.Name + "_" + role, KubeName: kube + "-" + role, Func: "weir_" + t.Name + "_" + role,
			Role: role, Verb: verb, Flags: flags, Args: fanoutArgs(verb, t.Name, pod, flags...), Count: count}
	}
	plan, workers, check := step(RolePlan, "backfill", 1), step(RoleWorkers, "worker", t.Backfill.Workers, "--wait"), step(RoleCheck, "worker", 1)
	plan.Doc = doc(t) + ". Step 1 of its backfill: weir backfill plans the buckets once."
	workers.Doc = doc(t) + fmt.Sprintf(". Step 2 of its backfill: %d parallel weir worker --wait claim and copy the buckets.", workers.Count)
	check.Doc = doc(t) + ". Step 3 of its backfill: weir worker exits 0 only when the task is caught up."
	plan.Deps, workers.Deps, check.Deps = upstreamKube, []string{plan.KubeName}, []string{workers.KubeName}
	return []stepView{plan, workers, check}
}

// kv is one resource quantity.
type kv struct{ Name, Value string }

func kvs(m map[string]string) []kv {
	var out []kv
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// sinkView is a table a task writes.
type sinkView struct {
	Parts []string // [connection, schema, table]
	URI   string   // the Airflow Asset URI (assetURI)
}

// edge is a dependency between two selected tasks, and between the
// Airflow tasks that carry it: the upstream's last step and the
// downstream's first (FromID, ToID).
type edge struct{ From, To, FromID, ToID string }

// newView builds the view of f for target under opts.
func newView(f *dagfile.File, opts Options, target string) (*view, error) {
	raw := opts
	opts, err := opts.withDefaults(f)
	if err != nil {
		return nil, err
	}
	sel, err := f.Select(opts.Select...)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", target, err)
	}
	pod := podDagfile(f, opts)
	v := &view{Name: f.Name, KubeName: kubeName(f.Name), Dagfile: localDagfile(f, opts), PodDagfile: pod,
		Description: cmp.Or(f.Description, "weir dagfile "+f.Path),
		Header:      header(target, f, raw), Schedule: f.Schedule, Cron: f.Cron(),
		WeirBin: opts.WeirBin, Image: opts.Image, Secret: opts.Secret,
		Namespace: f.Deploy.Namespace, ServiceAccount: f.Deploy.ServiceAccount, PullPolicy: f.Deploy.ImagePullPolicy,
		Kubernetes:  target == "airflow" && opts.Operator == OperatorKubernetes,
		LockRetries: LockRetries, ExitLocked: ExitLocked, ExitBadInput: ExitBadInput,
		ReportFileEnv: ReportFileEnv, XComReport: AirflowXComReport, ArgoReport: ArgoReport}
	if err := v.addTasks(f, sel, opts); err != nil {
		return nil, err
	}
	if target == "dagster" {
		v.dagsterKeys()
	}
	return v, nil
}

// dagsterKeys makes asset key parts valid Dagster names: other characters
// become _ (files:in/orders.csv → ["files", "in_orders_csv"]).
func (v *view) dagsterKeys() {
	fix := func(parts []string) {
		for i, p := range parts {
			parts[i] = pipes.KeyPart(p)
		}
	}
	for _, t := range v.Tasks {
		for _, s := range t.Sinks {
			fix(s.Parts)
		}
		for _, k := range t.DepKeys {
			fix(k)
		}
	}
}

// addTasks fills Tasks (in dependency order), Edges, Tags and AllVars.
func (v *view) addTasks(f *dagfile.File, sel []*dagfile.Task, opts Options) error {
	picked := map[string]*dagfile.Task{}
	for _, t := range sel {
		picked[t.Name] = t
	}
	kube := map[string]string{}
	tags := []string{"weir"}
	for _, t := range f.Order() {
		if picked[t.Name] == nil {
			continue
		}
		tv := newTaskView(f, t, picked, opts)
		if other, dup := kube[tv.KubeName]; dup {
			return fmt.Errorf("tasks %s and %s have the same Kubernetes name %s: rename one", other, t.Name, tv.KubeName)
		}
		kube[tv.KubeName] = t.Name
		v.Tasks = append(v.Tasks, tv)
		v.K8sModels = v.K8sModels || len(tv.Requests)+len(tv.Limits)+len(tv.Volumes) > 0
		v.AirflowConns = v.AirflowConns || len(tv.AirflowConns) > 0
		for _, vol := range tv.Volumes {
			if !slices.ContainsFunc(v.Volumes, func(x dagfile.Volume) bool { return x.Name == vol.Name }) {
				v.Volumes = append(v.Volumes, vol)
			}
		}
		tags = append(tags, t.Tags...)
		v.AllVars = append(v.AllVars, tv.Vars...)
		for _, u := range tv.Upstream {
			v.Edges = append(v.Edges, edge{From: u, To: t.Name, FromID: lastID(picked[u]), ToID: tv.First})
		}
		v.Backfills = v.Backfills || tv.Workers > 0
		v.MaxWorkers = max(v.MaxWorkers, tv.Workers)
	}
	v.Tags, v.AllVars = uniq(tags), uniq(v.AllVars)
	slices.SortFunc(v.Volumes, func(a, b dagfile.Volume) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(v.Edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return nil
}

// newTaskView builds the view of one selected task.
func newTaskView(f *dagfile.File, t *dagfile.Task, picked map[string]*dagfile.Task, opts Options) *taskView {
	tv := &taskView{Name: t.Name, KubeName: kubeName(t.Name), Func: "weir_" + t.Name, Kind: string(t.Kind),
		Doc: doc(t), Args: args(t.Name, podDagfile(f, opts)),
		Retries: t.Retries, TotalRetries: t.Retries + LockRetries,
		RetryDelay: seconds(t.RetryDelay.Seconds()), Timeout: seconds(t.Timeout.Seconds()),
		Pool: t.Pool, Tags: t.Tags, Vars: f.Vars(t),
		Requests: kvs(t.Deploy.Requests), Limits: kvs(t.Deploy.Limits), Volumes: t.Deploy.Volumes}
	if t.Contract != nil {
		tv.Check = pipes.ContractCheck
	}
	tv.RetryExpr = retryExpr(t.Retries)
	for _, name := range t.Connections() {
		if c := f.Connections[name]; c != nil && c.AirflowConn != "" && len(c.Vars) == 1 {
			tv.AirflowConns = append(tv.AirflowConns, kv{c.Vars[0], c.AirflowConn})
		}
	}
	for _, s := range t.Sinks() {
		tv.Sinks = append(tv.Sinks, sinkView{Parts: s.Parts(), URI: assetURI(f, s)})
	}
	for _, s := range t.Sources() {
		tv.Sources = append(tv.Sources, sinkView{Parts: s.Parts(), URI: assetURI(f, s)})
	}
	for _, u := range t.Upstream {
		if up := picked[u]; up != nil {
			tv.Upstream = append(tv.Upstream, u)
			tv.UpstreamKube = append(tv.UpstreamKube, lastKube(up))
			tv.DepKeys = append(tv.DepKeys, depKeys(t, up)...)
		}
	}
	tv.Steps = steps(t, podDagfile(f, opts), tv.UpstreamKube)
	first, last := tv.Steps[0], tv.Steps[len(tv.Steps)-1]
	tv.First, tv.Last, tv.FirstKube, tv.LastKube = first.ID, last.ID, first.KubeName, last.KubeName
	if t.Backfill != nil {
		tv.Workers = t.Backfill.Workers
	}
	slices.SortFunc(tv.DepKeys, slices.Compare)
	tv.DepKeys = slices.CompactFunc(tv.DepKeys, slices.Equal)
	return tv
}

// lastID is the Airflow task id of a task's last step.
func lastID(t *dagfile.Task) string {
	if t.Backfill != nil {
		return t.Name + "_" + RoleCheck
	}
	return t.Name
}

// lastKube is the Argo name of a task's last step: the check of a task
// with backfill:, else the task.
func lastKube(t *dagfile.Task) string {
	if t.Backfill != nil {
		return kubeName(t.Name) + "-" + RoleCheck
	}
	return kubeName(t.Name)
}

// depKeys returns the asset keys of up that t depends on: the tables of up
// that t reads, else (an explicit dep) every table up writes.
func depKeys(t, up *dagfile.Task) [][]string {
	var read, all [][]string
	for _, w := range up.Sinks() {
		all = append(all, w.Parts())
		for _, s := range t.Sources() {
			if strings.EqualFold(s.String(), w.String()) {
				read = append(read, w.Parts())
			}
		}
	}
	if len(read) > 0 {
		return read
	}
	return all
}

// retryExpr is the Argo retry expression: exit 75 always, exit 2 never,
// anything else while fewer than retries retries were made.
func retryExpr(retries int) string {
	locked := fmt.Sprintf("asInt(lastRetry.exitCode) == %d", ExitLocked)
	if retries == 0 {
		return locked
	}
	return fmt.Sprintf("%s || (asInt(lastRetry.exitCode) != %d && asInt(retries) < %d)", locked, ExitBadInput, retries)
}

// doc describes a task for the orchestrator's UI.
func doc(t *dagfile.Task) string {
	var sinks []string
	for _, s := range t.Sinks() {
		sinks = append(sinks, s.String())
	}
	d := fmt.Sprintf("weir %s task %s: writes %s", t.Kind, t.Name, strings.Join(sinks, ", "))
	if t.Description != "" {
		d = t.Description + " (" + d + ")"
	}
	return d
}

// header is the comment at the top of each file.
func header(target string, f *dagfile.File, o Options) []string {
	cmd := []string{"weir", "generate", target, "-f", f.Path, "-o", or(o.OutDir, "DIR")}
	if o.DagfilePath != "" {
		cmd = append(cmd, "--dagfile-path", o.DagfilePath)
	}
	pods := target == "argo" || o.Operator == OperatorKubernetes
	if target == "airflow" && o.Operator != "" && o.Operator != OperatorBash {
		cmd = append(cmd, "--operator", o.Operator)
	}
	if pods && o.Image != "" && o.Image != DefaultImage {
		cmd = append(cmd, "--image", o.Image)
	}
	if o.WeirBin != "" && o.WeirBin != DefaultWeirBin {
		cmd = append(cmd, "--weir-bin", o.WeirBin)
	}
	if pods && o.Secret != "" && o.Secret != DefaultSecret {
		cmd = append(cmd, "--secret", o.Secret)
	}
	if len(o.Select) > 0 {
		cmd = append(cmd, "--select", strings.Join(o.Select, ","))
	}
	return []string{
		"Generated by weir from " + f.Path + ". Do not edit: regenerate with",
		"  " + shellJoin(cmd),
	}
}

func seconds(s float64) int { return int(s + 0.5) }

func uniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// kubeName turns a dagfile name into a DNS-1123 label: _ becomes -.
func kubeName(name string) string {
	return strings.Trim(strings.ReplaceAll(name, "_", "-"), "-")
}

// assetURI is the Airflow Asset (Dataset) URI of a table: the OpenLineage
// name of the table in the form Airflow's providers map to it
// (postgres://host:5432/db/schema/table, mysql://host:3306/db/table,
// file:///path, s3://bucket/key, bigquery://project/dataset/table), so the
// DAGs of dagfiles that share a table connect, and Airflow's lineage names
// it as weir's OpenLineage events do. A connection whose URL needs the
// environment (${VAR}) or holds a relative path cannot be named at
// generation time: its tables are weir://<connection>/<schema>.<table>.
func assetURI(f *dagfile.File, a dagfile.TableAddr) string {
	fallback := "weir://" + a.Conn + "/" + a.Name()
	c := f.Connections[a.Conn]
	if c == nil {
		return fallback
	}
	raw := withoutSecrets(c.Raw)
	if strings.Contains(raw, "${") || hasRelativePath(raw) {
		return fallback
	}
	ns, name, ok := openlineage.DatasetName(raw, a.Schema, a.Table)
	if !ok {
		return fallback
	}
	switch scheme, _, _ := strings.Cut(ns, "://"); scheme {
	case "file":
		return "file://" + name
	case "s3", "gs":
		return ns + "/" + name
	case "bigquery":
		return "bigquery://" + strings.ReplaceAll(name, ".", "/")
	}
	return ns + "/" + strings.ReplaceAll(name, ".", "/")
}

var refParam = regexp.MustCompile(`[?&][^=&#]*=[^&#]*\$\{[^}]*\}[^&#]*`)

// withoutSecrets drops what a URL's name does not need and may take from
// the environment: the user info and query parameters holding ${VAR}.
func withoutSecrets(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			raw = raw[:i+3] + rest[at+1:]
		}
	}
	return refParam.ReplaceAllStringFunc(raw, func(m string) string {
		return strings.TrimPrefix(m[:1], "&") // keep a leading "?": the query goes on
	})
}

// hasRelativePath reports whether a connection URL names a relative path
// (./data, file://./lake, warehouse=file://./lake): resolved against the
// dagfile's folder at run time, so unknown here.
func hasRelativePath(raw string) bool {
	if !strings.Contains(raw, "://") {
		return !path.IsAbs(raw)
	}
	return strings.Contains(raw, "://.")
}
