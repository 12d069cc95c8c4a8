package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
)

func init() { commands = append(commands, newTransferCmd) }

func newTransferCmd() *cobra.Command {
	var opts weir.TransferOptions
	var table, tables, mode, key string
	var walWarn slotWALWarn
	var asJSON bool
	var cf connFile
	cmd := &cobra.Command{
		Use:   "transfer SRC DST --table schema.table",
		Short: "Copy tables from SRC to DST atomically (replace, append, merge)",
		Example: `  weir transfer postgres://app@db/app postgres://dw@wh/dw --table public.events
  weir transfer $SRC $DST --schema public --mode append --json
  weir transfer app lake --table public.orders   # connections of ./weir.yaml or WEIR_CONN_APP, WEIR_CONN_LAKE`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := resolveEndpoint(args[0], cf)
			if err != nil {
				return err
			}
			dst, err := resolveEndpoint(args[1], cf)
			if err != nil {
				return err
			}
			opts.Tables = splitList(table + "," + tables)
			opts.PrimaryKey = splitList(key)
			opts.Mode = routes.Mode(mode)
			opts.Progress = &routes.Progress{}
			if opts.Mode != routes.ModeLogBased {
				// A log_based run holds one chunk of its window (bounded by
				// cdc.FlushChanges, not by the pipes' budget) and keeps Go's
				// defaults: under the bulk modes' limit and pacing a 1M-change
				// PG run took 35–45% more CPU to save 9–25 MiB
				// (bench/README.md, Batch CDC).
				limitMemory(opts.Parallel, opts.ChunkBytes, dst)
			}
			opts.SlotWALWarn = int64(walWarn)
			opts.RunID = globals.runID
			stop := startProgress(opts.Progress, opts.RunID, globals.progress, cmd.ErrOrStderr())
			rep, err := weir.Transfer(cmd.Context(), src, dst, opts)
			stop(err)
			return finish(cmd.OutOrStdout(), rep, err, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&table, "table", "", "source table (schema.table)")
	f.StringVar(&tables, "tables", "", "several source tables, comma-separated")
	f.StringVar(&opts.Schema, "schema", "", "every table of this source schema")
	f.StringVar(&opts.DestTable, "dest-table", "", "destination table (default: the source's name, in the URL's database on MySQL and ClickHouse, else in the source's schema)")
	f.StringVar(&opts.DestSchema, "dest-schema", "", "destination schema for every table")
	f.StringVar(&mode, "mode", "replace", "replace, append, merge or log_based (batch CDC: drain the WAL/binlog since the saved position)")
	f.StringVar(&opts.Cursor, "cursor", "", "append/merge watermark column (default: the integer primary key)")
	f.StringVar(&key, "primary-key", "", "merge key columns, comma-separated (default: the source's primary key); a key the source repeats is refused")
	f.IntVar(&opts.Parallel, "parallel", 0, "pipes (default: fit to CPUs and the memory cap)")
	f.IntVar(&opts.ChunkBytes, "chunk-bytes", 0, "bytes each pipe buffers (default 4 MiB, thinned under a memory cap)")
	addSlotWALWarn(f, &walWarn)
	f.BoolVar(&opts.Changelog, "changelog", false, "log_based: append every change (with _weir_op, _weir_lsn, …) and a <table>__current view instead of a replica")
	f.BoolVar(&opts.NoPassthrough, "no-passthrough", false, "decode through Arrow even when both ends speak one wire format")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON on stdout")
	addConnFile(cmd, &cf)
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// finish prints the report (JSON on the command's output, stdout, or a
// summary on stderr) and returns the transfer's error for the exit code.
func finish(out io.Writer, rep *weir.Report, err error, asJSON bool) error {
	if rep == nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil {
			return jerr
		}
	} else {
		printSummary(rep)
	}
	return err
}

func printSummary(rep *weir.Report) {
	if c := rep.CDC; c != nil {
		switch {
		case c.Bootstrap:
			fmt.Fprintf(os.Stderr, "log_based: bootstrap loaded %d rows at %s\n", c.Rows, c.To)
		case c.Appended > 0:
			fmt.Fprintf(os.Stderr, "log_based: %d changes appended to the changelog; %s → %s\n", c.Appended, c.From, c.To)
		default:
			fmt.Fprintf(os.Stderr, "log_based: %d changes → %d upserts, %d deletes, %d truncates; %s → %s\n",
				c.Changes, c.Upserts, c.Deletes, c.Truncates, c.From, c.To)
		}
		if c.SlotRetained > 0 {
			fmt.Fprintf(os.Stderr, "log_based: the replication slot retains %s of WAL\n", humanBytes(c.SlotRetained))
		}
		for _, w := range c.Warnings {
			fmt.Fprintln(os.Stderr, "warning:", w)
		}
	}
	for _, t := range rep.Tables {
		switch {
		case rep.CDC != nil && t.Error == "":
		case t.Error != "" && t.DestTable == "": // failed at the probe
			fmt.Fprintf(os.Stderr, "%s: failed\n", t.Table)
		case t.Error != "":
			fmt.Fprintf(os.Stderr, "%s → %s: failed\n", t.Table, t.DestTable)
		case t.KeptEmpty:
			fmt.Fprintf(os.Stderr, "%s → %s: source is empty; destination left as it was\n", t.Table, t.DestTable)
		case t.Unchanged:
			fmt.Fprintf(os.Stderr, "%s → %s: unchanged at %s since the last replace; nothing read\n", t.Table, t.DestTable, t.SourceRevision)
		case t.NothingNew:
			fmt.Fprintf(os.Stderr, "%s → %s: nothing new past watermark %s\n", t.Table, t.DestTable, t.Watermark)
		default:
			fmt.Fprintf(os.Stderr, "%s → %s: %d rows, %s in %.1fs (%s, %d pipes%s)\n", t.Table, t.DestTable, t.Rows,
				humanBytes(t.Bytes), float64(t.ElapsedMS)/1000, rep.Mode, t.Pipes, passthroughNote(t.Native))
		}
	}
}

func passthroughNote(native bool) string {
	if native {
		return ", passthrough"
	}
	return ""
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
