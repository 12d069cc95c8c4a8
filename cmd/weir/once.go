package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newOnceCmd) }

func newOnceCmd() *cobra.Command {
	var file, task string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "once --task NAME -f weir.yaml [--json]",
		Short: "Run one batch of one dagfile task, then exit",
		Long: `Once runs exactly one batch of one task: a transfer copies its tables; a
model reads what is new since its committed offsets, runs its SQL in DuckDB,
checks its contract and commits the result with the new offsets in the sink's
own commit; a stream reads events until its source is drained (available_now)
or until SIGTERM (continuous), committing each batch with the source's cursor
(docs/streams.md). It is what every generated Airflow, Dagster and Argo task runs.
Exit codes: 0 done (also when there was nothing new), 1 failure, 2 bad input
(a malformed dagfile, an unknown task, bad SQL), 75 the sink is locked by
another run (retry later). See docs/runner.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("--task", task); err != nil {
				return err
			}
			p := &routes.Progress{}
			r, err := loadRunnerWith(file, runner.Options{Progress: p, RunID: globals.runID})
			if err != nil {
				return err
			}
			defer r.Close()
			stop := startProgress(p, globals.runID, globals.progress, cmd.ErrOrStderr())
			rep, err := r.Once(cmd.Context(), task)
			stop(err)
			return printReport(cmd.OutOrStdout(), rep, err, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringVar(&task, "task", "", "the task to run (required)")
	f.BoolVar(&asJSON, "json", false, "print the run report as JSON on stdout")
	return cmd
}

// required fails with bad input (exit 2) when a required flag is empty.
func required(flag, value string) error {
	if value == "" {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("%s is required", flag)}
	}
	return nil
}

// loadRunner loads the dagfile; a malformed one is bad input (exit 2).
func loadRunner(file string) (*runner.Runner, error) {
	return loadRunnerWith(file, runner.Options{})
}

func loadRunnerWith(file string, opts runner.Options) (*runner.Runner, error) {
	r, err := runner.Load(file, opts)
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
		return fmt.Sprintf("%s: nothing new (lag %d) in %dms", head, rep.Lag, rep.ElapsedMS)
	}
	q := ""
	if rep.Quarantined > 0 {
		q = fmt.Sprintf(", %d quarantined", rep.Quarantined)
	}
	return fmt.Sprintf("%s: %d rows in, %d out%s, lag %d, %dms", head, rep.RowsIn, rep.RowsOut, q, rep.Lag, rep.ElapsedMS)
}
