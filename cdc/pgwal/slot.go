package pgwal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/routes"
)

// slotState is what pg_replication_slots says about the pair's slot.
type slotState struct {
	exists    bool
	active    bool
	walStatus string // reserved, extended, unreserved, lost
}

func readSlot(ctx context.Context, src *pgx.Conn, name string) (slotState, error) {
	var s slotState
	var status *string
	err := src.QueryRow(ctx, `SELECT active, wal_status FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&s.active, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read slot %s: %w", name, err)
	}
	s.exists = true
	if status != nil {
		s.walStatus = *status
	}
	return s, nil
}

// checkSlot fails with a *SlotLostError when the slot the saved position
// depends on is missing or invalidated.
func checkSlot(ctx context.Context, src *pgx.Conn, name, pos string) error {
	s, err := readSlot(ctx, src, name)
	if err != nil {
		return err
	}
	switch {
	case !s.exists:
		return &SlotLostError{Slot: name, Position: pos, Reason: "does not exist (dropped?)"}
	case s.walStatus == "lost":
		return &SlotLostError{Slot: name, Position: pos, Reason: "was invalidated: the WAL it needed was removed (max_slot_wal_keep_size)"}
	}
	return nil
}

// ensurePublication creates the pair's publication for its tables, or sets
// its table list when it exists; created reports the first.
func ensurePublication(ctx context.Context, src *pgx.Conn, name string, tables []Pair) (created bool, err error) {
	list := make([]string, len(tables))
	for i, p := range tables {
		list[i] = pgx.Identifier{p.Source.Schema, p.Source.Name}.Sanitize()
	}
	var exists bool
	if err := src.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, name).Scan(&exists); err != nil {
		return false, fmt.Errorf("read publication %s: %w", name, err)
	}
	verb := "CREATE PUBLICATION %s FOR TABLE %s"
	if exists {
		verb = "ALTER PUBLICATION %s SET TABLE %s"
	}
	if _, err := src.Exec(ctx, fmt.Sprintf(verb, quoteIdent(name), strings.Join(list, ", "))); err != nil {
		return false, fmt.Errorf("publication %s: %w", name, err)
	}
	return !exists, nil
}

// createSlot creates the logical slot over a replication connection and
// exports its snapshot. The snapshot stays importable until the next
// command on repl, so repl must stay idle until the copy imported it.
func createSlot(ctx context.Context, repl *pgconn.PgConn, name string) (pglogrepl.CreateReplicationSlotResult, error) {
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return res, fmt.Errorf("create replication slot %s: %w", name, err)
	}
	return res, nil
}

// dropSlot drops the slot if it exists. A slot whose connection has just
// closed can still be active for a moment (55006): retry for a while.
func dropSlot(ctx context.Context, src *pgx.Conn, name string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := src.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			if pgErr != nil && pgErr.Code == "55006" {
				// Still active: a live run holds it (exit 75, retry later).
				return fmt.Errorf("drop replication slot: %w (%s)", &routes.LockedError{Table: "replication slot " + name}, pgErr.Message)
			}
			if err != nil {
				return fmt.Errorf("drop replication slot %s: %w", name, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func dropPublication(ctx context.Context, src *pgx.Conn, name string) error {
	if _, err := src.Exec(ctx, "DROP PUBLICATION IF EXISTS "+quoteIdent(name)); err != nil {
		return fmt.Errorf("drop publication %s: %w", name, err)
	}
	return nil
}

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }
