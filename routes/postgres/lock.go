package postgres

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes"
)

// A run's lock is a session-level advisory lock on a key derived from the
// destination table, held on a dedicated connection whose application_name
// names the run. It dies with the session, so a killed run never locks a
// table for good.
const lockKeySQL = `hashtextextended('weir:' || $1, 0)`

// holderSQL finds the session holding a table's lock.
const holderSQL = `
SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND ((l.classid::int8 << 32) | l.objid::int8) = ` + lockKeySQL + ` LIMIT 1`

type tableLock struct {
	conn   *pgxpool.Conn
	key    string
	shared bool // taken with pg_try_advisory_lock_shared (PrepareShared)
}

func lockName(runID string, since time.Time) string {
	return fmt.Sprintf("weir run %s since %s", runID, since.UTC().Format(time.RFC3339))
}

var lockNameRE = regexp.MustCompile(`^weir run (\S+) since (\S+)$`)

// acquireLock takes the table's lock — in shared mode for the workers of
// a backfill (shared holders coexist; an exclusive one excludes them all)
// — or returns a *routes.LockedError.
func (e *Endpoint) acquireLock(ctx context.Context, table routes.TableRef, runID string, shared bool) (*tableLock, error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	key := ident(table)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock`+sharedSuffix(shared)+`(`+lockKeySQL+`)`, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock %s: %w", table, err)
	}
	if !ok {
		conn.Release()
		return nil, e.lockedError(ctx, table)
	}
	if _, err := conn.Exec(ctx, "SET application_name = "+quoteLiteral(lockName(runID, time.Now()))); err != nil {
		conn.Release() // closing the session frees the lock
		return nil, err
	}
	return &tableLock{conn: conn, key: key, shared: shared}, nil
}

func sharedSuffix(shared bool) string {
	if shared {
		return "_shared"
	}
	return ""
}

func (e *Endpoint) lockedError(ctx context.Context, table routes.TableRef) error {
	lerr := &routes.LockedError{Table: table.String()}
	var app string
	if e.pool.QueryRow(ctx, holderSQL, ident(table)).Scan(&app) == nil {
		if m := lockNameRE.FindStringSubmatch(app); m != nil {
			lerr.RunID = m[1]
			lerr.Since, _ = time.Parse(time.RFC3339, m[2])
		}
	}
	return lerr
}

// release frees the lock; the connection goes back to the pool clean.
func (l *tableLock) release(ctx context.Context) {
	if l == nil || l.conn == nil {
		return
	}
	_, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock`+sharedSuffix(l.shared)+`(`+lockKeySQL+`)`, l.key)
	if err == nil {
		_, err = l.conn.Exec(ctx, "RESET application_name")
	}
	if err != nil {
		// A session we cannot clean must not return to the pool holding the lock.
		l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
	l.conn = nil
}
