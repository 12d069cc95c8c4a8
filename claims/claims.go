// Package claims is the claim store that lets several stateless worker
// processes share one task's backlog (docs/workers.md): the work between a
// task's committed offset and a head fixed at planning time is cut into N
// buckets, and a worker claims a free bucket with a lease, renews the lease
// while it works, and completes the bucket when its last commit is in the
// sink. A worker that dies stops renewing; once its lease expires any
// worker may claim the bucket and resume it from the sink's commit.
//
// The store only says who may work on a bucket. Exactly-once comes from
// the sink: each bucket's progress is committed in the sink's own commit,
// so a bucket taken over resumes where its last commit ended. Every claim
// carries a token that grows by one each time the bucket is claimed;
// Renew, Complete and Release succeed only with the current token, so a
// worker whose lease was taken over learns it (ErrLost) and stops.
//
// Backends: postgres:// (a _weir_claims table; the natural choice where a
// PostgreSQL is already there), etcd:// (keys under a prefix, each claim
// attached to an etcd lease, so a dead worker's claim expires by itself)
// and sqlite:///path (one machine). Each takes the lease's clock from one
// place (the PostgreSQL server's now(), the etcd leader's lease countdown,
// the machine's clock for SQLite), never from the workers' own clocks.
package claims

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/scheme"
)

// TableName is the claim store's table. weir creates it and never drops it.
const TableName = "_weir_claims"

var (
	// ErrNoneFree: every bucket of the task is done or held by a live lease.
	ErrNoneFree = errors.New("no free bucket")
	// ErrLost: the claim is no longer the caller's (its lease expired and
	// another worker claimed the bucket, or it was completed or released).
	ErrLost = errors.New("claim lost")
	// ErrNotPlanned: the task has no buckets; plan them first.
	ErrNotPlanned = errors.New("task not planned")
)

// Claim is one bucket of a task and who holds it.
type Claim struct {
	Task    string    `json:"task"`
	Bucket  int       `json:"bucket"`  // 0 … Buckets-1
	Buckets int       `json:"buckets"` // the task's plan
	Owner   string    `json:"owner,omitempty"`
	Token   int64     `json:"token"`            // grows by one per claim of the bucket
	Expires time.Time `json:"expires,omitzero"` // the lease; zero when free or done
	Done    bool      `json:"done"`
}

// Store is a claim store. Its methods are safe for concurrent use, from
// goroutines and from processes on any machine that reaches the backend.
type Store interface {
	// Plan cuts task into n buckets if it has none and returns the
	// task's bucket count. A task already planned with another count is
	// an error naming both (the buckets' bounds would not match the
	// progress committed for them).
	Plan(ctx context.Context, task string, n int) (int, error)
	// Claim takes the lowest free bucket of task for owner with a lease
	// of ttl: one never claimed, released, or whose lease expired, and
	// not done. ErrNoneFree when there is none; ErrNotPlanned when the
	// task has no buckets.
	Claim(ctx context.Context, task, owner string, ttl time.Duration) (Claim, error)
	// Renew extends c's lease to ttl from now. ErrLost if c is no longer
	// the current claim of its bucket.
	Renew(ctx context.Context, c Claim, ttl time.Duration) (Claim, error)
	// Complete marks c's bucket done (its work is committed in the sink).
	// ErrLost if c is no longer the current claim.
	Complete(ctx context.Context, c Claim) error
	// Release frees c's bucket for another worker before its lease ends
	// (a worker stopping cleanly). ErrLost if c is no longer current.
	Release(ctx context.Context, c Claim) error
	// List returns every bucket of task in bucket order.
	List(ctx context.Context, task string) ([]Claim, error)
	// Forget deletes task's buckets (a re-plan after the task caught up).
	Forget(ctx context.Context, task string) error
	Close() error
}

// Open opens the store a URL names: postgres://…[?schema=NAME],
// etcd[+https]://[user:password@]host:port[,host:port…][/prefix] or
// sqlite:///path/to/claims.db.
func Open(ctx context.Context, raw string) (Store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: claim store URL: %w", routes.ErrBadInput, err)
	}
	switch u.Scheme { // each of scheme.ClaimStores
	case "postgres", "postgresql":
		return openPostgres(ctx, u)
	case "sqlite":
		return openSQLite(ctx, u)
	case "etcd", "etcd+https":
		return openEtcd(ctx, u)
	}
	return nil, fmt.Errorf("%w: claim store %q: unknown scheme %q (use %s)", routes.ErrBadInput, redact(u), u.Scheme, scheme.ClaimStoresHint)
}

// redact is u with its secrets hidden, for messages (routes.Redact).
func redact(u *url.URL) string { return routes.Redact(u.String()) }

// MaxBuckets is the most buckets a plan may have. The stores keep a
// bucket number in a 32-bit INTEGER, but a plan's cost grows with its
// buckets (a claim row each, a state row and a take-over commit each in
// the sink, a row each in weir status --claims) while its use does not:
// the workers are the parallelism, and a hundred thousand buckets already
// feed more workers than any orchestrator runs on one table.
const MaxBuckets = 100_000

func checkPlan(task string, n int) error {
	if task == "" {
		return errors.New("claims: empty task name")
	}
	if n < 1 || n > MaxBuckets {
		return fmt.Errorf("claims: task %s: %d buckets, want 1 to %d", task, n, MaxBuckets)
	}
	return nil
}

func planMismatch(task string, have, want int) error {
	return fmt.Errorf("claims: task %s is planned with %d buckets, not %d: finish it with %d workers' buckets, or forget the plan once the task has caught up", task, have, want, have)
}
