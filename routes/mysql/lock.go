package mysql

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/weirhq/weir/routes"
)

// A run's lock is a MySQL user-level lock, GET_LOCK('weir:<db>.<table>', 0),
// held on a dedicated connection for the whole run; the same connection
// creates the staging table and runs the commit. The lock dies with the
// session, so a killed run never locks a table for good. Another run finds
// the holder's connection id with IS_USED_LOCK and reads the run id from
// the comment of the staging table that connection created.
type tableLock struct {
	conn   *sql.Conn
	name   string
	connID int64
}

// maxLockName is MySQL's limit on a user-level lock name.
const maxLockName = 64

func lockName(dest routes.TableRef) string {
	name := "weir:" + dest.Schema + "." + dest.Name
	if len(name) <= maxLockName {
		return name
	}
	h := sha1.Sum([]byte(dest.Schema + "." + dest.Name))
	return "weir:" + hex.EncodeToString(h[:20])
}

// acquireLock takes the table's lock or returns a *routes.LockedError.
func (e *Endpoint) acquireLock(ctx context.Context, dest routes.TableRef) (*tableLock, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dest, err)
	}
	l := &tableLock{conn: conn, name: lockName(dest)}
	var got sql.NullInt64
	err = conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 0), CONNECTION_ID()`, l.name).Scan(&got, &l.connID)
	switch {
	case err != nil:
		conn.Close()
		return nil, fmt.Errorf("lock %s: %w", dest, err)
	case got.Int64 != 1:
		conn.Close()
		return nil, e.lockedError(ctx, dest)
	}
	return l, nil
}

// lockedError names the run holding dest, when its staging table says.
func (e *Endpoint) lockedError(ctx context.Context, dest routes.TableRef) error {
	lerr := &routes.LockedError{Table: dest.String()}
	var holder sql.NullInt64
	if e.db.QueryRowContext(ctx, `SELECT IS_USED_LOCK(?)`, lockName(dest)).Scan(&holder) != nil || !holder.Valid {
		return lerr
	}
	stages, err := e.stagingTables(ctx, dest)
	if err != nil {
		return lerr
	}
	for _, s := range stages {
		if s.connID == holder.Int64 {
			lerr.RunID, lerr.Since = s.runID, s.since
		}
	}
	return lerr
}

// held reports whether this session still holds the lock (a server restart
// or a KILL of the idle lock session would have freed it).
func (l *tableLock) held(ctx context.Context) error {
	var holder sql.NullInt64
	if err := l.conn.QueryRowContext(ctx, `SELECT IS_USED_LOCK(?)`, l.name).Scan(&holder); err != nil {
		return fmt.Errorf("check lock: %w", err)
	}
	if holder.Int64 != l.connID {
		return errors.New("the run's lock was lost (its session ended); not committing")
	}
	return nil
}

// release frees the lock and returns the connection to the pool; a session
// that cannot be cleaned is discarded, which frees the lock too.
func (l *tableLock) release(ctx context.Context) {
	if l == nil || l.conn == nil {
		return
	}
	if _, err := l.conn.ExecContext(ctx, `DO RELEASE_LOCK(?)`, l.name); err != nil {
		l.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	l.conn.Close()
	l.conn = nil
}
