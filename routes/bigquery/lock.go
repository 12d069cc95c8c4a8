package bigquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	bq "cloud.google.com/go/bigquery"

	"github.com/weirhq/weir/routes"
)

// A run's lock is a lease: the table _weir_lock_<table> in the destination
// table's dataset. tables.insert is the compare-and-swap (of two runs that
// create it, one gets 409 Already Exists); the table's description holds
// the holder (run id, since, heartbeat) and, while a replace swaps the table
// in, the swap it is making. A goroutine refreshes the heartbeat every
// Lease/6 with tables.patch under the etag of its last write, so a lease
// another run has taken over is never refreshed. A lease whose heartbeat is
// older than Lease is dead: the next run claims it by patching its
// description under the etag it read (one claimant wins, the other gets 412
// Precondition Failed). Only metadata calls: no DML, no bytes billed.
const (
	stagePrefix = "_weir_stage_"
	lockPrefix  = "_weir_lock_"
)

// holder is the lock table's description.
type holder struct {
	RunID string    `json:"run"`
	Since time.Time `json:"since"`
	Beat  time.Time `json:"beat"`
	Swap  *pending  `json:"swap,omitempty"` // a replace's swap in flight
}

// pending is a swap a run started: its job and the state its commit saves.
type pending struct {
	JobID string       `json:"job"`
	State routes.State `json:"state"`
}

func (h holder) age(now time.Time) time.Duration { return now.Sub(h.Beat) }

func parseHolder(md *bq.TableMetadata) (holder, error) {
	var h holder
	if err := json.Unmarshal([]byte(md.Description), &h); err != nil {
		return h, fmt.Errorf("lock table %s holds no weir lease (description %q): %w", md.Name, md.Description, err)
	}
	return h, nil
}

func lockRef(dest routes.TableRef) routes.TableRef {
	return routes.TableRef{Schema: dest.Schema, Name: lockPrefix + dest.Name}
}

// lease is a held lock.
type lease struct {
	e      *Endpoint
	dest   routes.TableRef
	table  routes.TableRef // the lock table
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	h    holder
	etag string
	lost error // set when a heartbeat finds the lease taken
}

// acquire takes dest's lease for runID. Taking over a dead run's lease
// first settles the swap that run may have left in flight.
func (e *Endpoint) acquire(ctx context.Context, dest routes.TableRef, runID string) (*lease, error) {
	now := time.Now().UTC()
	l := &lease{e: e, dest: dest, table: lockRef(dest), h: holder{RunID: runID, Since: now, Beat: now}}
	for range 3 {
		err := l.create(ctx)
		if err == nil {
			l.start(ctx)
			return l, nil
		}
		if httpCode(err) != http.StatusConflict {
			return nil, fmt.Errorf("lock %s: %w", dest, err)
		}
		took, err := l.takeOver(ctx)
		if err != nil {
			return nil, err
		}
		if took {
			l.start(ctx)
			return l, nil
		}
	}
	return nil, &routes.LockedError{Table: dest.String()}
}

func (l *lease) create(ctx context.Context) error {
	desc, _ := json.Marshal(l.h)
	md := &bq.TableMetadata{
		Description: string(desc),
		Schema:      bq.Schema{{Name: "run_id", Type: bq.StringFieldType}},
	}
	if err := l.e.table(l.table).Create(ctx, md); err != nil {
		return err
	}
	created, err := l.e.tableMeta(ctx, l.table)
	if err != nil || created == nil {
		l.e.dropTable(context.WithoutCancel(ctx), l.table)
		return fmt.Errorf("read the lock just created: %w", err)
	}
	l.etag = created.ETag // heartbeats write under it
	return nil
}

// takeOver refuses a live holder with a *routes.LockedError; a dead one's
// lease is claimed under the etag read (false: it vanished meanwhile, try
// creating it again).
func (l *lease) takeOver(ctx context.Context) (bool, error) {
	md, err := l.e.tableMeta(ctx, l.table)
	if err != nil || md == nil {
		return false, err
	}
	dead, err := parseHolder(md)
	if err != nil {
		return false, err
	}
	if dead.age(time.Now()) <= l.e.cfg.Lease {
		return false, &routes.LockedError{Table: l.dest.String(), RunID: dead.RunID, Since: dead.Since}
	}
	l.etag = md.ETag
	if err := l.write(ctx); err != nil {
		if httpCode(err) == http.StatusPreconditionFailed {
			return false, &routes.LockedError{Table: l.dest.String()} // another run claimed it first
		}
		return false, fmt.Errorf("take over the lock of %s from dead run %s: %w", l.dest, dead.RunID, err)
	}
	if dead.Swap != nil {
		if err := l.e.settle(ctx, l.dest, *dead.Swap); err != nil {
			l.release(context.WithoutCancel(ctx))
			return false, err
		}
	}
	return true, nil
}

// write stores the holder under the last etag and keeps the new one.
func (l *lease) write(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.h.Beat = time.Now().UTC()
	desc, _ := json.Marshal(l.h)
	md, err := l.e.table(l.table).Update(ctx, bq.TableMetadataToUpdate{Description: string(desc)}, l.etag)
	if err != nil {
		return err
	}
	l.etag = md.ETag
	return nil
}

// start runs the heartbeat until release.
func (l *lease) start(ctx context.Context) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.e.cfg.heartbeat())
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				l.beat(hctx)
			}
		}
	}()
}

func (l *lease) beat(ctx context.Context) {
	bctx, cancel := context.WithTimeout(ctx, l.e.cfg.Lease)
	defer cancel()
	if err := l.write(bctx); err != nil && ctx.Err() == nil {
		l.mu.Lock()
		if l.lost == nil {
			l.lost = err
		}
		l.mu.Unlock()
	}
}

// announce records the swap this run is about to make (a heartbeat that
// also fails if the lease was lost).
func (l *lease) announce(ctx context.Context, p pending) error {
	l.mu.Lock()
	l.h.Swap = &p
	l.mu.Unlock()
	if err := l.write(ctx); err != nil {
		return fmt.Errorf("lease on %s: %w", l.dest, err)
	}
	return nil
}

// verify checks the lease is still this run's and alive.
func (l *lease) verify(ctx context.Context) error {
	l.mu.Lock()
	lost := l.lost
	l.mu.Unlock()
	md, err := l.e.tableMeta(ctx, l.table)
	if err == nil && md == nil {
		err = errors.New("the lock table is gone")
	}
	if err == nil && lost == nil {
		h, perr := parseHolder(md)
		if perr == nil && h.RunID == l.h.RunID && h.age(time.Now()) <= l.e.cfg.Lease {
			return nil
		}
		err = fmt.Errorf("held by run %s, last heartbeat %s ago", h.RunID, h.age(time.Now()).Round(time.Second))
	}
	return fmt.Errorf("lease on %s lost: %w", l.dest, errors.Join(err, lost))
}

// stop ends the heartbeat; the lease dies after Lease. It is idempotent.
func (l *lease) stop() {
	if l == nil || l.cancel == nil {
		return
	}
	l.cancel()
	<-l.done
	l.cancel = nil
}

// release stops the heartbeat and drops the lock table if it is still
// this run's. It is idempotent.
func (l *lease) release(ctx context.Context) error {
	if l == nil || l.cancel == nil {
		return nil
	}
	l.stop()
	md, err := l.e.tableMeta(ctx, l.table)
	if err != nil || md == nil {
		return err
	}
	if h, err := parseHolder(md); err != nil || h.RunID != l.h.RunID {
		return nil // another run's now
	}
	return l.e.dropTable(ctx, l.table)
}

// lockHolder reads dest's lock: nil when no run holds it.
func (e *Endpoint) lockHolder(ctx context.Context, dest routes.TableRef) (*holder, error) {
	md, err := e.tableMeta(ctx, lockRef(dest))
	if err != nil || md == nil {
		return nil, err
	}
	h, err := parseHolder(md)
	return &h, err
}
