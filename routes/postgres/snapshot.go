package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weirhq/weir/routes"
)

// snapshots holds, per planned table, a transaction that exported a
// snapshot, until every pipe has imported it (pg_dump --jobs does the same).
type snapshots struct {
	mu     sync.Mutex
	held   map[*routes.TableInfo]*snapshot
	pinned string // set by UseSnapshot: every read imports it
}

// UseSnapshot makes every later read import the exported snapshot id
// instead of reading the current data (cdc/pgwal pins its bootstrap to the
// replication slot's snapshot this way). The exporter must keep the
// snapshot alive until the reads have imported it.
func (e *Endpoint) UseSnapshot(id string) {
	e.snap.mu.Lock()
	defer e.snap.mu.Unlock()
	e.snap.pinned = id
}

func (s *snapshots) isPinned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pinned != ""
}

type snapshot struct {
	id      string
	tx      pgx.Tx
	conn    *pgxpool.Conn
	pending int // pipes that have not imported it yet
}

func (s *snapshots) export(ctx context.Context, pool *pgxpool.Pool, info *routes.TableInfo, pipes int) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		conn.Release()
		return err
	}
	snap := &snapshot{tx: tx, conn: conn, pending: pipes}
	if err := tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&snap.id); err != nil {
		snap.close()
		return fmt.Errorf("export snapshot: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = map[*routes.TableInfo]*snapshot{}
	}
	if old := s.held[info]; old != nil {
		old.close()
	}
	s.held[info] = snap
	return nil
}

// id returns the snapshot a pipe of this table must import, if any.
func (s *snapshots) id(info *routes.TableInfo) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pinned != "" {
		return s.pinned
	}
	if snap := s.held[info]; snap != nil {
		return snap.id
	}
	return ""
}

// imported counts a pipe in; the last one lets the exporter go.
func (s *snapshots) imported(info *routes.TableInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.held[info]
	if snap == nil {
		return
	}
	if snap.pending--; snap.pending <= 0 {
		snap.close()
		delete(s.held, info)
	}
}

func (s *snapshots) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, snap := range s.held {
		snap.close()
		delete(s.held, k)
	}
}

func (s *snapshot) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.tx.Rollback(ctx)
	s.conn.Release()
}
