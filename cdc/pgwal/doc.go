// Package pgwal is batch change data capture from PostgreSQL logical
// replication (pgoutput) into a PostgreSQL destination.
//
// The first run creates a publication and a logical replication slot named
// for the (source, destination) pair, exports the slot's snapshot, copies
// every table pinned to that snapshot and saves the slot's consistent point
// as the position in _weir_state, in the same destination transaction as
// the rows. Every later run starts replication at the saved position,
// drains to the end of the WAL as of connecting, folds the changes per key
// (package cdc), applies them set-based in one destination transaction that
// also advances the position, and only then confirms the position to the
// slot. A crash anywhere re-applies the same window, with the same result.
//
// See docs/cdc.md for REPLICA IDENTITY, TOAST and slot-loss handling.
package pgwal
