package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/generate"
)

func init() { commands = append(commands, newGenerateCmd) }

// generateFlags are the flags of weir generate.
type generateFlags struct {
	file, out string
	check     bool
	opts      generate.Options
}

func newGenerateCmd() *cobra.Command {
	var g generateFlags
	cmd := &cobra.Command{
		Use:   "generate airflow|dagster|argo -f weir.yaml -o DIR",
		Short: "Generate Airflow DAGs, Dagster assets or Argo Workflows from a dagfile",
		Long: `Generate renders the dagfile into files an orchestrator runs unchanged:
  airflow  weir_<name>.py: one DAG, one task per dagfile task (BashOperator, or
           KubernetesPodOperator with --operator kubernetes)
  dagster  definitions.py: one asset per task, keyed by the table it writes
  argo     <name>.workflowtemplate.yaml and, with a schedule, <name>.cronworkflow.yaml
Every task runs "weir once --task NAME -f <dagfile> --json". The dagfile's
${VAR} references are not expanded: no secret is written. With --check
nothing is written: it exits 1, listing the files, when the files in -o differ
from what the dagfile generates now (for the CI of a dags repository), and 0
when they are equal. See docs/generate.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGenerate(cmd, args[0], g) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&g.file, "file", "f", "weir.yaml", "the dagfile")
	fl.StringVarP(&g.out, "out", "o", ".", "the folder to write into (created if needed)")
	fl.StringVar(&g.opts.Image, "image", "", "the weir container image (Argo, --operator kubernetes; default: the dagfile's deploy: image:, else "+generate.DefaultImage+")")
	fl.StringVar(&g.opts.WeirBin, "weir-bin", generate.DefaultWeirBin, "the weir executable in the generated commands")
	fl.StringVar(&g.opts.Operator, "operator", generate.OperatorBash, "the Airflow operator: bash or kubernetes")
	fl.StringSliceVar(&g.opts.Select, "select", nil, "only these tasks: NAME, tag:NAME or kind:KIND (comma-separated or repeated)")
	fl.StringVar(&g.opts.DagfilePath, "dagfile-path", "", "the dagfile path in the generated commands (default: the -f value)")
	fl.BoolVar(&g.check, "check", false, "write nothing; exit 1 listing the files in -o that differ from what would be generated")
	fl.StringVar(&g.opts.Secret, "secret", generate.DefaultSecret, "the Kubernetes Secret with the connections' variables (Argo, --operator kubernetes)")
	return cmd
}

// runGenerate renders target and writes its files, printing their paths.
func runGenerate(cmd *cobra.Command, target string, g generateFlags) error {
	if !slices.Contains(generate.Targets, target) {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("generate: unknown target %q: use %s", target, strings.Join(generate.Targets, ", "))}
	}
	f, err := dagfile.LoadStatic(g.file)
	if err != nil {
		return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("generate %s: %w", target, err)}
	}
	g.opts.OutDir = g.out
	if target == "argo" || (target == "airflow" && g.opts.Operator == generate.OperatorKubernetes) {
		// The tasks run in pods: say which cannot see their local files.
		pods, _ := dagfile.PodFindings(f, g.opts.Select...)
		for _, p := range pods {
			fmt.Fprintln(cmd.ErrOrStderr(), p)
		}
	}
	files, err := generate.Render(target, f, g.opts)
	if err != nil {
		return &ExitCodeError{Code: ExitBadInput, Err: err}
	}
	if g.check {
		return checkGenerated(cmd.OutOrStdout(), target, g.out, files)
	}
	paths, err := generate.Write(g.out, files)
	if err != nil {
		return fmt.Errorf("generate %s: %w", target, err)
	}
	for _, p := range paths {
		fmt.Fprintln(cmd.OutOrStdout(), p)
	}
	return nil
}

// checkGenerated compares files with those in dir and fails (exit 1) listing
// each one missing or different.
func checkGenerated(w io.Writer, target, dir string, files map[string][]byte) error {
	var stale []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(dir, name)
		have, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, path+" (missing)")
		case err != nil:
			return fmt.Errorf("generate %s --check: %w", target, err)
		case !bytes.Equal(have, files[name]):
			stale = append(stale, path)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	for _, s := range stale {
		fmt.Fprintln(w, s)
	}
	return &ExitCodeError{Code: ExitFailure, Err: fmt.Errorf("generate %s --check: %d files differ from the dagfile: regenerate them (weir generate %s without --check)", target, len(stale), target)}
}
