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
	for _, c := range commands {
		root.AddCommand(c())
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitCodeError{Code: ExitBadInput, Err: err}
	})
	return root
}
