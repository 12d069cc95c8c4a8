package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/weirhq/weir/routes"
)

// A run's lock is a lease: the table _weir_lock_<table> in the
// destination's database. CREATE TABLE (without IF NOT EXISTS) is the
// compare-and-swap: of two runs, exactly one creates it. Its rows carry the
// run id, the run's staging table and a heartbeat (server time) that a
// goroutine refreshes every Lease/6 while the stage lives. A lease whose
// heartbeat is older than Lease is dead: the next run renames the lock
// table away (RENAME is atomic, so one taker wins), checks it still holds
// the dead run, drops that run's leftovers and creates its own. See
// docs/routes-clickhouse.md for the race windows that remain.
const (
	stagePrefix = "_weir_stage_"
	lockPrefix  = "_weir_lock_"
	deadPrefix  = "_weir_lockdead_"
	oldPrefix   = "_weir_old_"
)

// weirName builds prefix+table(+_run), shortening long table names with a
// hash (routes.SideName) so the name stays a valid file name on the server.
func weirName(prefix, table, runID string) string {
	if len(table) > 160 {
		table = routes.SideName("", table, "", routes.Bytes(160))
	}
	if runID == "" {
		return prefix + table
	}
	return prefix + table + "_" + runID
}

// holder is what a lock table says about the run holding it.
type holder struct {
	runID string
	stage string
	since time.Time
	age   time.Duration // since its last heartbeat, or since the table was created if empty
}

// lease is a held lock.
type lease struct {
	e      *Endpoint
	dest   routes.TableRef
	table  routes.TableRef // the lock table
	runID  string
	stage  string
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	lost error // set when a heartbeat finds the lease taken
}

// acquire takes dest's lease for runID. When it takes over a dead run's
// lease it returns what that run held, for the caller to clean up.
func (e *Endpoint) acquire(ctx context.Context, dest routes.TableRef, runID, stage string) (*lease, *holder, error) {
	l := &lease{e: e, dest: dest, runID: runID, stage: stage,
		table: routes.TableRef{Schema: dest.Schema, Name: weirName(lockPrefix, dest.Name, "")}}
	var dead *holder
	for attempt := 0; attempt < 3; attempt++ {
		err := l.create(ctx)
		if err == nil {
			l.start(ctx)
			return l, dead, nil
		}
		if errorCode(err) != codeTableAlreadyExists {
			return nil, nil, fmt.Errorf("lock %s: %w", dest, err)
		}
		h, err := l.takeOver(ctx)
		if err != nil {
			return nil, nil, err
		}
		if h != nil {
			dead = h
		}
	}
	return nil, nil, &routes.LockedError{Table: dest.String()}
}

// create is the compare-and-swap: it fails with TABLE_ALREADY_EXISTS when
// another run holds the lease. The table is created with its first row.
func (l *lease) create(ctx context.Context) error {
	ddl := fmt.Sprintf("CREATE TABLE %s ENGINE = MergeTree ORDER BY tuple() AS SELECT toString(%s) AS run_id, toString(%s) AS stage, now() AS since, now() AS beat",
		ident(l.table), quoteLiteral(l.runID), quoteLiteral(l.stage))
	return l.e.conn.exec(ctx, ddl)
}

// takeOver refuses a live holder with a *routes.LockedError; a dead one's
// lock table is renamed away and its holder returned (nil when the lock
// vanished meanwhile: try again).
func (l *lease) takeOver(ctx context.Context) (*holder, error) {
	h, err := l.e.waitHolder(ctx, l.table)
	if errorCode(err) == codeUnknownTable {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", l.dest, err)
	}
	if h.age <= l.e.opts.Lease {
		return nil, l.lockedError(h)
	}
	dead := routes.TableRef{Schema: l.table.Schema, Name: weirName(deadPrefix, l.dest.Name, l.runID)}
	err = l.e.conn.exec(ctx, fmt.Sprintf("RENAME TABLE %s TO %s", ident(l.table), ident(dead)))
	if errorCode(err) == codeUnknownTable {
		return nil, nil // another run took it first
	}
	if err != nil {
		return nil, fmt.Errorf("take over lock of %s: %w", l.dest, err)
	}
	return l.checkDead(ctx, dead, h)
}

// checkDead makes sure the renamed lock table is the dead run's: if a live
// run's lease was renamed instead, it goes back.
func (l *lease) checkDead(ctx context.Context, dead routes.TableRef, was holder) (*holder, error) {
	h, err := l.e.readHolder(ctx, dead)
	if err != nil {
		return nil, fmt.Errorf("take over lock of %s: %w", l.dest, err)
	}
	if h.runID != was.runID || h.age <= l.e.opts.Lease {
		l.e.conn.exec(ctx, fmt.Sprintf("RENAME TABLE %s TO %s", ident(dead), ident(l.table)))
		return nil, l.lockedError(h)
	}
	if err := l.e.conn.exec(ctx, "DROP TABLE IF EXISTS "+ident(dead)); err != nil {
		return nil, fmt.Errorf("drop dead lock of %s: %w", l.dest, err)
	}
	return &h, nil
}

func (l *lease) lockedError(h holder) error {
	return &routes.LockedError{Table: l.dest.String(), RunID: h.runID, Since: h.since}
}

// readHolder reads a lock table: the run, its stage, when it took the
// lock and how old its last heartbeat is by the server's clock.
func (e *Endpoint) readHolder(ctx context.Context, lock routes.TableRef) (holder, error) {
	q := fmt.Sprintf(`SELECT any(run_id), any(stage), toString(toUInt32(min(since))),
  toString(toInt64(now()) - toInt64(max(beat))), toString(count()) FROM %s`, ident(lock))
	row, _, err := queryRow(ctx, e.conn, q)
	if err != nil {
		return holder{}, err
	}
	h := holder{runID: row[0], stage: row[1]}
	since, _ := strconv.ParseInt(row[2], 10, 64)
	age, _ := strconv.ParseInt(row[3], 10, 64)
	h.since, h.age = time.Unix(since, 0).UTC(), time.Duration(age)*time.Second
	if row[4] == "0" {
		h.age, err = e.tableAge(ctx, lock) // its creator died before its first row
	}
	return h, err
}

// waitHolder reads a lock table, giving a run that is creating it (the
// table exists a moment before its first row) a second to fill it.
func (e *Endpoint) waitHolder(ctx context.Context, lock routes.TableRef) (holder, error) {
	for i := 0; ; i++ {
		h, err := e.readHolder(ctx, lock)
		if err != nil || h.runID != "" || h.age > e.opts.Lease || i == 20 {
			return h, err
		}
		select {
		case <-ctx.Done():
			return h, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tableAge is how long ago a table's metadata was last changed.
func (e *Endpoint) tableAge(ctx context.Context, t routes.TableRef) (time.Duration, error) {
	q := fmt.Sprintf(`SELECT toString(toInt64(now()) - toInt64(metadata_modification_time)) FROM system.tables WHERE database = %s AND name = %s`,
		quoteLiteral(t.Schema), quoteLiteral(t.Name))
	row, ok, err := queryRow(ctx, e.conn, q)
	if err != nil || !ok {
		return 0, err
	}
	s, _ := strconv.ParseInt(row[0], 10, 64)
	return time.Duration(s) * time.Second, nil
}

// start runs the heartbeat until release.
func (l *lease) start(ctx context.Context) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.e.opts.heartbeat())
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

// beat copies this run's row with a fresh time. Copying (rather than
// inserting anew) never refreshes a lease another run has taken over.
func (l *lease) beat(ctx context.Context) {
	q := fmt.Sprintf(`INSERT INTO %[1]s (run_id, stage, since, beat) SELECT run_id, stage, since, now() FROM %[1]s WHERE run_id = %[2]s LIMIT 1`,
		ident(l.table), quoteLiteral(l.runID))
	bctx, cancel := context.WithTimeout(ctx, l.e.opts.Lease)
	defer cancel()
	if err := l.e.conn.exec(bctx, q); err != nil && ctx.Err() == nil {
		l.mu.Lock()
		l.lost = err
		l.mu.Unlock()
	}
}

// verify checks the lease is still this run's and alive.
func (l *lease) verify(ctx context.Context) error {
	h, err := l.e.readHolder(ctx, l.table)
	if err == nil && h.runID == l.runID && h.age <= l.e.opts.Lease {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(fmt.Errorf("lease on %s lost (held by %q, last heartbeat %s ago)", l.dest, h.runID, h.age), err, l.lost)
}

// release stops the heartbeat and drops the lock table if it is still
// this run's. It is idempotent.
func (l *lease) release(ctx context.Context) error {
	if l == nil || l.cancel == nil {
		return nil
	}
	l.cancel()
	<-l.done
	l.cancel = nil
	h, err := l.e.readHolder(ctx, l.table)
	if err != nil || h.runID != l.runID {
		return nil // gone, or another run's now
	}
	if err := l.e.conn.exec(ctx, "DROP TABLE IF EXISTS "+ident(l.table)); err != nil {
		return fmt.Errorf("unlock %s: %w", l.dest, err)
	}
	return nil
}
