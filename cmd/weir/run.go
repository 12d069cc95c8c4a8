package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newRunCmd) }

func newRunCmd() *cobra.Command {
	var file string
	var tasks []string
	var once, asJSON bool
	var interval time.Duration
	var walWarn slotWALWarn
	cmd := &cobra.Command{
		Use:   "run -f weir.yaml [--task T…] [--once] [--interval 1m]",
		Short: "Run the DAG's tasks in dependency order, in a loop (or once)",
		Long: `Run executes the dagfile's tasks (or those named by --task: names, tag:NAME,
kind:KIND) in dependency order, one batch each, every --interval until
interrupted; --once makes one pass and exits. A task whose upstream failed is
skipped for that pass. With --once the exit code is that of the failures
(75 when only locks failed, 2 for bad input, 1 otherwise).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := loadRunner(file, runner.Options{SlotWALWarn: int64(walWarn)})
			if err != nil {
				return err
			}
			defer r.Close()
			sel, err := r.Select(tasks...)
			if err != nil {
				return err
			}
			done := reportEach(cmd.OutOrStdout(), asJSON)
			if once {
				return r.Pass(cmd.Context(), sel, done)
			}
			return r.Loop(cmd.Context(), sel, interval, done)
		},
	}
	f := cmd.Flags()
	addSlotWALWarn(f, &walWarn)
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringSliceVar(&tasks, "task", nil, "tasks to run (names, tag:NAME, kind:KIND; default: all)")
	f.BoolVar(&once, "once", false, "one pass over the tasks, then exit")
	f.DurationVar(&interval, "interval", time.Minute, "time between the starts of two passes")
	f.BoolVar(&asJSON, "json", false, "print each run report as a JSON line on stdout")
	return cmd
}

// reportEach prints each task's report as it finishes: a JSON line on w,
// or a summary line on stderr.
func reportEach(w io.Writer, asJSON bool) func(*runner.Report, error) {
	enc := json.NewEncoder(w)
	return func(rep *runner.Report, err error) {
		if asJSON {
			enc.Encode(rep)
		} else {
			fmt.Fprintln(os.Stderr, summary(rep))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weir:", redactErr(err))
		}
	}
}
