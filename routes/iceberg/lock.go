package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/weirhq/weir/routes"
)

// LockTable is the table of run leases weir keeps in a SQL catalog's
// database, beside iceberg_tables: one row per locked Iceberg table.
const LockTable = "weir_locks"

// DefaultLeaseTTL is how long a lease outlives its last heartbeat: the time
// a table stays locked after its run was killed.
const DefaultLeaseTTL = time.Minute

// locker hands out one lease per destination table.
type locker interface {
	acquire(ctx context.Context, t routes.TableRef, runID string) (lease, error)
}

// lease is a run's hold on a table, kept alive by a heartbeat until release.
type lease interface {
	// check fails when the lease was lost (expired and taken by another run).
	check(ctx context.Context) error
	release(ctx context.Context) error
}

// rowLock leases tables with rows of LockTable: the primary key makes two
// inserts for one table race-free; an expired row is deleted first.
type rowLock struct {
	db      *sql.DB
	dialect string
	ttl     time.Duration
}

func newRowLock(ctx context.Context, db *sql.DB, dialect string, ttl time.Duration) (*rowLock, error) {
	l := &rowLock{db: db, dialect: dialect, ttl: ttl}
	q := `CREATE TABLE IF NOT EXISTS ` + LockTable + ` (table_key VARCHAR(1024) NOT NULL PRIMARY KEY,
  run_id VARCHAR(255) NOT NULL, since_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL)`
	if _, err := db.ExecContext(ctx, q); err != nil {
		return nil, fmt.Errorf("create %s: %w", LockTable, err)
	}
	// holder (added later): who holds the lease, so a dead holder's lease
	// is taken over at once instead of after the TTL.
	if _, err := db.ExecContext(ctx, `SELECT holder FROM `+LockTable+` WHERE 1 = 0`); err != nil {
		_, aerr := db.ExecContext(ctx, `ALTER TABLE `+LockTable+` ADD COLUMN holder VARCHAR(1024) NOT NULL DEFAULT ''`)
		if _, err := db.ExecContext(ctx, `SELECT holder FROM `+LockTable+` WHERE 1 = 0`); err != nil {
			return nil, fmt.Errorf("add holder to %s: %w", LockTable, errors.Join(aerr, err))
		}
	}
	return l, nil
}

// q rewrites ? placeholders as $n for PostgreSQL.
func (l *rowLock) q(query string) string {
	if l.dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func lockKey(t routes.TableRef) string {
	id := ident(t)
	return catalogName + ":" + id[0] + "." + id[1]
}

func (l *rowLock) acquire(ctx context.Context, t routes.TableRef, runID string) (lease, error) {
	key := lockKey(t)
	now := time.Now()
	if _, err := l.db.ExecContext(ctx, l.q(`DELETE FROM `+LockTable+` WHERE table_key = ? AND expires_ms < ?`), key, now.UnixMilli()); err != nil {
		return nil, fmt.Errorf("lock %s: clear expired lease: %w", t, err)
	}
	insert := func() error {
		_, err := l.db.ExecContext(ctx, l.q(`INSERT INTO `+LockTable+` (table_key, run_id, since_ms, expires_ms, holder) VALUES (?, ?, ?, ?, ?)`),
			key, runID, now.UnixMilli(), now.Add(l.ttl).UnixMilli(), self().String())
		return err
	}
	if err := insert(); err != nil {
		holder, locked := l.heldBy(ctx, t, key, err)
		var le *routes.LockedError
		if !errors.As(locked, &le) || !holderDead(holder) {
			return nil, locked
		}
		// The holder is a process of this machine that no longer runs (it
		// was killed): its lease is taken over now, not after the TTL. The
		// delete names the dead run, so of two runs taking over at once
		// one inserts and the other gets the primary key's refusal.
		if _, err := l.db.ExecContext(ctx, l.q(`DELETE FROM `+LockTable+` WHERE table_key = ? AND run_id = ? AND holder = ?`), key, le.RunID, holder); err != nil {
			return nil, fmt.Errorf("lock %s: clear the lease of dead run %s: %w", t, le.RunID, err)
		}
		if err := insert(); err != nil {
			_, locked := l.heldBy(ctx, t, key, err)
			return nil, locked
		}
	}
	// A run that wants the table whole also waits for the shared leases
	// of a backfill's workers (acquireShared): each side inserts its row
	// first and then looks for the other's, so of two racing at least one
	// sees the other and backs off.
	if err := l.noLive(ctx, t, sharedPrefix(key), 0); err != nil {
		l.db.ExecContext(context.WithoutCancel(ctx), l.q(`DELETE FROM `+LockTable+` WHERE table_key = ? AND run_id = ?`), key, runID)
		return nil, err
	}
	return l.lease(t, key, runID), nil
}

func (l *rowLock) lease(t routes.TableRef, key, runID string) *rowLease {
	rl := &rowLease{l: l, key: key, runID: runID, table: t, stop: make(chan struct{}), done: make(chan struct{})}
	go rl.heartbeat()
	return rl
}

// sharedPrefix starts the keys of a table's shared leases: one row each,
// keyed by the run.
func sharedPrefix(key string) string { return key + "#shared/" }

// acquireShared takes a shared lease on t for one of the workers of a
// backfill (routes.SharedDestination): shared leases coexist; an
// exclusive one (acquire) excludes them all, and the other way round.
func (l *rowLock) acquireShared(ctx context.Context, t routes.TableRef, runID string) (lease, error) {
	excl := lockKey(t)
	key := sharedPrefix(excl) + runID
	now := time.Now()
	if _, err := l.db.ExecContext(ctx, l.q(`INSERT INTO `+LockTable+` (table_key, run_id, since_ms, expires_ms, holder) VALUES (?, ?, ?, ?, ?)`),
		key, runID, now.UnixMilli(), now.Add(l.ttl).UnixMilli(), self().String()); err != nil {
		return nil, fmt.Errorf("lock %s (shared): %w", t, err)
	}
	if err := l.noLive(ctx, t, excl, len(excl)); err != nil {
		l.db.ExecContext(context.WithoutCancel(ctx), l.q(`DELETE FROM `+LockTable+` WHERE table_key = ?`), key)
		return nil, err
	}
	return l.lease(t, key, runID), nil
}

// noLive fails with a *routes.LockedError when a live lease's key starts
// with prefix (n == 0) or is prefix (n > 0); leases expired or of a dead
// holder are deleted on the way.
func (l *rowLock) noLive(ctx context.Context, t routes.TableRef, prefix string, n int) error {
	q := `SELECT table_key, run_id, since_ms, expires_ms, holder FROM ` + LockTable + ` WHERE table_key = ?`
	args := []any{prefix}
	if n == 0 {
		q = `SELECT table_key, run_id, since_ms, expires_ms, holder FROM ` + LockTable + ` WHERE substr(table_key, 1, ?) = ?`
		args = []any{len(prefix), prefix}
	}
	rows, err := l.db.QueryContext(ctx, l.q(q), args...)
	if err != nil {
		return fmt.Errorf("lock %s: %w", t, err)
	}
	type row struct {
		key, run, holder string
		since, expires   int64
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.key, &r.run, &r.since, &r.expires, &r.holder); err != nil {
			rows.Close()
			return fmt.Errorf("lock %s: %w", t, err)
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("lock %s: %w", t, err)
	}
	now := time.Now().UnixMilli()
	for _, r := range found {
		if r.expires >= now && !holderDead(r.holder) {
			return &routes.LockedError{Table: t.String(), RunID: r.run, Since: time.UnixMilli(r.since)}
		}
		res, err := l.db.ExecContext(ctx, l.q(`DELETE FROM `+LockTable+` WHERE table_key = ? AND run_id = ? AND expires_ms = ?`), r.key, r.run, r.expires)
		if err != nil {
			return fmt.Errorf("lock %s: clear the lease of dead run %s: %w", t, r.run, err)
		}
		if n, _ := res.RowsAffected(); n != 1 { // renewed meanwhile: alive after all
			return &routes.LockedError{Table: t.String(), RunID: r.run, Since: time.UnixMilli(r.since)}
		}
	}
	return nil
}

// heldBy explains a failed insert: another run's lease (and its holder),
// or a real error.
func (l *rowLock) heldBy(ctx context.Context, t routes.TableRef, key string, insertErr error) (string, error) {
	var run, holder string
	var since int64
	err := l.db.QueryRowContext(ctx, l.q(`SELECT run_id, since_ms, holder FROM `+LockTable+` WHERE table_key = ?`), key).Scan(&run, &since, &holder)
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", t, insertErr)
	}
	return holder, &routes.LockedError{Table: t.String(), RunID: run, Since: time.UnixMilli(since)}
}

// rowLease is one held row; a goroutine pushes its expiry forward.
type rowLease struct {
	l      *rowLock
	key    string
	runID  string
	table  routes.TableRef
	mu     sync.Mutex
	lost   error
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

func (r *rowLease) heartbeat() {
	defer close(r.done)
	tick := time.NewTicker(r.l.ttl / 4)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), r.l.ttl/4)
			err := r.extend(ctx)
			cancel()
			if err != nil {
				r.mu.Lock()
				r.lost = err
				r.mu.Unlock()
			}
		}
	}
}

var errLeaseLost = errors.New("lease lost: the lock expired and may be held by another run")

func (r *rowLease) extend(ctx context.Context) error {
	res, err := r.l.db.ExecContext(ctx, r.l.q(`UPDATE `+LockTable+` SET expires_ms = ? WHERE table_key = ? AND run_id = ?`),
		time.Now().Add(r.l.ttl).UnixMilli(), r.key, r.runID)
	if err != nil {
		return fmt.Errorf("extend lease on %s: %w", r.table, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%s: %w", r.table, errLeaseLost)
	}
	return nil
}

// check extends the lease once more, so a commit follows a fresh lease.
func (r *rowLease) check(ctx context.Context) error {
	r.mu.Lock()
	lost := r.lost
	r.mu.Unlock()
	if errors.Is(lost, errLeaseLost) {
		return lost
	}
	return r.extend(ctx)
}

func (r *rowLease) release(ctx context.Context) error {
	var err error
	r.closed.Do(func() {
		close(r.stop)
		<-r.done
		_, err = r.l.db.ExecContext(ctx, r.l.q(`DELETE FROM `+LockTable+` WHERE table_key = ? AND run_id = ?`), r.key, r.runID)
		if err != nil {
			err = fmt.Errorf("release lease on %s: %w", r.table, err)
		}
	})
	return err
}
