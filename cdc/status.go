package cdc

// LogLag is where a log_based pair stands in its source's change log:
// what weir status shows. Byte counts are of the source's log (WAL,
// binlog files), not of the captured tables' changes: the log carries the
// whole server's writes.
type LogLag struct {
	Log      string `json:"log"`                // "wal" or "binlog"
	Position string `json:"position,omitempty"` // the committed position (the lowest over the pair's tables); empty before the bootstrap
	Head     string `json:"head"`               // the log's current end
	// Behind is the log from Position to Head, in bytes: what the next
	// run drains. Known is false when it could not be computed (no
	// position yet, a lost log).
	Behind int64 `json:"behind_bytes"`
	Known  bool  `json:"known"`

	// PostgreSQL: the pair's replication slot, as pg_replication_slots
	// has it.
	Slot            string `json:"slot,omitempty"`
	Retained        int64  `json:"retained_bytes,omitempty"`         // WAL the slot keeps: current WAL end − restart_lsn
	Confirmed       string `json:"confirmed,omitempty"`              // confirmed_flush_lsn
	ConfirmedBehind int64  `json:"confirmed_behind_bytes,omitempty"` // current WAL end − confirmed_flush_lsn
	WALStatus       string `json:"wal_status,omitempty"`             // reserved, extended, unreserved, lost
	Warning         string `json:"warning,omitempty"`                // the slot retains more WAL than the threshold

	// Binlog: the saved position's file and the server's oldest.
	File   string `json:"file,omitempty"`
	Oldest string `json:"oldest,omitempty"`

	// Lost: the slot or the binlog file the position needs is gone; the
	// pair must re-bootstrap (Problem says what was lost; the fix is
	// weir reset).
	Lost    bool   `json:"lost,omitempty"`
	Problem string `json:"problem,omitempty"`
}
