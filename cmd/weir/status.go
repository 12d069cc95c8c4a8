package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newStatusCmd) }

func newStatusCmd() *cobra.Command {
	var file string
	var tasks []string
	var asJSON bool
	var walWarn slotWALWarn
	var store string
	cmd := &cobra.Command{
		Use:   "status -f weir.yaml [--json] [--claims URL]",
		Short: "Show each task's committed position, its sources' head and the lag",
		Long: `Status reads each task's offsets from its sink (where they are committed
with the data) and each source's head, and prints the lag between them,
with its unit: rows where the source counts them (PostgreSQL, Iceberg), else
the key distance of an integer cursor, seconds for a time cursor, snapshots
for Iceberg snapshots that do not say their rows, the table's row estimate
before a first commit. A log_based task's lag is
the bytes of WAL or binlog from its committed position to the log's end;
below the table, its PostgreSQL slot's retained WAL, confirmed position and
wal_status. It changes nothing. It exits 2 when a task's connection is
refused as bad input (credentials, an unknown database or URL parameter),
1 when a task could not be inspected otherwise, or when a log_based task's
slot or binlog file is gone (its row says why and how to re-bootstrap).
With --claims (the claim store of weir backfill and weir worker) it also
shows each transfer task's backfill under way: every bucket's window, its
progress committed in the sink, and its claim (owner, token, lease expiry,
done).`,
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
			sts := r.Status(cmd.Context(), sel)
			if store != "" {
				if err := addBackfills(cmd.Context(), r, store, sts); err != nil {
					return err
				}
			}
			return printStatus(cmd.OutOrStdout(), sts, asJSON)
		},
	}
	f := cmd.Flags()
	addSlotWALWarn(f, &walWarn)
	f.StringVarP(&file, "file", "f", "weir.yaml", "the dagfile")
	f.StringSliceVar(&tasks, "task", nil, "tasks to show (names, tag:NAME, kind:KIND; default: all)")
	f.BoolVar(&asJSON, "json", false, "print the statuses as JSON")
	f.StringVar(&store, "claims", "", "also show the buckets of backfills under way, from this claim store ("+scheme.ClaimStoresHint+")")
	return cmd
}

// addBackfills fills in the backfill under way of each transfer task.
func addBackfills(ctx context.Context, r *runner.Runner, raw string, sts []runner.TaskStatus) error {
	store, err := claims.Open(ctx, raw)
	if err != nil {
		return err
	}
	defer store.Close()
	for i, st := range sts {
		if st.Kind != "transfer" || st.Error != "" {
			continue
		}
		bs, err := r.BackfillStatus(ctx, st.Task, store)
		if err != nil && !errors.Is(err, routes.ErrBadInput) && !errors.Is(err, routes.ErrUnsupported) {
			sts[i].Error, sts[i].Err = redactErr(err), err
			continue
		}
		sts[i].Backfill = bs
	}
	return nil
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
	var errs []error
	for _, st := range sts {
		if st.Error != "" {
			errs = append(errs, &statusError{task: st.Task, msg: st.Error, err: st.Err})
		}
	}
	return errors.Join(errs...)
}

// statusError is a task's status error: its redacted text, and the error
// behind it for the exit code (bad input exits 2).
type statusError struct {
	task, msg string
	err       error
}

func (e *statusError) Error() string { return "status of " + e.task + ": " + e.msg }
func (e *statusError) Unwrap() error { return e.err }

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
	for _, st := range sts {
		if b := st.Backfill; b != nil {
			fmt.Fprintf(w, "%s: backfill %s, %d buckets from %s to %s:\n", st.Task, b.Plan.ID, b.Plan.Buckets, orDash(b.Plan.After), b.Plan.Head)
			bw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(bw, "  BUCKET\tWINDOW\tPROGRESS\tOWNER\tTOKEN\tLEASE UNTIL\tDONE")
			for _, k := range b.Buckets {
				until := "-"
				if !k.Expires.IsZero() {
					until = k.Expires.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(bw, "  %d\t(%s, %s]\t%s\t%s\t%d\t%s\t%v\n", k.Bucket, orDash(k.After), k.Until, orDash(k.Progress), orDash(k.Owner), k.Token, until, k.Done)
			}
			bw.Flush()
		}
	}
	for _, st := range sts {
		if l := st.Log; l != nil && l.Slot != "" && !l.Lost && l.WALStatus != "" {
			fmt.Fprintf(w, "%s: slot %s (wal_status %s) retains %s of WAL; confirmed %s, %s behind the WAL end\n",
				st.Task, l.Slot, l.WALStatus, bytesText(l.Retained), orDash(l.Confirmed), bytesText(l.ConfirmedBehind))
			if l.Warning != "" {
				fmt.Fprintf(w, "%s: warning: %s\n", st.Task, l.Warning)
			}
		}
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d bytes (%.1f GiB)", n, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func lagText(s runner.SourceStatus) string {
	switch {
	case s.Missing:
		return "not created yet"
	case s.Lag.Head == "" && s.Lag.Position == "":
		return "-"
	case !s.Lag.Known:
		return "unknown"
	}
	if s.Lag.Unit == "bytes" {
		return bytesText(s.Lag.Behind)
	}
	return fmt.Sprintf("%d %s", s.Lag.Behind, s.Lag.Unit)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
