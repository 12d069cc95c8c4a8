package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/generate"
	"github.com/weirhq/weir/report/openlineage"
	"github.com/weirhq/weir/report/pipes"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner"
)

// reporters tell the orchestrator about one task run: Dagster Pipes
// messages when the run is under Pipes, OpenLineage events when the
// environment names a transport. Neither ever fails the run: their
// errors are warnings on stderr.
type reporters struct {
	r      *runner.Runner
	t      *dagfile.Task
	stderr io.Writer
	pipes  *pipes.Session
	ol     openlineage.Transport
	olRun  openlineage.RunInfo
}

// lineageTimeout bounds each OpenLineage emission: a slow receiver never
// holds a run up for long.
const lineageTimeout = 10 * time.Second

// startReporting opens the reporters of a run of task t (an unknown task
// reports nothing) and sends what is known before the run starts.
func startReporting(ctx context.Context, r *runner.Runner, task string, stdout, stderr io.Writer) *reporters {
	rs := &reporters{r: r, t: r.File().Task(task), stderr: stderr}
	if rs.t == nil {
		return rs
	}
	s, err := pipes.Open(os.LookupEnv, stdout, stderr)
	if err != nil {
		rs.warnf("%v", err)
	}
	rs.pipes = s
	if rs.pipes != nil {
		rs.pipes.Log("INFO", fmt.Sprintf("weir once --task %s: %s task writing %s", rs.t.Name, rs.t.Kind, rs.t.Sink()))
	}
	rs.ol, err = openlineage.FromEnv(os.Getenv, stderr)
	if err != nil {
		rs.warnf("%v", err)
	}
	if rs.ol != nil {
		rs.olRun = rs.lineageRun()
		rs.emit(ctx, rs.olRun.Event(openlineage.Start, time.Now(), ""))
	}
	return rs
}

// finish reports the run's outcome.
func (rs *reporters) finish(ctx context.Context, rep *runner.Report, runErr error) {
	if rs.t == nil {
		return
	}
	if rs.pipes != nil {
		rs.reportPipes(rep, runErr)
	}
	if rs.ol != nil {
		rs.reportLineage(ctx, rep, runErr)
	}
}

func (rs *reporters) warnf(format string, args ...any) {
	fmt.Fprintf(rs.stderr, "weir: warning: "+format+"\n", args...)
}

// assetKey is the Pipes asset key of a sink: the key the generated
// Dagster code gives it, or the step's only asset key when the step has
// one and the task one sink (a hand-written asset keyed otherwise).
func (rs *reporters) assetKey(a dagfile.TableAddr) string {
	parts := a.Parts()
	for i, p := range parts {
		parts[i] = pipes.KeyPart(p)
	}
	key := pipes.AssetKey(parts)
	keys := rs.pipes.Context.AssetKeys
	if len(keys) == 1 && len(rs.t.Sinks()) == 1 && !slices.Contains(keys, key) {
		return keys[0]
	}
	return key
}

// reportPipes sends the contract's check once it ran (a passed one with
// nothing checked when the run found nothing new: the generated asset
// declares the check, so it always gets a result when the run passes) and
// a materialization per sink when the run went through, then closes the
// session.
func (rs *reporters) reportPipes(rep *runner.Report, runErr error) {
	s := rs.pipes
	var c *runner.ContractResult
	if rep != nil {
		c = rep.Contract
	}
	if c == nil && rs.t.Contract != nil && runErr == nil {
		c = &runner.ContractResult{MaxBadRatio: rs.t.Contract.MaxBadRatio, Passed: true}
	}
	if c != nil && len(rs.t.Sinks()) > 0 {
		meta := pipes.Metadata{"checked": pipes.Int(c.Checked), "quarantined": pipes.Int(c.Broken),
			"max_bad_ratio": pipes.Float(c.MaxBadRatio)}
		if c.Checked > 0 {
			meta["bad_ratio"] = pipes.Float(float64(c.Broken) / float64(c.Checked))
		}
		for rule, n := range c.Rules {
			meta["rule: "+rule] = pipes.Int(n)
		}
		s.Check(rs.assetKey(rs.t.Sink()), pipes.ContractCheck, c.Passed, pipes.SeverityError, meta)
	}
	if runErr == nil && rep != nil {
		for _, a := range rs.t.Sinks() {
			s.Materialization(rs.assetKey(a), materializationMeta(rep))
		}
		s.Log("INFO", summary(rep))
	}
	var closeErr error
	if runErr != nil {
		s.Log("ERROR", redactErr(runErr))
		closeErr = errors.New(redactErr(runErr))
	}
	if err := s.Close(closeErr); err != nil {
		rs.warnf("%v", err)
	}
}

// materializationMeta is the report as typed Pipes metadata.
func materializationMeta(rep *runner.Report) pipes.Metadata {
	meta := pipes.Metadata{
		"weir/run_id": pipes.Text(rep.RunID), "mode": pipes.Text(rep.Mode),
		"rows_in": pipes.Int(rep.RowsIn), "rows_out": pipes.Int(rep.RowsOut), "quarantined": pipes.Int(rep.Quarantined),
		"lag": pipes.Int(rep.Lag), "elapsed_ms": pipes.Int(rep.ElapsedMS), "nothing_new": pipes.Bool(rep.NothingNew),
	}
	if rep.LagUnit != "" { // lag alone is no figure: rows, key distance, seconds… ("mixed": see lags)
		meta["lag_unit"] = pipes.Text(rep.LagUnit)
	}
	if rep.LagUnit == "mixed" {
		meta["lags"] = pipes.JSON(rep.Lags)
	}
	if rep.Bytes > 0 {
		meta["bytes"] = pipes.Int(rep.Bytes)
	}
	if len(rep.Offsets) > 0 {
		meta["offsets"] = pipes.JSON(rep.Offsets)
	}
	if len(rep.Changes) > 0 {
		meta["changes"] = pipes.JSON(rep.Changes)
	}
	return meta
}

// lineageRun names the job and datasets of the run.
func (rs *reporters) lineageRun() openlineage.RunInfo {
	f := rs.r.File()
	ns := os.Getenv("OPENLINEAGE_NAMESPACE")
	if ns == "" {
		ns = "weir"
	}
	ri := openlineage.RunInfo{RunID: openlineage.NewRunID(), Job: openlineage.Job{Namespace: ns, Name: f.Name + "." + rs.t.Name}}
	if p, ok := openlineage.ParentFromEnv(os.Getenv); ok {
		ri.Parent = &p
	}
	for _, a := range rs.t.Sources() {
		if d, ok := rs.dataset(a); ok {
			ri.Inputs = append(ri.Inputs, d)
		}
	}
	for _, a := range rs.t.Sinks() {
		if d, ok := rs.dataset(a); ok {
			ri.Outputs = append(ri.Outputs, d)
		}
	}
	return ri
}

// dataset names a table by the OpenLineage naming spec; ok is false when
// its connection's URL is not known or cannot be named.
func (rs *reporters) dataset(a dagfile.TableAddr) (openlineage.Dataset, bool) {
	f := rs.r.File()
	c := f.Connections[a.Conn]
	if c == nil || c.URL() == "" {
		return openlineage.Dataset{}, false
	}
	ns, name, ok := openlineage.DatasetName(runner.ResolveURL(c.URL(), f.Dir), a.Schema, a.Table)
	return openlineage.Dataset{Namespace: ns, Name: name}, ok
}

// reportLineage sends COMPLETE (outputs with their schema and row count)
// or FAIL.
func (rs *reporters) reportLineage(ctx context.Context, rep *runner.Report, runErr error) {
	ri := rs.olRun
	if runErr != nil {
		rs.emit(ctx, ri.Event(openlineage.Fail, time.Now(), redactErr(runErr)))
		return
	}
	ri.Outputs = nil
	for _, a := range rs.t.Sinks() {
		d, ok := rs.dataset(a)
		if !ok {
			continue
		}
		if cols, err := rs.r.Describe(ctx, a); err == nil {
			fields := make([]openlineage.Field, len(cols))
			for i, col := range cols {
				fields[i] = openlineage.Field{Name: col.Name, Type: col.NativeType}
				if fields[i].Type == "" && col.Type != nil {
					fields[i].Type = col.Type.String()
				}
			}
			d.WithSchema(fields)
		}
		if len(rs.t.Sinks()) == 1 && rep != nil {
			d.WithRowCount(rep.RowsOut)
		}
		ri.Outputs = append(ri.Outputs, d)
	}
	if rep != nil && rep.Quarantined > 0 && rep.QuarantineTable.Name != "" {
		q := rs.t.Sink() // the quarantine is in the sink's schema, named by the runner (runner.QuarantineTable)
		q.Table = rep.QuarantineTable.Name
		if d, ok := rs.dataset(q); ok {
			d.WithRowCount(rep.Quarantined)
			ri.Outputs = append(ri.Outputs, d)
		}
	}
	rs.emit(ctx, ri.Event(openlineage.Complete, time.Now(), ""))
}

func (rs *reporters) emit(ctx context.Context, e openlineage.RunEvent) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lineageTimeout)
	defer cancel()
	if err := rs.ol.Emit(ctx, e); err != nil {
		rs.warnf("openlineage %s: %s", e, routes.Redact(err.Error()))
	}
}

// writeReportFile writes the run report as JSON to path, else to the file
// $WEIR_REPORT_FILE names (the generated pod specs set it: Argo's output
// parameter, the KubernetesPodOperator's XCom); nowhere when both are
// empty. A run that ends before it has a report (a bad dagfile) writes
// the task and the error, so the orchestrator always finds the file.
func writeReportFile(path, task string, rep *runner.Report, runErr error) error {
	if path == "" {
		path = os.Getenv(generate.ReportFileEnv)
	}
	if path == "" {
		return nil
	}
	var v any = rep
	if rep == nil {
		msg := "no report"
		if runErr != nil {
			msg = redactErr(runErr)
		}
		v = map[string]string{"task": task, "error": msg}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("report file: %w", err)
	}
	return nil
}
