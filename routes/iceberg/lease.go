package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/weirhq/weir/routes"
)

// LockProperty is the table property holding a run's lease on a table in
// a REST catalog, where weir has no database of its own to lock in.
const LockProperty = "weir.lock"

// restLeaseTTL is longer than a SQL lease: each heartbeat is a commit.
const restLeaseTTL = 10 * time.Minute

// leaseSettle is how long a new property lease waits before reading the
// table back: a rival that read "unlocked" before our commit has committed
// its own lease by then, and one of the two sees the other's.
const leaseSettle = 500 * time.Millisecond

// propertyLock leases a table through LockProperty, each change committed
// alone and straight to the catalog (no client-side retry that could
// replay it over a rival's lease). See docs/routes-iceberg.md for its race
// window.
type propertyLock struct{ e *Endpoint }

type leaseValue struct {
	Run     string `json:"run"`
	Since   int64  `json:"since_ms"`
	Expires int64  `json:"expires_ms"`
}

func readLease(tbl *table.Table) (leaseValue, bool) {
	var v leaseValue
	raw, ok := tbl.Properties()[LockProperty]
	if !ok || json.Unmarshal([]byte(raw), &v) != nil || v.Expires < time.Now().UnixMilli() {
		return leaseValue{}, false
	}
	return v, true
}

func (l *propertyLock) acquire(ctx context.Context, t routes.TableRef, runID string) (lease, error) {
	tbl, err := l.e.loadTable(ctx, t)
	if err != nil {
		return nil, err
	}
	if v, held := readLease(tbl); held && v.Run != runID {
		return nil, &routes.LockedError{Table: t.String(), RunID: v.Run, Since: time.UnixMilli(v.Since)}
	}
	pl := &propertyLease{l: l, table: t, runID: runID, since: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if err := pl.write(ctx, tbl); err != nil {
		var locked *routes.LockedError
		if lerr := pl.check(ctx); errors.Is(err, table.ErrCommitFailed) && errors.As(lerr, &locked) {
			return nil, lerr // a rival's lease landed first
		}
		return nil, err
	}
	time.Sleep(leaseSettle)
	if err := pl.check(ctx); err != nil {
		return nil, err
	}
	go pl.heartbeat()
	return pl, nil
}

type propertyLease struct {
	l      *propertyLock
	table  routes.TableRef
	runID  string
	since  time.Time
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// write commits the lease property alone, asserting the table is the one
// we loaded.
func (p *propertyLease) write(ctx context.Context, tbl *table.Table) error {
	v, _ := json.Marshal(leaseValue{Run: p.runID, Since: p.since.UnixMilli(), Expires: time.Now().Add(restLeaseTTL).UnixMilli()})
	upd := table.NewSetPropertiesUpdate(iceberg.Properties{LockProperty: string(v)})
	reqs := []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())}
	if _, _, err := p.l.e.cat.CommitTable(ctx, tbl.Identifier(), reqs, []table.Update{upd}); err != nil {
		return fmt.Errorf("lease %s: %w", p.table, err)
	}
	return nil
}

// check reads the table back: the lease must still be ours.
func (p *propertyLease) check(ctx context.Context) error {
	tbl, err := p.l.e.loadTable(ctx, p.table)
	if err != nil {
		return err
	}
	v, held := readLease(tbl)
	if !held {
		return fmt.Errorf("lease %s: %w", p.table, errLeaseLost)
	}
	if v.Run != p.runID {
		return &routes.LockedError{Table: p.table.String(), RunID: v.Run, Since: time.UnixMilli(v.Since)}
	}
	return nil
}

func (p *propertyLease) heartbeat() {
	defer close(p.done)
	tick := time.NewTicker(restLeaseTTL / 4)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if tbl, err := p.l.e.loadTable(ctx, p.table); err == nil {
				if v, held := readLease(tbl); held && v.Run == p.runID {
					p.write(ctx, tbl)
				}
			}
			cancel()
		}
	}
}

func (p *propertyLease) release(ctx context.Context) error {
	var err error
	p.closed.Do(func() {
		close(p.stop)
		<-p.done
		tbl, lerr := p.l.e.loadTable(ctx, p.table)
		if errors.Is(lerr, routes.ErrNotFound) {
			return // the run dropped the table it created: no lease left
		}
		if lerr != nil {
			err = lerr
			return
		}
		if v, held := readLease(tbl); !held || v.Run != p.runID {
			return
		}
		reqs := []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())}
		_, _, err = p.l.e.cat.CommitTable(ctx, tbl.Identifier(), reqs, []table.Update{table.NewRemovePropertiesUpdate([]string{LockProperty})})
	})
	if err != nil {
		return fmt.Errorf("release lease on %s: %w", p.table, err)
	}
	return nil
}
