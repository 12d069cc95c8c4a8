package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/weirhq/weir/claims"
	"github.com/weirhq/weir/dagfile"
	"github.com/weirhq/weir/incremental"
	"github.com/weirhq/weir/routes"
)

// Buckets of a transfer task (docs/workers.md): Backfill fixes the window
// between the table's committed offset and the cursor's head, cuts it into
// N buckets and commits the plan into the destination as the table's
// state; Work claims buckets from a claim store and copies each in chunks,
// every chunk committed with the bucket's progress (its own state key,
// incremental.BucketKey) by a compare-and-set in the sink's commit; the
// worker that finds every bucket done commits the plan's head as the
// table's offset.

// ErrBucketsHeld: every unfinished bucket of the plan is held by another
// live worker (a routes.ErrLocked: exit 75, retry later or wait).
var ErrBucketsHeld error = bucketsHeld{}

type bucketsHeld struct{}

func (bucketsHeld) Error() string        { return "every unfinished bucket is held by another worker" }
func (bucketsHeld) Is(target error) bool { return target == routes.ErrLocked }

// errLost: this worker's claim of a bucket was taken over (its lease
// expired): it stops working on the bucket, having committed nothing the
// new owner does not see.
var errLost = errors.New("bucket taken over by another worker")

// WorkOptions tune Work. Zero values are the defaults.
type WorkOptions struct {
	Owner     string        // this worker's name in the claim store (default: a new run id)
	Lease     time.Duration // a claim's lease, renewed every third of it (default 30 s)
	ChunkKeys int64         // cursor values per commit (default 100000)
	Wait      bool          // wait for buckets held by others to be done or freed instead of ErrBucketsHeld
}

func (o WorkOptions) fill() WorkOptions {
	if o.Owner == "" {
		o.Owner = routes.NewRunID()
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.ChunkKeys <= 0 {
		o.ChunkKeys = 100_000
	}
	return o
}

// BackfillResult says what a plan or a worker did.
type BackfillResult struct {
	Task      string           `json:"task"`
	Plan      incremental.Plan `json:"plan,omitzero"`
	Planned   bool             `json:"planned,omitempty"`   // Backfill: this call committed the plan
	Nothing   bool             `json:"nothing,omitempty"`   // Backfill: the window was empty; no plan
	CaughtUp  bool             `json:"caught_up,omitempty"` // Work: no bucket is left; the table's offset is Offset
	Offset    string           `json:"offset,omitempty"`
	Buckets   []int            `json:"buckets,omitempty"`   // Work: the buckets this worker finished
	Rows      int64            `json:"rows"`                // Work: rows this worker committed
	Commits   int64            `json:"commits"`             // Work: the commits this worker made (take-overs and chunks)
	NoPlan    bool             `json:"no_plan,omitempty"`   // Work: caught up with no plan under way (none was planned, or another worker finished it)
	Abandoned bool             `json:"abandoned,omitempty"` // Abandon: the plan was removed
}

// splitTask is a transfer task whose window can be cut into buckets.
type splitTask struct {
	t      *dagfile.Task
	src    routes.Source
	dst    routes.Destination
	spec   routes.CopySpec
	info   *routes.TableInfo
	cursor string
}

// claimsTask is the claim store's name of a plan's buckets.
func claimsTask(task string, p incremental.Plan) string { return task + "@" + p.ID }

// split resolves task and refuses, as bad input naming the task, one that
// cannot be cut into buckets.
func (r *Runner) split(ctx context.Context, name string) (*splitTask, error) {
	t, err := r.task(name)
	if err != nil {
		return nil, err
	}
	if t.Kind != dagfile.KindTransfer {
		return nil, routes.BadInput("task %s is a %s: only a transfer task's table is cut into buckets (a model's buckets are not built, docs/workers.md)", name, t.Kind)
	}
	x := t.Transfer
	mode, err := routes.ParseMode(x.Mode)
	if err != nil {
		return nil, err
	}
	if mode != routes.ModeAppend && mode != routes.ModeMerge {
		return nil, routes.BadInput("task %s: mode %s is not cut into buckets; append and merge are (a replace rewrites the table whole, log_based follows a log)", name, mode)
	}
	if len(t.Sources()) != 1 {
		return nil, routes.BadInput("task %s copies %d tables; a backfill cuts one table: give each table its own task", name, len(t.Sources()))
	}
	src, err := r.source(ctx, x.From)
	if err != nil {
		return nil, err
	}
	dst, err := r.destination(ctx, x.To)
	if err != nil {
		return nil, err
	}
	if _, ok := routes.As[routes.SharedDestination](dst); !ok {
		return nil, fmt.Errorf("%w: task %s: connection %s cannot take several workers' commits (a backfill writes into PostgreSQL or an Iceberg SQL catalog only, docs/workers.md)", routes.ErrUnsupported, name, x.To)
	}
	spec := r.copySpec(t, mode, t.Sources()[0], t.Sinks()[0], "")
	info, err := src.Probe(ctx, spec.Table)
	if err != nil {
		return nil, err
	}
	cursor, err := incremental.CursorColumn(info, x.Cursor)
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", name, err)
	}
	if c, _ := info.Column(cursor); !isInteger(c.Type) {
		return nil, routes.BadInput("task %s: cursor %s of %s is %s: buckets cut an integer cursor; use an integer column as the cursor, or run the task with weir once", name, cursor, info.Ref, c.Type)
	}
	if len(spec.Key) == 0 {
		spec.Key = info.PrimaryKey
	}
	if mode == routes.ModeMerge && (len(spec.Key) != 1 || spec.Key[0] != cursor) {
		return nil, routes.BadInput("task %s: its merge key (%s) is not its cursor %s: buckets of the cursor would upsert the versions of one key in no defined order; merge on the cursor, or run the task with weir once", name, strings.Join(spec.Key, ", "), cursor)
	}
	if spec.DestTable, err = routes.DestinationOf(info, dst, spec); err != nil {
		return nil, err
	}
	if err := routes.CheckDestTable(spec.DestTable, routes.IdentLimitOf(dst)); err != nil {
		return nil, fmt.Errorf("task %s: %w", name, err)
	}
	return &splitTask{t: t, src: src, dst: dst, spec: spec, info: info, cursor: cursor}, nil
}

func isInteger(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return true
	}
	return false
}

// state loads the saved state of key in the task's destination table.
func (s *splitTask) state(ctx context.Context, key string) (*routes.State, error) {
	sr, ok := routes.As[routes.StateReader](s.dst)
	if !ok {
		return nil, fmt.Errorf("%w: the destination keeps no state", routes.ErrUnsupported)
	}
	st, found, err := sr.LoadState(ctx, s.spec.DestTable, key)
	if err != nil || !found {
		return nil, err
	}
	return &st, nil
}

// plan reads the plan under way in the table's state, if any.
func (s *splitTask) plan(ctx context.Context) (incremental.Plan, *routes.State, bool, error) {
	st, err := s.state(ctx, s.info.SourceID)
	if err != nil || st == nil {
		return incremental.Plan{}, st, false, err
	}
	p, ok, err := incremental.DecodePlan(st.Position)
	return p, st, ok, err
}

// commitHow is how commitState takes the table.
type commitHow int

const (
	planCommit   commitHow = iota // exclusive lock; a table not there yet is created empty (the plan)
	bucketCommit                  // a worker's shared stage; the table must be there
	finishCommit                  // exclusive lock; the table must be there: the workers' rows are in it
)

// commitState commits state, with no rows, if the saved state of its key
// is prev (a fenced commit): through a shared stage for a worker, else
// under the table's exclusive lock (which also drops the staging tables
// killed workers left).
func (s *splitTask) commitState(ctx context.Context, state routes.State, prev *routes.State, how commitHow, hold func(context.Context) error) error {
	opts := routes.WriteOptions{Table: s.spec.DestTable, Mode: s.spec.Mode, RunID: routes.NewRunID(), Key: s.spec.Key, Allocator: s.spec.Allocator,
		Existing: how != planCommit}
	var stage routes.Stage
	var err error
	if sd, _ := routes.As[routes.SharedDestination](s.dst); how == bucketCommit {
		stage, err = sd.PrepareShared(ctx, s.info, opts)
	} else {
		stage, err = s.dst.Prepare(ctx, s.info, opts)
	}
	if err != nil {
		return err
	}
	fs, ok := stage.(routes.FencedStage)
	if !ok {
		routes.Abort(ctx, stage)
		return fmt.Errorf("%w: the destination cannot fence a commit", routes.ErrUnsupported)
	}
	if hold != nil {
		if err := hold(ctx); err != nil {
			routes.Abort(ctx, stage)
			return err
		}
	}
	if err := fs.CommitIf(ctx, state, prev); err != nil {
		routes.Abort(ctx, stage)
		return err
	}
	return nil
}

// holds returns the check a bucket's commit makes while its stage holds
// the shared lock: plan p is still the table's (not abandoned, not
// finished). An abandon or a finish commits under the exclusive lock, so
// no bucket commit lands after it.
func (s *splitTask) holds(p incremental.Plan) func(context.Context) error {
	return func(ctx context.Context) error {
		now, _, ok, err := s.plan(ctx)
		if err != nil {
			return err
		}
		if !ok || now.ID != p.ID {
			return fmt.Errorf("%w: task %s: plan %s is no longer the table's (abandoned or finished)", routes.ErrFenced, s.t.Name, p.ID)
		}
		return nil
	}
}

// Backfill plans task's window into n buckets: under the destination's
// lock it fixes the window from the table's committed offset (or, with
// none, as an append would start) to the cursor's head now, and commits
// the plan as the table's state (creating the table if needed), then
// plans n buckets in the claim store. A plan already under way is kept
// (the same n) or refused (another n). An empty window plans nothing.
func (r *Runner) Backfill(ctx context.Context, name string, store claims.Store, n int) (BackfillResult, error) {
	res := BackfillResult{Task: name}
	if n < 1 || n > claims.MaxBuckets {
		return res, routes.BadInput("task %s: --shards %d: a plan has 1 to %d buckets (each costs a claim row, a state row and a take-over commit; more buckets than workers only add those, docs/workers.md); plan fewer", name, n, claims.MaxBuckets)
	}
	s, err := r.split(ctx, name)
	if err != nil {
		return res, err
	}
	p, prev, ok, err := s.plan(ctx)
	if err != nil {
		return res, err
	}
	if !ok {
		win, err := incremental.Watermark(s.src, s.dst, s.cursor)(ctx, s.info, s.spec.DestTable)
		if err != nil || win.Empty {
			res.Nothing, res.Offset = win.Empty, win.After
			return res, err
		}
		lo, err := s.lowBound(ctx, win.After)
		if err != nil {
			return res, err
		}
		p = incremental.Plan{ID: routes.NewRunID(), After: win.After, Lo: lo, Head: win.Until, Buckets: n}
		state := routes.State{SourceID: s.info.SourceID, Cursor: s.cursor, Watermark: win.After, Position: p.Encode(), RunID: p.ID}
		if err := s.commitState(ctx, state, prev, planCommit, nil); err != nil {
			if errors.Is(err, routes.ErrFenced) {
				err = fmt.Errorf("%w: task %s: another run committed while the backfill was planned; plan again", routes.ErrLocked, name)
			}
			return res, fmt.Errorf("plan task %s: %w", name, err)
		}
		res.Planned = true
	}
	res.Plan = p
	if p.Buckets != n {
		return res, routes.BadInput("task %s: a backfill of %d buckets (plan %s) is under way, not %d: let its workers finish it", name, p.Buckets, p.ID, n)
	}
	if _, err := store.Plan(ctx, claimsTask(name, p), n); err != nil {
		return res, err
	}
	return res, nil
}

// lowBound is where the cuts start: the committed offset, or one below the
// cursor's minimum (asked of a routes.KeysetSource) when there is none.
func (s *splitTask) lowBound(ctx context.Context, after string) (string, error) {
	if after != "" {
		return after, nil
	}
	ks, ok := routes.As[routes.KeysetSource](s.src)
	if !ok {
		return "", fmt.Errorf("%w: task %s: the source cannot say its cursor's minimum; run the task once first", routes.ErrUnsupported, s.t.Name)
	}
	_, first, ok, err := ks.KeysetPage(ctx, s.info, []string{s.cursor}, nil, 1)
	if err != nil || !ok {
		return "", fmt.Errorf("minimum of %s.%s: %w", s.info.Ref, s.cursor, err)
	}
	min, ok := new(big.Int).SetString(first[0], 10)
	if !ok {
		return "", fmt.Errorf("minimum of %s.%s: %q is not an integer", s.info.Ref, s.cursor, first[0])
	}
	return min.Sub(min, big.NewInt(1)).String(), nil
}

// Work claims the plan's free buckets one after another and copies each,
// until none is free. When every bucket is done it commits the plan's head
// as the table's offset and returns CaughtUp; when the rest are held by
// other live workers it returns ErrBucketsHeld (or, with Wait, waits for
// them: a dead worker's bucket is taken over when its lease ends). On a
// cancel the chunk under way is aborted and the claim released.
func (r *Runner) Work(ctx context.Context, name string, store claims.Store, opts WorkOptions) (BackfillResult, error) {
	opts = opts.fill()
	res := BackfillResult{Task: name}
	s, err := r.split(ctx, name)
	if err != nil {
		return res, err
	}
	for {
		p, main, ok, err := s.plan(ctx)
		if err != nil {
			return res, err
		}
		if !ok {
			return s.noPlan(ctx, res, main)
		}
		res.Plan = p
		ct := claimsTask(name, p)
		c, err := store.Claim(ctx, ct, opts.Owner, opts.Lease)
		switch {
		case errors.Is(err, claims.ErrNotPlanned):
			// planned in the sink, not (or no longer) in the store: a
			// plan another worker finished and forgot (the sink says so
			// now: the next loop returns caught up), or a planner that
			// died between its two steps (plan the store).
			if _, _, still, err := s.plan(ctx); err != nil || !still {
				if err != nil {
					return res, err
				}
				continue
			}
			if _, err := store.Plan(ctx, ct, p.Buckets); err != nil {
				return res, err
			}
			continue
		case errors.Is(err, claims.ErrNoneFree):
			open, err := r.openBuckets(ctx, store, ct)
			if err != nil {
				return res, err
			}
			if open == nil {
				err := s.finish(ctx, p, main)
				if err == nil {
					store.Forget(ctx, ct)
				}
				if err != nil && !errors.Is(err, routes.ErrFenced) && !errors.Is(err, routes.ErrLocked) {
					return res, err
				}
				if err != nil { // another worker is finishing it, or did
					if err := sleep(ctx, opts.Lease/10); err != nil {
						return res, err
					}
				}
				continue
			}
			if !opts.Wait {
				return res, fmt.Errorf("task %s: %w: %s", name, ErrBucketsHeld, strings.Join(open, "; "))
			}
			if err := sleep(ctx, min(opts.Lease/4, time.Second)); err != nil {
				return res, err
			}
			continue
		case err != nil:
			return res, err
		}
		err = s.bucket(ctx, store, c, p, opts, &res)
		switch {
		case errors.Is(err, errLost):
			r.warnf("task %s: %v", name, err)
		case err != nil:
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), routes.AbortTimeout)
			store.Release(rctx, c) // another worker may go on at once
			cancel()
			return res, fmt.Errorf("task %s bucket %d: %w", name, c.Bucket, err)
		default:
			res.Buckets = append(res.Buckets, c.Bucket)
		}
	}
}

// openBuckets describes the plan's buckets that are not done (nil: all done).
func (r *Runner) openBuckets(ctx context.Context, store claims.Store, ct string) ([]string, error) {
	l, err := store.List(ctx, ct)
	if err != nil {
		return nil, err
	}
	var open []string
	for _, b := range l {
		if !b.Done {
			open = append(open, fmt.Sprintf("bucket %d held by %s until %s", b.Bucket, b.Owner, b.Expires.UTC().Format(time.RFC3339)))
		}
	}
	return open, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(max(d, 10*time.Millisecond))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// bucket works on claim c: it renews the lease in the background, takes
// the bucket over in the sink (commits its own claim token as the
// bucket's, so the commits of the worker it took over from are refused),
// then copies the rest of the bucket's window chunk by chunk, each chunk
// committed with a compare-and-set on the bucket's progress.
func (s *splitTask) bucket(ctx context.Context, store claims.Store, c claims.Claim, p incremental.Plan, opts WorkOptions, res *BackfillResult) error {
	bctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go renew(bctx, cancel, store, c, opts.Lease)
	prog, prev, err := s.takeOver(bctx, c, p)
	if err != nil {
		return s.cause(bctx, err)
	}
	res.Commits++
	_, until := p.Bucket(c.Bucket)
	if err := s.copyBucket(bctx, c, p, prog, prev, until, opts.ChunkKeys, res); err != nil {
		return s.cause(bctx, err)
	}
	cancel(nil)
	if err := store.Complete(ctx, c); err != nil && !errors.Is(err, claims.ErrLost) {
		return err // (lost: done in the sink; whoever claims it next finds it at its end)
	}
	return nil
}

// takeOver makes claim c the bucket's holder in the sink: it commits the
// bucket's progress unchanged with c's token (a compare-and-set on the
// progress it read; one the previous holder moved meanwhile is read
// again). A sink token as high as c's means c itself was taken over.
func (s *splitTask) takeOver(ctx context.Context, c claims.Claim, p incremental.Plan) (string, *routes.State, error) {
	after, _ := p.Bucket(c.Bucket)
	key := incremental.BucketKey(s.info.SourceID, c.Bucket)
	for {
		st, err := s.state(ctx, key)
		if err != nil {
			return "", nil, err
		}
		prog := after
		if st != nil {
			token, ok := p.BucketToken(st.Position)
			if ok && token >= c.Token {
				return "", nil, lostErr(c, fmt.Errorf("the sink holds token %d", token))
			}
			if ok {
				prog = st.Watermark
			}
		}
		next := routes.State{SourceID: key, Cursor: s.cursor, Watermark: prog, Position: p.BucketPosition(c.Token), RunID: c.Owner}
		err = s.commitState(ctx, next, st, bucketCommit, s.holds(p))
		if err == nil {
			return prog, &next, nil
		}
		if !errors.Is(err, routes.ErrFenced) {
			return "", nil, err
		}
	}
}

// copyBucket copies the bucket's window from prog (the progress whose
// saved state is prev) to until (the bucket's end), a chunk of chunkKeys
// cursor keys a commit, each fenced on the progress before it. A refused
// commit means c was taken over: errLost.
func (s *splitTask) copyBucket(ctx context.Context, c claims.Claim, p incremental.Plan, prog string, prev *routes.State, until string, chunkKeys int64, res *BackfillResult) error {
	key := incremental.BucketKey(s.info.SourceID, c.Bucket)
	for prog != until {
		hi, err := s.chunkEnd(ctx, prog, p.Lo, until, chunkKeys)
		if err != nil {
			return err
		}
		spec := s.spec
		spec.RunID = routes.NewRunID()
		spec.Budget.Parallel = 1 // workers are the parallelism
		spec.Window = fixedWindow(s.cursor, prog, hi)
		spec.Position = p.BucketPosition(c.Token)
		spec.Fence = &routes.Fence{SourceID: key, Prev: prev, Hold: s.holds(p)}
		cr, err := routes.Copy(ctx, s.src, s.dst, spec)
		if errors.Is(err, routes.ErrLocked) && !errors.Is(err, routes.ErrFenced) && ctx.Err() == nil {
			// a run holds the table whole for a moment (the plan's or the
			// finishing commit): try the chunk again
			if err := sleep(ctx, 200*time.Millisecond); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, routes.ErrFenced) {
			return lostErr(c, err)
		}
		if err != nil {
			return err
		}
		res.Rows += cr.Rows
		res.Commits++
		prog, prev = hi, &routes.State{Watermark: hi, Position: spec.Position}
	}
	return nil
}

func lostErr(c claims.Claim, err error) error {
	return fmt.Errorf("%w: bucket %d (token %d, %s): %w", errLost, c.Bucket, c.Token, c.Owner, err)
}

// cause is the reason bctx ended (the lease lost) when it did, else err.
func (s *splitTask) cause(bctx context.Context, err error) error {
	if c := context.Cause(bctx); c != nil && errors.Is(c, errLost) {
		return c
	}
	return err
}

// renew extends c's lease every third of ttl until ctx ends; a renew that
// fails cancels the bucket's work (its chunk is aborted, not committed).
func renew(ctx context.Context, cancel context.CancelCauseFunc, store claims.Store, c claims.Claim, ttl time.Duration) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		if c, err = store.Renew(ctx, c, ttl); err != nil {
			if ctx.Err() == nil {
				cancel(fmt.Errorf("%w: bucket %d: renew: %w", errLost, c.Bucket, err))
			}
			return
		}
	}
}

// chunkEnd is the end of the chunk after prog, at most until: the
// chunk-th cursor key past prog, read from a routes.KeysetSource (so the
// empty ranges between keys cost nothing, and the progress committed is a
// key read or the bucket's end), else prog + chunk cursor values.
func (s *splitTask) chunkEnd(ctx context.Context, prog, lo, until string, chunk int64) (string, error) {
	ks, ok := routes.As[routes.KeysetSource](s.src)
	if !ok {
		return valueChunkEnd(prog, lo, until, chunk), nil
	}
	var after []string
	if prog != "" {
		after = []string{prog}
	}
	_, last, ok, err := ks.KeysetPage(ctx, s.info, []string{s.cursor}, after, int(min(chunk, math.MaxInt32)))
	if err != nil {
		return "", fmt.Errorf("chunk of %s after %s: %w", s.info.Ref, incremental.OrStart(prog), err)
	}
	if !ok {
		return until, nil
	}
	k, kok := new(big.Int).SetString(last[0], 10)
	u, _ := new(big.Int).SetString(until, 10)
	if !kok {
		return "", fmt.Errorf("chunk of %s: key %q is not an integer", s.info.Ref, last[0])
	}
	if k.Cmp(u) >= 0 {
		return until, nil
	}
	return last[0], nil
}

// valueChunkEnd is prog + chunk, at most until ("" prog starts at lo).
func valueChunkEnd(prog, lo, until string, chunk int64) string {
	if prog == "" {
		prog = lo
	}
	a, _ := new(big.Int).SetString(prog, 10)
	u, _ := new(big.Int).SetString(until, 10)
	a.Add(a, big.NewInt(chunk))
	if a.Cmp(u) >= 0 {
		return until
	}
	return a.String()
}

func fixedWindow(cursor, after, until string) routes.WindowFunc {
	return func(context.Context, *routes.TableInfo, routes.TableRef) (routes.Window, error) {
		return routes.Window{Cursor: cursor, After: after, Until: until}, nil
	}
}

// finish commits the plan's head as the table's offset once every
// bucket's progress in the sink is at its end, under the table's
// exclusive lock, fenced on the plan's state.
func (s *splitTask) finish(ctx context.Context, p incremental.Plan, main *routes.State) error {
	for i := range p.Buckets {
		_, until := p.Bucket(i)
		st, err := s.state(ctx, incremental.BucketKey(s.info.SourceID, i))
		if err != nil {
			return err
		}
		if prog := p.Progress(i, st); prog != until {
			return fmt.Errorf("task %s: the claim store says bucket %d is done, but its progress in the sink is %s, not %s", s.t.Name, i, prog, until)
		}
	}
	state := routes.State{SourceID: s.info.SourceID, Cursor: s.cursor, Watermark: p.Head, RunID: p.ID}
	err := s.commitState(ctx, state, main, finishCommit, nil)
	if errors.Is(err, routes.ErrNotFound) {
		return fmt.Errorf("task %s: %w: it was dropped while its backfill (plan %s) ran, and the rows the workers committed went with it; "+
			"the plan's offset is not committed. Delete the task's rows from the state table beside it (%s, source %s and %s#bucket/…) and run the task again",
			s.t.Name, err, p.ID, routes.StateTableName, s.info.SourceID, s.info.SourceID)
	}
	return err
}

// BackfillStatus is a plan under way and its buckets.
type BackfillStatus struct {
	Plan    incremental.Plan `json:"plan"`
	Buckets []BucketStatus   `json:"buckets"`
}

// BucketStatus is one bucket: its window, its progress committed in the
// sink (and the claim token that committed it), and its claim.
type BucketStatus struct {
	Bucket      int       `json:"bucket"`
	After       string    `json:"after"`
	Until       string    `json:"until"`
	Progress    string    `json:"progress"`
	SinkToken   int64     `json:"sink_token"`
	Owner       string    `json:"owner,omitempty"`
	Token       int64     `json:"token"`
	Expires     time.Time `json:"expires,omitzero"`
	Done        bool      `json:"done"`
	ClaimsError string    `json:"claims_error,omitempty"`
}

// Backfill reports task's backfill plan under way and its buckets; nil
// when none is under way.
func (r *Runner) BackfillStatus(ctx context.Context, name string, store claims.Store) (*BackfillStatus, error) {
	s, err := r.split(ctx, name)
	if err != nil {
		return nil, err
	}
	p, _, ok, err := s.plan(ctx)
	if err != nil || !ok {
		return nil, err
	}
	l, err := store.List(ctx, claimsTask(name, p))
	if err != nil {
		return nil, err
	}
	bs := &BackfillStatus{Plan: p}
	for i := range p.Buckets {
		b := BucketStatus{Bucket: i}
		b.After, b.Until = p.Bucket(i)
		b.Progress = b.After
		st, err := s.state(ctx, incremental.BucketKey(s.info.SourceID, i))
		if err != nil {
			return nil, err
		}
		if st != nil {
			if tok, ok := p.BucketToken(st.Position); ok {
				b.Progress, b.SinkToken = st.Watermark, tok
			}
		}
		if i < len(l) {
			b.Owner, b.Token, b.Expires, b.Done = l[i].Owner, l[i].Token, l[i].Expires, l[i].Done
		} else {
			b.ClaimsError = "not planned in the claim store"
		}
		bs.Buckets = append(bs.Buckets, b)
	}
	return bs, nil
}
