package main

import (
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/routes"
)

// globals are the root's persistent flags (progress and logs, on stderr).
var globals struct {
	progress  progressConfig
	logLevel  string
	logFormat string
	runID     string // this invocation's run id: in every log line, and the transfer's
}

// defaultProgressInterval spaces plain and json progress lines: often enough
// that a scheduler's log shows a long run is alive, rare enough to stay short.
const defaultProgressInterval = 30 * time.Second

func addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&globals.progress.mode, "progress", progressAuto, "progress on stderr: auto (tty on a terminal, else plain), tty, plain (key=value lines), json (one object a line), off")
	f.DurationVar(&globals.progress.interval, "progress-interval", defaultProgressInterval, "time between plain and json progress lines")
	f.StringVar(&globals.logLevel, "log-level", "warn", "log on stderr at debug (every SQL statement, secrets redacted), info (each step), warn or error")
	f.StringVar(&globals.logFormat, "log-format", "text", "log format: text or json")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := globals.progress.validate(); err != nil {
			return err
		}
		globals.runID = routes.NewRunID()
		l, err := newLogger(cmd.ErrOrStderr(), globals.logLevel, globals.logFormat)
		if err != nil {
			return err
		}
		slog.SetDefault(l.With("run_id", globals.runID))
		return nil
	}
}

// newLogger returns the slog logger the flags ask for, writing to w.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || !validLevel(level) {
		return nil, routes.BadInput("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, routes.BadInput("--log-format %q: use text or json", format)
}

func validLevel(s string) bool {
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return true
	}
	return false
}
