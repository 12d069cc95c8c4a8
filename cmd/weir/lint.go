package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newLintCmd) }

// lintFlags are the flags of weir lint.
type lintFlags struct {
	file, format string
	sel, envFrom []string
}

func newLintCmd() *cobra.Command {
	var l lintFlags
	cmd := &cobra.Command{
		Use:   "lint -f weir.yaml [--format text|json] [--select …] [--env-from FILE]",
		Short: "Check a dagfile: format, DAG rules and streaming rules",
		Long: `Lint checks the dagfile without connecting anywhere and without its
${VAR} values: format errors (DAG-000; also a malformed sqs:// source URL
written out in the dagfile: its queue name and parameters), cycles (DAG-001), unknown connections
(DAG-002), a table written by two tasks (DAG-003), dependencies dropped by
--select (DAG-004), isolated tasks (DAG-005), unknown deps (DAG-006), and the
streaming rules STREAM-001 (bare append from a resumable source), STREAM-002
(continuous trigger), STREAM-003 (WebSocket source without a cursor),
when the dagfile has deploy:, K8S-001 (local files in a pod without a volume);
and it binds every contract's type names and rules in DuckDB: CONTRACT-001
(a type or rule DuckDB refuses), CONTRACT-002 (a rule reads a column the
contract does not list, so it cannot be bound), and refuses OLC-001 (an Open
Lakehouse Contract, *.olc.yaml, uses an element weir does not implement,
named at its line; docs/contracts.md); it parses every model's SQL
and binds it where its inputs' schemas are known offline (an upstream model's
bound output): MODEL-002 (SQL that does not parse or bind), MODEL-004 (info:
an input's schema is not knowable offline), beside MODEL-001 (two sources read
incrementally) and MODEL-003 (a lookup without its key). With --env-from FILE
(NAME=value lines, as a .env file or a Secret's keys; values are not read) it
reports per task the variables its worker or pod must be given: ENV-000 when
the files have them all, ENV-001 (an error) naming those missing. It exits 2 (bad input) when a
finding is an error, 0 with warnings only, 1 when lint itself cannot run.
See docs/dagfile.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLint(cmd.Context(), cmd.OutOrStdout(), l) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&l.file, "file", "f", "weir.yaml", "the dagfile")
	fl.StringVar(&l.format, "format", "text", "output format: text or json")
	fl.StringSliceVar(&l.sel, "select", nil, "check the selection weir generate --select would render")
	fl.StringSliceVar(&l.envFrom, "env-from", nil, "files of NAME=value lines: the variables the workers or pods will have (repeatable)")
	return cmd
}

// lintReport is the --format json output.
type lintReport struct {
	Findings []dagfile.Finding `json:"findings"`
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	Infos    int               `json:"infos"`
}

// runLint prints the findings and fails when one is an error: the dagfile
// (or a contract it names) is bad input, exit 2 as at run time.
func runLint(ctx context.Context, w io.Writer, l lintFlags) error {
	if l.format != "text" && l.format != "json" {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("lint: format %q: use text or json", l.format)}
	}
	findings, err := dagfile.CheckFile(l.file, l.sel...)
	if err != nil {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("lint: %w", err)}
	}
	if len(l.envFrom) > 0 {
		more, err := envFindings(l)
		if err != nil {
			return err
		}
		findings = append(findings, more...)
	}
	more, err := lintContracts(ctx, l)
	if err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	findings = append(findings, more...)
	dagfile.SortFindings(findings, l.file)
	r := lintReport{Findings: append([]dagfile.Finding{}, findings...)}
	for _, f := range findings {
		switch f.Severity {
		case dagfile.SeverityError:
			r.Errors++
		case dagfile.SeverityWarning:
			r.Warnings++
		default:
			r.Infos++
		}
	}
	if err := printLint(w, l.format, r); err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	if r.Errors > 0 {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("lint: %s: %d errors, %d warnings", l.file, r.Errors, r.Warnings)}
	}
	return nil
}

// envFindings checks each selected task's variables against the --env-from
// files. A dagfile that does not parse has its errors reported already.
func envFindings(l lintFlags) ([]dagfile.Finding, error) {
	present := map[string]bool{}
	for _, path := range l.envFrom {
		names, err := envNames(path)
		if err != nil {
			return nil, &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("lint: --env-from: %w", err)}
		}
		for _, n := range names {
			present[n] = true
		}
	}
	f, err := dagfile.LoadStatic(l.file)
	if err != nil {
		return nil, nil
	}
	return dagfile.EnvFindings(f, func(name string) bool { return present[name] }, l.sel...)
}

// envNames returns the variable names of a .env-style file: NAME=value or
// NAME lines, an optional "export ", # comments.
func envNames(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		name = strings.TrimSpace(name)
		if !envNameRE.MatchString(name) {
			return nil, fmt.Errorf("%s:%d: %q is not NAME=value", path, i+1, line)
		}
		names = append(names, name)
	}
	return names, nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// lintContracts binds the selected tasks' contracts in DuckDB; a dagfile
// that does not load has its format errors reported, and no contract check.
func lintContracts(ctx context.Context, l lintFlags) ([]dagfile.Finding, error) {
	f, err := dagfile.LoadStatic(l.file)
	if err != nil {
		return nil, nil
	}
	tasks, err := f.Select(l.sel...)
	if err != nil {
		return nil, nil
	}
	out, err := runner.LintContracts(ctx, f, tasks)
	if err != nil {
		return nil, err
	}
	out = append(out, runner.LintStreams(f, tasks)...)
	more, err := runner.LintModels(ctx, f, tasks)
	return append(out, more...), err
}

// printLint writes the report as text (one finding a line) or JSON.
func printLint(w io.Writer, format string, r lintReport) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d errors, %d warnings, %d infos\n", r.Errors, r.Warnings, r.Infos)
	return err
}
