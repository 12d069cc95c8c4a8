package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/routes"
)

func init() { commands = append(commands, newMaintainCmd) }

func newMaintainCmd() *cobra.Command {
	var task, table, skip string
	var keepFrom int64
	var asJSON bool
	var cf connFile
	o := routes.MaintainOptions{}
	cmd := &cobra.Command{
		Use:   "maintain (--task NAME -f weir.yaml | SRC --table T) [--dry-run] [--json]",
		Short: "Compact an Iceberg table's small files, expire the snapshots no offset needs, remove orphan files",
		Long: `Maintain keeps an Iceberg table a task writes (--task) or any Iceberg
table (SRC --table T; SRC a connection of the dagfile or a URL) small and
fast, under the table's lease (exit 75 while a run writes it):

  compact  rewrites the small data files (under 3/4 of --target-file-size)
           that every reader has consumed into larger ones, with their
           deletes applied: one replace snapshot, whose summary carries the
           table's weir state; readers by snapshot skip its rows (not new).
  expire   drops the snapshots older than the oldest one an incremental
           model's committed offset names (and than --retain-last), and the
           files only they held.
  orphans  deletes the files under the table's location that no snapshot
           references and that are older than --orphan-age (default: the
           lease's TTL): what a killed run leaves.

No step moves a committed offset. The readers are the dagfile's models: a
table read by programs outside it can lose what they have not read yet;
pass --keep-from SEQ (the lowest sequence number they committed) for them.
--dry-run reports what would be done and changes nothing (docs/maintain.md).`,
		Example: `  weir maintain --task silver_orders --dry-run --json
  weir maintain lake --table bronze.orders
  weir maintain "iceberg://?catalog=sql&uri=sqlite:///lake/catalog.db&warehouse=file:///lake" --table bronze.orders --keep-from 42`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (task == "") == (len(args) == 0) {
				return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("name either --task NAME or SRC --table T")}
			}
			if len(args) == 1 && table == "" {
				return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("--table is required with SRC")}
			}
			if task != "" && table != "" {
				return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("--table is for SRC --table T; --task %s maintains the table the task writes: drop one", task)}
			}
			if err := checkMaintainFlags(cmd, o, keepFrom); err != nil {
				return &ExitCodeError{Code: ExitBadInput, Err: err}
			}
			o.Consumed = routes.AllConsumed
			if cmd.Flags().Changed("keep-from") {
				o.Consumed = keepFrom
			}
			for _, s := range splitList(skip) {
				if s != "compact" && s != "expire" && s != "orphans" {
					return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("--skip %s: name compact, expire or orphans", s)}
				}
				o.Skip = append(o.Skip, s)
			}
			rep, err := maintain(cmd, task, args, table, cf, o)
			return printMaintain(cmd.OutOrStdout(), rep, err, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&task, "task", "", "the task whose Iceberg sink to maintain")
	f.StringVar(&table, "table", "", "with SRC: the table (namespace.table)")
	f.BoolVar(&o.DryRun, "dry-run", false, "report what would be done; change nothing")
	f.IntVar(&o.RetainLast, "retain-last", 1, "keep at least this many snapshots of the main branch")
	f.DurationVar(&o.OrphanAge, "orphan-age", 0, "leave unreferenced files younger than this (default: the lease's TTL, lease= on the URL)")
	f.Int64Var(&o.TargetFileBytes, "target-file-size", routes.DefaultTargetFileBytes, "compaction's target data file size in bytes")
	f.IntVar(&o.MinInputFiles, "min-input-files", 2, "the fewest small files worth a rewrite")
	f.Int64Var(&keepFrom, "keep-from", 0, "also keep snapshots from this sequence number on, and compact no file added after it (readers outside the dagfile)")
	f.StringVar(&skip, "skip", "", "steps to leave out, comma-separated: compact, expire, orphans")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON on stdout")
	addConnFile(cmd, &cf)
	return cmd
}

// maintain runs it on a task's sink, a table of a dagfile connection
// (whose models' offsets count), or a table of a URL (no readers known).
func maintain(cmd *cobra.Command, task string, args []string, table string, cf connFile, o routes.MaintainOptions) (*routes.MaintainReport, error) {
	ctx := cmd.Context()
	if task != "" {
		r, err := loadRunner(cf.path)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return r.Maintain(ctx, task, o)
	}
	if nameRE.MatchString(args[0]) {
		if r, err := loadRunner(cf.path); err == nil {
			defer r.Close()
			addr, err := dagfile.ParseTableAddr(args[0] + ":" + table)
			if err != nil {
				return nil, &ExitCodeError{Code: ExitBadInput, Err: err}
			}
			return r.MaintainTable(ctx, addr, o)
		}
	}
	src, err := resolveEndpoint(args[0], cf)
	if err != nil {
		return nil, err
	}
	ep, err := routes.Open(ctx, src)
	if err != nil {
		return nil, err
	}
	defer ep.Close()
	e, ok := routes.As[routes.Maintainer](ep)
	if !ok {
		return nil, routes.BadInput("weir maintain works on Iceberg tables; %s is not an Iceberg catalog", args[0])
	}
	schema, name, ok := strings.Cut(table, ".")
	if !ok {
		schema, name = "", table
	}
	o.RunID = routes.NewRunID()
	return e.Maintain(ctx, routes.TableRef{Schema: schema, Name: name}, o)
}

// printMaintain prints the report (JSON on w, else lines on stderr) and
// passes the error on for the exit code.
func printMaintain(w io.Writer, rep *routes.MaintainReport, err error, asJSON bool) error {
	if rep == nil {
		return err
	}
	if asJSON {
		if jerr := json.NewEncoder(w).Encode(rep); jerr != nil {
			return jerr
		}
		return err
	}
	verb := map[bool]string{true: "would ", false: ""}[rep.DryRun]
	c := rep.Compact
	fmt.Fprintf(w, "%s: %scompact %d small files into %d (data files %d → %d; %d small files not yet read by every reader left)\n",
		rep.Table, verb, c.Rewritten, c.Written, c.DataFilesBefore, c.DataFilesAfter, c.Unconsumed)
	fmt.Fprintf(w, "%s: %sexpire %d snapshots, keep %d\n", rep.Table, verb, len(rep.Expire.Expired), rep.Expire.Kept)
	fmt.Fprintf(w, "%s: %sremove %d orphan files (%d bytes, older than %s)\n", rep.Table, verb, len(rep.Orphans.Files), rep.Orphans.Bytes, rep.Orphans.OlderThan)
	return err
}

// checkMaintainFlags refuses the numbers that would otherwise silently
// fall back to a default (a negative size, age or count).
func checkMaintainFlags(cmd *cobra.Command, o routes.MaintainOptions, keepFrom int64) error {
	for _, c := range []struct {
		flag string
		bad  bool
		want string
	}{
		{"retain-last", o.RetainLast < 1, "at least 1"},
		{"min-input-files", o.MinInputFiles < 1, "at least 1"},
		{"target-file-size", o.TargetFileBytes < 1, "a size in bytes above 0"},
		{"orphan-age", o.OrphanAge < 0, "a duration of 0 (the lease's TTL) or more"},
		{"keep-from", keepFrom < 0, "a snapshot sequence number, 0 or more"},
	} {
		if c.bad && cmd.Flags().Changed(c.flag) {
			return fmt.Errorf("--%s %s: give %s", c.flag, cmd.Flags().Lookup(c.flag).Value, c.want)
		}
	}
	return nil
}
