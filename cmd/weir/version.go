package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/duck"
)

func init() { commands = append(commands, newVersionCmd) }

// version is set at release time: -ldflags "-X main.version=v1.2.3"
// (scripts/release.sh). Without it the module version from the build info
// is used, which is "(devel)" for a build from a checkout.
var version = ""

// commit is stamped the same way (-X main.commit=…), for builds where Go's
// own VCS stamping is off (GOFLAGS=-buildvcs=false is common on CI machines).
var commit = ""

// buildInfo is what `weir version` prints: enough to reproduce the binary
// and to say which DuckDB the models run on.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	CommitAt  string `json:"commit_time,omitempty"`
	Modified  bool   `json:"modified,omitempty"` // built from a work tree with uncommitted changes
	Go        string `json:"go"`
	Platform  string `json:"platform"`
	DuckDB    string `json:"duckdb"` // "none": built without the engine (models refuse to run)
	BuildTags string `json:"build_tags,omitempty"`
}

func readBuildInfo(ctx context.Context) buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.CommitAt = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "-tags":
				b.BuildTags = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	b.DuckDB = duckVersion(ctx)
	return b
}

// duckVersion asks the linked engine itself, so the answer cannot drift
// from go.mod's idea of it.
func duckVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		return "none"
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(ctx, "SELECT library_version FROM pragma_version()", &v); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return v
}

func (b buildInfo) String() string {
	s := "weir " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (" + c
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + fmt.Sprintf(", %s, %s, DuckDB %s", b.Go, b.Platform, b.DuckDB)
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the build: version, commit, Go and DuckDB versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo(cmd.Context())
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(b)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), b)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build info as one JSON object")
	return cmd
}
