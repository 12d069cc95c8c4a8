package pgwal

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/weirhq/weir/cdc"
)

// Status reports the pair's place in the WAL without touching the slot:
// the committed position and the bytes of WAL from it to the current end,
// and the slot's retained WAL (current end − restart_lsn), its confirmed
// position and wal_status. A missing or invalidated slot behind a saved
// position is reported as Lost (the pair must re-bootstrap); a pair that
// never ran has no position and no slot, which is not a loss.
func Status(ctx context.Context, cfg Config) (cdc.LogLag, error) {
	lag := cdc.LogLag{Log: "wal"}
	r, err := open(ctx, cfg)
	if err != nil {
		return lag, err
	}
	defer r.close(ctx)
	lag.Slot = r.name
	pos, ok, err := r.position(ctx)
	if err != nil {
		return lag, err
	}
	if ok {
		lag.Position = pos
	}
	var head string
	if err := r.src.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&head); err != nil {
		return lag, fmt.Errorf("read the WAL end: %w", err)
	}
	lag.Head = head
	if ok {
		q := `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint`
		if err := r.src.QueryRow(ctx, q, head, pos).Scan(&lag.Behind); err != nil {
			return lag, fmt.Errorf("WAL behind %s: %w", pos, err)
		}
		lag.Known = true
	}
	var retained, behind *int64
	var confirmed, status *string
	q := `SELECT pg_wal_lsn_diff($2::pg_lsn, restart_lsn)::bigint, confirmed_flush_lsn::text,
	             pg_wal_lsn_diff($2::pg_lsn, confirmed_flush_lsn)::bigint, wal_status
	      FROM pg_replication_slots WHERE slot_name = $1`
	err = r.src.QueryRow(ctx, q, r.name, head).Scan(&retained, &confirmed, &behind, &status)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if ok {
			lag.Lost, lag.Known = true, false
			lag.Problem = (&SlotLostError{Slot: r.name, Position: pos, Reason: "does not exist (dropped?)"}).Loss()
		}
		return lag, nil
	case err != nil:
		return lag, fmt.Errorf("read slot %s: %w", r.name, err)
	}
	lag.Retained, lag.ConfirmedBehind = deref(retained), deref(behind)
	lag.Warning = retainWarning(r.name, lag.Retained, cfg.SlotWALWarn)
	if confirmed != nil {
		lag.Confirmed = *confirmed
	}
	if status != nil {
		lag.WALStatus = *status
	}
	if lag.WALStatus == "lost" && ok {
		lag.Lost, lag.Known = true, false
		lag.Problem = (&SlotLostError{Slot: r.name, Position: pos, Reason: "was invalidated: the WAL it needed was removed (max_slot_wal_keep_size)"}).Loss()
	}
	return lag, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
