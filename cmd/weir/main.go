// Command weir moves tables between databases and lake formats, runs
// incremental models, and generates orchestrator code from a dagfile.
//
// Exit codes: 0 done, 1 failure, 2 bad input (caught before a row moves),
// 75 locked by another run (EX_TEMPFAIL: retry later).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/weirhq/weir/routes/all"
)

// commands are added by each command's file in init.
var commands []func() *cobra.Command

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := startCPUProfile()
	err := newRoot().ExecuteContext(ctx)
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "weir:", redactErr(err))
	}
	stop()
	os.Exit(exitCode(err))
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "weir",
		Short:         "Move tables at wire speed, run incremental models, generate DAGs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addGlobalFlags(root)
	// --version prints what `weir version` prints. Not cobra's own Version
	// field: that is rendered for every command, and asking DuckDB its
	// version opens an engine.
	showVersion := root.Flags().Bool("version", false, "print the build info (see weir version)")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if *showVersion {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), readBuildInfo(cmd.Context()))
			return err
		}
		return cmd.Help()
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	// Runnable (RunE above), so that an unknown command reaches Args (usage
	// error, exit 2).
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unknown command %q (run weir --help for the commands)", args[0])
		}
		return nil
	}
	usageErrors(root)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitCodeError{Code: ExitBadInput, Err: err}
	})
	return root
}

// usageErrors makes every wrong use of a command — a missing or extra
// argument, an unknown command — exit 2 with the command's usage line,
// which names what is missing.
func usageErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &ExitCodeError{Code: ExitBadInput, Err: fmt.Errorf("%w; usage: %s", err, cmd.UseLine())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageErrors(sub)
	}
}
