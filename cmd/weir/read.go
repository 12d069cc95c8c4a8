package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/fileformat"
)

func init() { commands = append(commands, newReadCmd) }

func newReadCmd() *cobra.Command {
	var opts weir.ReadOptions
	var table, columns, to string
	var asJSON bool
	var cf connFile
	cmd := &cobra.Command{
		Use:   "read SRC --table T [--columns a,b] [--where EXPR] [--to FILE|-]",
		Short: "Stream a table (or a filtered slice of it) to a Parquet or CSV file, or CSV on stdout",
		Long: `Read streams a table from SRC through its parallel pipes at constant memory.
--to picks the format by extension: .parquet, .csv.gz, .csv; - (the default)
writes CSV to stdout. The file appears only when the read succeeds.

--where takes comparisons of a column with a literal (=, !=, <>, <, <=, >, >=),
IS [NOT] NULL, AND, OR, NOT and parentheses: amount > 100 AND status = 'paid'.
It is always applied by weir; SQL sources also get the part they can apply
exactly, to read less. Rows come in no particular order.`,
		Example: `  weir read postgres://app@db/app --table public.orders --where "amount > 100" --to big.parquet
  weir read s3://lake/raw?region=eu-west-1 --table orders --columns id,amount | head
  weir read ./data --table orders.csv --to orders.parquet
  weir read app --table public.orders   # a connection of ./weir.yaml, or WEIR_CONN_APP`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if table == "" {
				return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("--table is required")}
			}
			src, err := resolveEndpoint(args[0], cf)
			if err != nil {
				return err
			}
			opts.Columns = splitList(columns)
			rep, err := readTo(cmd, src, table, to, opts)
			return finishRead(cmd, rep, err, asJSON, to)
		},
	}
	f := cmd.Flags()
	f.StringVar(&table, "table", "", "table to read (schema.table, or a path under an object store's prefix)")
	f.StringVar(&columns, "columns", "", "columns to keep, comma-separated, in this order (default: all)")
	f.StringVar(&opts.Where, "where", "", `row filter, e.g. "amount > 100 AND status IS NOT NULL"`)
	f.StringVar(&to, "to", "-", "output file (.parquet, .csv.gz, .csv) or - for CSV on stdout")
	f.IntVar(&opts.Parallel, "parallel", 0, "pipes (default: fit to CPUs and the memory cap)")
	f.IntVar(&opts.ChunkBytes, "chunk-bytes", 0, "bytes each pipe buffers (default 4 MiB, thinned under a memory cap)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (on stderr when --to is -)")
	addConnFile(cmd, &cf)
	return cmd
}

// outputFormat picks the format from the file name.
func outputFormat(to string) (string, error) {
	lower := strings.ToLower(to)
	switch {
	case to == "-" || strings.HasSuffix(lower, ".csv"):
		return fileformat.CSV, nil
	case strings.HasSuffix(lower, ".csv.gz"):
		return fileformat.CSVGzip, nil
	case strings.HasSuffix(lower, ".parquet"):
		return fileformat.Parquet, nil
	}
	return "", routes.BadInput("--to %s: name a .parquet, .csv.gz or .csv file, or - for stdout", to)
}

func readTo(cmd *cobra.Command, src, table, to string, opts weir.ReadOptions) (*weir.ReadReport, error) {
	format, err := outputFormat(to)
	if err != nil {
		return nil, err
	}
	if to == "-" {
		w := bufio.NewWriterSize(os.Stdout, 256<<10)
		rep, err := weir.ReadTo(cmd.Context(), src, table, w, format, opts)
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return rep, err
	}
	return readToFile(cmd, src, table, to, format, opts)
}

// readToFile writes a temporary file beside the target and renames it into
// place on success, so a failed or interrupted read leaves no partial file.
func readToFile(cmd *cobra.Command, src, table, to, format string, opts weir.ReadOptions) (*weir.ReadReport, error) {
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".weir-*")
	if err != nil {
		return nil, fmt.Errorf("create output: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 256<<10)
	rep, err := weir.ReadTo(cmd.Context(), src, table, w, format, opts)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), to)
	}
	return rep, err
}

// finishRead prints the report: on the command's output, or its error
// output when the rows go to stdout.
func finishRead(cmd *cobra.Command, rep *weir.ReadReport, err error, asJSON bool, to string) error {
	if rep == nil {
		return err
	}
	out := cmd.OutOrStdout()
	if to == "-" {
		out = cmd.ErrOrStderr()
	}
	switch {
	case asJSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil && err == nil {
			err = jerr
		}
	case err == nil && to != "-":
		fmt.Fprintf(os.Stderr, "%s → %s: %d rows, %s in %.1fs (%d pipes%s)\n", rep.Table, to, rep.Rows, humanBytes(rep.Bytes),
			float64(rep.ElapsedMS)/1000, rep.Parallel, pushedNote(rep.Pushed))
	}
	return err
}

func pushedNote(cond string) string {
	if cond == "" {
		return ""
	}
	return ", filter pushed down: " + cond
}
