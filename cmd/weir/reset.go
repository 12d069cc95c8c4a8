package main

import (
	"github.com/spf13/cobra"

	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newResetCmd) }

func newResetCmd() *cobra.Command {
	var file, task, to string
	var asJSON, fullRefresh bool
	cmd := &cobra.Command{
		Use:   "reset --task NAME [--to earliest|latest|OFFSET] [--full-refresh] -f weir.yaml",
		Short: "Move a model task's committed position or a stream task's cursor, or re-bootstrap a log_based task",
		Long: `Reset writes a model task's new position into its sink's state, the way a
commit does (an empty append with the new offsets, in the sink's own
transaction). earliest replays every source from its start, latest skips to
each source's head, an OFFSET (single-source models) reads on after it. Rows
already in the sink stay: an upsert replay rewrites them unchanged, an append
replay adds them again (reset warns about that on an append sink). With
--full-refresh (model tasks, --to earliest only) the sink is emptied in the
same commit as the new position — PostgreSQL: one transaction; Iceberg:
one overwrite snapshot that also sets the offset — so the next run
rebuilds it; the quarantine table is emptied the same way. Incremental
models that read that sink keep their offsets and would get the rebuilt rows
again: reset warns, naming each, to be reset --full-refresh too. Exit 75
while another run holds the sink.

For a stream task, --to earliest, latest (Kafka) or a cursor of the
source's form is written as the task's cursor in its sink's state, where
the next run seeks to it (docs/streams.md).

For a log_based transfer task (no --to, or --to earliest), reset forgets the
saved positions and drops the PostgreSQL replication slot and publication,
so the next run bootstraps again; the destination tables stay.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := required("--task", task); err != nil {
				return &ExitCodeError{Code: ExitBadInput, Err: err}
			}
			r, err := loadRunner(file)
			if err != nil {
				return err
			}
			defer r.Close()
			rep, err := r.ResetWith(cmd.Context(), task, to, runner.ResetOptions{FullRefresh: fullRefresh})
			return printReport(cmd.OutOrStdout(), rep, err, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringVar(&task, "task", "", "the model or stream task (required)")
	f.StringVar(&to, "to", "", "earliest, latest or an offset (required for model and stream tasks)")
	f.BoolVar(&fullRefresh, "full-refresh", false, "with --to earliest: also empty the model's sink, in the same commit, so the next run rebuilds it")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON on stdout")
	return cmd
}
