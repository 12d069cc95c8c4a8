package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var file string
	var tasks []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status -f weir.yaml [--json]",
		Short: "Show each task's committed position, its sources' head and the lag",
		Long: `Status reads each task's offsets from its sink (where they are committed
with the data) and each source's head, and prints the lag between them: in
offsets for integer cursors and Iceberg snapshots, seconds for time cursors,
the table's row estimate before a first commit. It changes nothing. It exits
1 when a task could not be inspected (its row says why).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := loadRunner(file)
			if err != nil {
				return err
			}
			defer r.Close()
			sel, err := r.Select(tasks...)
			if err != nil {
				return err
			}
			return printStatus(cmd.OutOrStdout(), r.Status(cmd.Context(), sel), asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringSliceVar(&tasks, "task", nil, "tasks to show (names, tag:NAME, kind:KIND; default: all)")
	f.BoolVar(&asJSON, "json", false, "print the statuses as JSON")
	return cmd
}

func printStatus(w io.Writer, sts []runner.TaskStatus, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sts); err != nil {
			return err
		}
	} else {
		statusTable(w, sts)
	}
	for _, st := range sts {
		if st.Error != "" {
			return fmt.Errorf("status of %s: %s", st.Task, st.Error)
		}
	}
	return nil
}

func statusTable(w io.Writer, sts []runner.TaskStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tKIND\tMODE\tSOURCE\tPOSITION\tHEAD\tLAG")
	for _, st := range sts {
		if st.Error != "" || len(st.Sources) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t%s\n", st.Task, st.Kind, st.Mode, orDash(st.Error))
			continue
		}
		for _, s := range st.Sources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Task, st.Kind, st.Mode, s.Table,
				orDash(s.Lag.Position), orDash(s.Lag.Head), lagText(s))
		}
	}
	tw.Flush()
}

func lagText(s runner.SourceStatus) string {
	switch {
	case s.Missing:
		return "not created yet"
	case s.Lag.Head == "" && s.Lag.Position == "":
		return "-"
	case !s.Lag.Known:
		return "?"
	}
	return fmt.Sprintf("%d %s", s.Lag.Behind, s.Lag.Unit)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
