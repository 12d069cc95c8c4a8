package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/generate"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newOnceCmd) }

func newOnceCmd() *cobra.Command {
	var file, task, reportFile string
	var asJSON bool
	var walWarn slotWALWarn
	cmd := &cobra.Command{
		Use:   "once --task NAME -f weir.yaml [--json]",
		Short: "Run one batch of one dagfile task, then exit",
		Long: `Once runs exactly one batch of one task: a transfer copies its tables; a
model reads what is new since its committed offsets, runs its SQL in DuckDB,
checks its contract and commits the result with the new offsets in the sink's
own commit; a stream reads events until its source is drained (available_now)
or until SIGTERM (continuous), committing each batch with the source's cursor
(docs/streams.md). It is what every generated Airflow, Dagster and Argo task runs.
Under Dagster Pipes (DAGSTER_PIPES_CONTEXT) it reports materializations and
contract checks back to Dagster; with OPENLINEAGE_URL or
OPENLINEAGE__TRANSPORT__TYPE set it emits OpenLineage run events
(docs/generate.md, "Reporting back").
Exit codes: 0 done (also when there was nothing new), 1 failure, 2 bad input
(a malformed dagfile, an unknown task, bad SQL), 75 the sink is locked by
another run (retry later). See docs/runner.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := runOnce(cmd, file, task, runner.Options{SlotWALWarn: int64(walWarn)})
			if ferr := writeReportFile(reportFile, task, rep, err); ferr != nil && err == nil {
				err = ferr
			}
			return printReport(cmd.OutOrStdout(), rep, err, asJSON)
		},
	}
	f := cmd.Flags()
	addSlotWALWarn(f, &walWarn)
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringVar(&task, "task", "", "the task to run (required)")
	f.BoolVar(&asJSON, "json", false, "print the run report as JSON on stdout")
	f.StringVar(&reportFile, "report-file", "", "also write the run report as JSON to this file, also on failure (default $"+generate.ReportFileEnv+")")
	return cmd
}

// runOnce runs one batch of task and reports it to the orchestrator.
func runOnce(cmd *cobra.Command, file, task string, opts runner.Options) (*runner.Report, error) {
	if err := required("--task", task); err != nil {
		return nil, err
	}
	opts.Progress, opts.RunID = &routes.Progress{}, globals.runID
	r, err := loadRunner(file, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rs := startReporting(cmd.Context(), r, task, cmd.OutOrStdout(), cmd.ErrOrStderr())
	stop := startProgress(opts.Progress, opts.RunID, globals.progress, cmd.ErrOrStderr())
	rep, err := r.Once(cmd.Context(), task)
	stop(err)
	rs.finish(cmd.Context(), rep, err)
	return rep, err
}

// required fails with bad input (exit 2) when a required flag is empty.
func required(flag, value string) error {
	if value == "" {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("%s is required", flag)}
	}
	return nil
}

// loadRunner loads the dagfile; a malformed one is bad input (exit 2).
func loadRunner(file string, opts ...runner.Options) (*runner.Runner, error) {
	var o runner.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	r, err := runner.Load(file, o)
	if err != nil {
		return nil, &ExitCodeError{Code: ExitBadInput, Err: err}
	}
	return r, nil
}

// printReport prints a run report (JSON on w, else a line on stderr) and
// passes the run's error on for the exit code.
func printReport(w io.Writer, rep *runner.Report, err error, asJSON bool) error {
	if rep == nil {
		return err
	}
	if asJSON {
		if jerr := json.NewEncoder(w).Encode(rep); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprintln(os.Stderr, summary(rep))
	return err
}

// summary is one human line about a run.
func summary(rep *runner.Report) string {
	head := fmt.Sprintf("%s (%s %s → %s)", rep.Task, rep.Kind, rep.Mode, rep.Sink)
	switch {
	case rep.Error != "":
		return head + ": failed"
	case rep.NothingNew:
		return fmt.Sprintf("%s: nothing new (lag %s) in %dms", head, reportLag(rep), rep.ElapsedMS)
	}
	q := ""
	if rep.Quarantined > 0 {
		q = fmt.Sprintf(", %d quarantined", rep.Quarantined)
	}
	if len(rep.Waiting) > 0 {
		q += " (a source read only up to what a backfill under way has committed whole: see the warning)"
	}
	return fmt.Sprintf("%s: %d rows in, %d out%s, lag %s, %dms", head, rep.RowsIn, rep.RowsOut, q, reportLag(rep), rep.ElapsedMS)
}

// reportLag is a report's lag with its unit, per unit when they differ.
func reportLag(rep *runner.Report) string {
	switch {
	case rep.LagUnit == "mixed":
		var parts []string
		for _, u := range slices.Sorted(maps.Keys(rep.Lags)) {
			parts = append(parts, fmt.Sprintf("%d %s", rep.Lags[u], u))
		}
		return strings.Join(parts, ", ")
	case rep.LagUnit != "":
		return fmt.Sprintf("%d %s", rep.Lag, rep.LagUnit)
	}
	return fmt.Sprint(rep.Lag)
}
