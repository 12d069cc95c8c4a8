package pgwal

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The source's disk: a slot keeps every WAL segment from its restart_lsn
// on, so a task that stops running (or cannot progress) makes the server
// keep WAL without bound unless max_slot_wal_keep_size caps it.

// slotRetained is the WAL the slot keeps (current WAL end − restart_lsn)
// and its wal_status; ok is false when there is no such slot.
func slotRetained(ctx context.Context, src *pgx.Conn, name string) (retained int64, status string, ok bool, err error) {
	var r *int64
	var st *string
	err = src.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&r, &st)
	if err == pgx.ErrNoRows {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, fmt.Errorf("read slot %s: %w", name, err)
	}
	if st != nil {
		status = *st
	}
	return deref(r), status, true, nil
}

// retainWarning is the warning for a slot retaining more than the
// threshold, or "".
func retainWarning(name string, retained, threshold int64) string {
	if threshold <= 0 {
		threshold = DefaultSlotWALWarn
	}
	if retained <= threshold {
		return ""
	}
	return fmt.Sprintf("replication slot %s retains %s of WAL (over the %s threshold, --slot-wal-warn): the source keeps it on disk until a run confirms past it; run the task, bound it with max_slot_wal_keep_size, or retire the task with weir reset (drops the slot)",
		name, sizeText(retained), sizeText(threshold))
}

// keepSizeWarning warns when max_slot_wal_keep_size is -1 (unlimited, the
// default): nothing then stops an abandoned slot from filling the disk.
func keepSizeWarning(ctx context.Context, src *pgx.Conn) (string, error) {
	var v string
	err := src.QueryRow(ctx, `SELECT setting FROM pg_settings WHERE name = 'max_slot_wal_keep_size'`).Scan(&v)
	if err == pgx.ErrNoRows {
		return "", nil // before PostgreSQL 13: no such bound
	}
	if err != nil {
		return "", fmt.Errorf("read max_slot_wal_keep_size: %w", err)
	}
	return keepSizeText(v), nil
}

// keepSizeText is the warning for a max_slot_wal_keep_size setting, or "".
func keepSizeText(setting string) string {
	if setting != "-1" {
		return ""
	}
	return "max_slot_wal_keep_size is -1 (unlimited): a slot whose task stops running keeps WAL until the source's disk is full; " +
		"bound it (ALTER SYSTEM SET max_slot_wal_keep_size = '50GB'; SELECT pg_reload_conf()): a slot past it is invalidated and its task re-bootstraps"
}

// report fills res with the slot's retained WAL and its warning.
func (r *run) report(ctx context.Context, res *Result) error {
	retained, _, ok, err := slotRetained(ctx, r.src, r.name)
	if err != nil || !ok {
		return err
	}
	res.SlotRetained = retained
	if w := retainWarning(r.name, retained, r.cfg.SlotWALWarn); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return nil
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
