package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
	"github.com/weirhq/weir/runner"
)

func init() { commands = append(commands, newBackfillCmd, newWorkerCmd) }

func newBackfillCmd() *cobra.Command {
	var a claimArgs
	var n int
	var abandon bool
	cmd := &cobra.Command{
		Use:   "backfill --task NAME [--shards N | --abandon] --claims URL -f weir.yaml",
		Short: "Cut a transfer task's backlog into N buckets for weir worker",
		Long: `Backfill plans a transfer task's backlog for several workers (docs/workers.md):
under the destination's lock it fixes the window from the table's committed
offset to the integer cursor's maximum now, cuts it into N contiguous buckets
of equal cursor width, commits the plan into the destination as the table's
state (creating the table if needed), and plans the N buckets in the claim
store (postgres://…[?schema=NAME], etcd://host:port[,host:port…][/prefix],
etcd+https://… for TLS, or sqlite:///path). Until the workers
finish, an ordinary run of the task is refused as locked (exit 75). A plan
already under way is kept; another N is refused. It prints the plan as JSON.
N is 1 to the --shards maximum below (checked before anything is written).
With --abandon it removes the plan under way instead: the task's offset goes
back to where the plan started, in one commit under the destination's lock,
and the claim store forgets the buckets. It is refused (exit 2) once a
bucket committed rows, which the next run would copy again: let the workers
finish that plan.
Without --claims and --shards, the task's backfill: in the dagfile gives
them (claims: names a connection, its URL from the environment).
Only an append or merge transfer of one table with an integer cursor, into
PostgreSQL, can be cut (a merge only on its cursor); anything else is bad
input (exit 2). Exit codes: 0 planned (or nothing to backfill), 1 failure,
2 bad input, 75 the destination is locked by another run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, s, err := a.open(cmd)
			if err != nil {
				return err
			}
			defer r.Close()
			defer s.Close()
			if abandon {
				res, err := r.Abandon(cmd.Context(), a.task, s)
				return printBackfill(cmd.OutOrStdout(), res, err)
			}
			res, err := r.Backfill(cmd.Context(), a.task, s, shards(cmd, r, a.task, n))
			return printBackfill(cmd.OutOrStdout(), res, err)
		},
	}
	a.bind(cmd, "the transfer task to plan (required)")
	cmd.Flags().IntVar(&n, "shards", 4, fmt.Sprintf("buckets to cut the backlog into, 1 to %d (default: the task's backfill: shards:, else 4)", claims.MaxBuckets))
	cmd.Flags().BoolVar(&abandon, "abandon", false, "remove the plan under way (refused once a bucket committed rows)")
	cmd.MarkFlagsMutuallyExclusive("shards", "abandon")
	return cmd
}

func newWorkerCmd() *cobra.Command {
	var a claimArgs
	var opts runner.WorkOptions
	cmd := &cobra.Command{
		Use:   "worker --task NAME --claims URL -f weir.yaml [--wait]",
		Short: "Claim and copy the buckets of a backfill until none is left",
		Long: `Worker claims the free buckets of the task's backfill plan (weir backfill)
from the claim store one after another, renews its lease in the background,
and copies each bucket in chunks of --chunk-keys cursor keys (rows, for a
unique cursor; the empty ranges between keys cost nothing); every chunk
is committed with the bucket's progress in the destination's own commit, by
a compare-and-set, so a bucket resumes after its last commit whoever claims
it next, and a worker whose bucket was taken over (its lease expired) has
its commits refused and leaves the bucket. The worker that finds every
bucket done commits the plan's head as the task's offset: later runs of the
task continue from there. SIGTERM aborts the chunk under way (never
committed) and frees the bucket. It prints what it did as JSON. Without
--claims, the connection the task's backfill: claims: names is the store.
Exit codes: 0 the task is caught up (every bucket done, or no backfill under
way: "no_plan" in the JSON when this worker saw none), 1 failure, 2 bad input
(a task that cannot be cut, or one never planned whose table has rows to
copy: run weir backfill first), 75 every unfinished
bucket is held by another live worker (retry later, or run with --wait, which
waits for them and takes over a dead worker's bucket when its lease ends) or
the destination is locked by another run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Lease < time.Second {
				return routes.BadInput("--lease %s: a claim's lease is at least 1s (it is renewed every third of it)", opts.Lease)
			}
			if opts.Owner == "" {
				host, _ := os.Hostname()
				opts.Owner = fmt.Sprintf("%s:%d:%s", host, os.Getpid(), globals.runID)
			}
			r, s, err := a.open(cmd)
			if err != nil {
				return err
			}
			defer r.Close()
			defer s.Close()
			res, err := r.Work(cmd.Context(), a.task, s, opts)
			return printBackfill(cmd.OutOrStdout(), res, err)
		},
	}
	a.bind(cmd, "the transfer task whose backfill to work on (required)")
	f := cmd.Flags()
	f.StringVar(&opts.Owner, "owner", "", "this worker's name in the claim store (default host:pid:run id)")
	f.DurationVar(&opts.Lease, "lease", 30*time.Second, "a claim's lease; renewed every third of it")
	f.Int64Var(&opts.ChunkKeys, "chunk-keys", 100_000, "cursor keys a commit covers (read from the source, so gaps between keys cost nothing)")
	f.BoolVar(&opts.Wait, "wait", false, "wait for buckets other workers hold instead of exiting 75")
	return cmd
}

// claimArgs are the flags backfill and worker share: the dagfile, the
// task and the claim store.
type claimArgs struct{ file, task, store string }

func (a *claimArgs) bind(cmd *cobra.Command, taskUsage string) {
	f := cmd.Flags()
	f.StringVarP(&a.file, "file", "f", "weir.yaml", "the dagfile")
	f.StringVar(&a.task, "task", "", taskUsage)
	f.StringVar(&a.store, "claims", "", "the claim store: "+scheme.ClaimStoresHint+" (default: the connection the task's backfill: claims: names)")
}

// open checks the required flags and opens the dagfile's runner and the
// claim store.
func (a *claimArgs) open(cmd *cobra.Command) (*runner.Runner, claims.Store, error) {
	if err := required("--task", a.task); err != nil {
		return nil, nil, err
	}
	r, err := loadRunner(a.file)
	if err != nil {
		return nil, nil, err
	}
	store, err := a.claimStore(r)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	s, err := claims.Open(cmd.Context(), store)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, s, nil
}

// claimStore is --claims, else the URL of the connection the task's
// backfill: claims: names in the dagfile (how the generated fan-out finds
// it: the URL, a secret, comes from the environment like the task's other
// connections, never from the command line).
func (a *claimArgs) claimStore(r *runner.Runner) (string, error) {
	if a.store != "" {
		return a.store, nil
	}
	f := r.File()
	t := f.Task(a.task)
	if t == nil || t.Backfill == nil {
		return "", required("--claims", "")
	}
	if err := f.Resolve(t); err != nil {
		return "", &ExitCodeError{Code: ExitBadInput, Err: err}
	}
	return f.Connections[t.Backfill.Claims].URL(), nil
}

// shards is --shards when given, else the task's backfill: shards:.
func shards(cmd *cobra.Command, r *runner.Runner, task string, n int) int {
	if t := r.File().Task(task); t != nil && t.Backfill != nil && !cmd.Flags().Changed("shards") {
		return t.Backfill.Shards
	}
	return n
}

func printBackfill(w io.Writer, res runner.BackfillResult, err error) error {
	if jerr := json.NewEncoder(w).Encode(res); jerr != nil && err == nil {
		return jerr
	}
	return err
}
