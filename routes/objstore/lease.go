package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/weirhq/weir/routes"
)

// leaseDoc is the content of _weir_lock.json.
type leaseDoc struct {
	RunID   string    `json:"run_id"`
	Table   string    `json:"table"`
	Since   time.Time `json:"since"`
	Expires time.Time `json:"expires"`
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
}

// lease is a run's hold on a table: an object created only if absent,
// refreshed (compare-and-swap on its version) every ttl/3 while the stage
// lives, deleted at the end. A lease that has expired is taken over with a
// compare-and-swap, so two runs never both win it.
type lease struct {
	s     store
	key   string
	ttl   time.Duration
	table string

	mu      sync.Mutex
	doc     leaseDoc
	version string
	lost    error
	stop    chan struct{}
	done    chan struct{}
}

// leaseAttempts bounds the create/read/take-over loop when other runs race.
const leaseAttempts = 5

// opTimeout bounds one small request of the lease or manifest.
const opTimeout = 30 * time.Second

// acquireLease takes the lease of the table in dir or returns a
// *routes.LockedError naming the live run that holds it.
func acquireLease(ctx context.Context, s store, dir, table, runID string, ttl time.Duration) (*lease, error) {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	l := &lease{s: s, key: lockKey(dir), ttl: ttl, table: table,
		doc: leaseDoc{RunID: runID, Table: table, Since: now, Expires: now.Add(ttl), Host: host, PID: os.Getpid()}}
	for range leaseAttempts {
		taken, err := l.try(ctx)
		if err != nil {
			return nil, err
		}
		if taken {
			l.start()
			return l, nil
		}
	}
	return nil, &routes.LockedError{Table: table}
}

// try makes one attempt: create, or take over an expired lease.
func (l *lease) try(ctx context.Context) (bool, error) {
	v, err := l.s.Put(ctx, l.key, l.encode(), cond{absent: true})
	if err == nil {
		l.version = v
		return true, nil
	}
	if !errors.Is(err, errPrecondition) {
		return false, fmt.Errorf("take lock %s: %w", l.s.Describe(l.key), err)
	}
	b, ver, err := l.s.Get(ctx, l.key)
	if errors.Is(err, errNotExist) {
		return false, nil // released meanwhile: try again
	}
	if err != nil {
		return false, fmt.Errorf("read lock %s: %w", l.s.Describe(l.key), err)
	}
	var held leaseDoc
	if json.Unmarshal(b, &held) == nil && time.Now().Before(held.Expires) {
		return false, &routes.LockedError{Table: l.table, RunID: held.RunID, Since: held.Since}
	}
	v, err = l.s.Put(ctx, l.key, l.encode(), cond{version: ver}) // expired (or unreadable): take it over
	if errors.Is(err, errPrecondition) {
		return false, nil
	}
	l.version = v
	return err == nil, err
}

func (l *lease) encode() []byte {
	b, _ := json.MarshalIndent(l.doc, "", "  ")
	return b
}

func (l *lease) start() {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.refreshLoop()
}

func (l *lease) refreshLoop() {
	defer close(l.done)
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if l.refresh() != nil {
				return
			}
		}
	}
}

// refresh extends the lease; a lease another run took over, or one that
// expired while the store was unreachable, is lost for good.
func (l *lease) refresh() error {
	ctx, cancel := context.WithTimeout(context.Background(), min(opTimeout, l.ttl/3))
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.doc
	next.Expires = time.Now().UTC().Add(l.ttl)
	b, _ := json.MarshalIndent(next, "", "  ")
	v, err := l.s.Put(ctx, l.key, b, cond{version: l.version})
	switch {
	case err == nil:
		l.doc, l.version = next, v
		return nil
	case errors.Is(err, errPrecondition):
		l.lost = fmt.Errorf("lost the lock on %s: another run took it over", l.table)
	case time.Now().After(l.doc.Expires):
		l.lost = fmt.Errorf("lost the lock on %s: it expired while it could not be refreshed: %w", l.table, err)
	default:
		return nil // transient: retry at the next tick
	}
	return l.lost
}

// check returns why the lease is no longer held, or nil.
func (l *lease) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil && time.Now().After(l.doc.Expires) {
		l.lost = fmt.Errorf("lost the lock on %s: it expired at %s", l.table, l.doc.Expires.Format(time.RFC3339))
	}
	return l.lost
}

// release stops the refresh and deletes the lock if this run still holds it.
func (l *lease) release(ctx context.Context) error {
	if l.stop != nil {
		close(l.stop)
		<-l.done
		l.stop = nil
	}
	if l.check() != nil {
		return nil // someone else holds it now: leave theirs alone
	}
	_, ver, err := l.s.Get(ctx, l.key)
	if errors.Is(err, errNotExist) || (err == nil && ver != l.version) {
		return nil
	}
	if err == nil {
		err = l.s.Delete(ctx, l.key)
	}
	return wrapf(err, "release lock %s", l.s.Describe(l.key))
}
