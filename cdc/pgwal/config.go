package pgwal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weirhq/weir/cdc"
	"github.com/weirhq/weir/routes"
	"github.com/weirhq/weir/routes/postgres"
)

// Scheme is the source scheme this package captures from.
const Scheme = "postgres"

// Pair is one captured table and where it goes.
type Pair = cdc.Pair

// Config is one (source, destination) replication: the tables of one
// publication and one slot.
type Config struct {
	SourceURL string // postgres://…; the replication connection is derived from it
	DestURL   string // postgres://…
	Tables    []Pair
	RunID     string // optional; routes.NewRunID() when empty
	// Changelog appends every change to the destination tables (with
	// _weir_op, _weir_lsn, …) instead of keeping replicas of them.
	Changelog bool
	// SlotWALWarn is the WAL the pair's slot may retain before a run and
	// Status warn (bytes; 0: DefaultSlotWALWarn).
	SlotWALWarn int64
}

// DefaultSlotWALWarn is the retained WAL a slot is warned about: an
// abandoned slot keeps WAL until the source's disk is full.
const DefaultSlotWALWarn = 4 << 30

func (c Config) validate() error {
	if len(c.Tables) == 0 {
		return routes.BadInput("pgwal: no tables to capture")
	}
	for _, p := range c.Tables {
		if p.Source.Schema == "" || p.Dest.Schema == "" {
			return routes.BadInput("pgwal: %s → %s: tables must be schema-qualified", p.Source, p.Dest)
		}
	}
	return nil
}

// Name returns the slot and publication name of the pair: "weir_" and 20
// hex digits of a hash of the source identity, destination identity and
// table pairs. Valid as a slot name (lower case, digits, underscore).
func (c Config) Name() (string, error) {
	src, err := routes.ParseURL(c.SourceURL)
	if err != nil {
		return "", fmt.Errorf("source URL: %w", err)
	}
	dst, err := routes.ParseURL(c.DestURL)
	if err != nil {
		return "", fmt.Errorf("destination URL: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s", src.Identity(), dst.Identity())
	for _, p := range c.Tables {
		fmt.Fprintf(h, "\x00%s\x00%s", p.Source, p.Dest)
	}
	if c.Changelog {
		// A changelog never shares a slot with a replica of the same pair.
		h.Write([]byte("\x00changelog"))
	}
	return "weir_" + hex.EncodeToString(h.Sum(nil))[:20], nil
}

// sourceID is what _weir_state.source holds for a pair.
func (c Config) sourceID(p Pair) string {
	u, err := routes.ParseURL(c.SourceURL)
	if err != nil {
		return p.Source.String()
	}
	return u.Identity() + "#" + p.Source.String()
}

// ErrSlotLost: the replication slot the saved position depends on is gone
// (dropped, or invalidated past max_slot_wal_keep_size). Changes since the
// saved position cannot be read any more; the only fix is a new bootstrap.
var ErrSlotLost = errors.New("replication slot lost")

// SlotLostError names the slot and the fix.
type SlotLostError struct {
	Slot     string
	Position string // the saved position that can no longer be read from
	Reason   string
}

func (e *SlotLostError) Error() string {
	return e.Loss() + ": re-bootstrap with `weir reset` (drops the state) and run again"
}

// Loss says what was lost, without the fix (weir status names the task's).
func (e *SlotLostError) Loss() string {
	return fmt.Sprintf("replication slot %s %s; changes after %s are unreadable", e.Slot, e.Reason, e.Position)
}

// Is makes errors.Is(err, ErrSlotLost) true.
func (e *SlotLostError) Is(target error) bool { return target == ErrSlotLost }

// logLSN renders an LSN for a changelog's _weir_lsn: both halves
// zero-padded to 8 hex digits, so text order is LSN order (and it still
// casts to pg_lsn).
func logLSN(lsn pglogrepl.LSN) string { return fmt.Sprintf("%08X/%08X", uint64(lsn)>>32, uint32(lsn)) }

// replicationConfig is the config of a replication=database connection
// to the postgres URL raw, in weir's session settings (postgres.Session):
// pgoutput prints each value under the walsender's, and value reads them
// in those (routes.ParseInterval for intervals).
func replicationConfig(raw string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["replication"] = "database"
	postgres.Session(cfg.RuntimeParams)
	return cfg, nil
}
