// Package pgwal is batch change data capture from PostgreSQL logical
// replication (pgoutput) into any destination that implements cdc.Applier.
//
// The first run creates a publication and a logical replication slot named
// for the (source, destination) pair, exports the slot's snapshot, copies
// every table pinned to that snapshot (routes.Copy through the postgres
// route) and commits the slot's consistent point as each table's position
// in _weir_state with its rows. Every later run starts replication at the saved position,
// drains to the end of the WAL as of connecting, folds the changes per key
// (package cdc), applies them set-based in one destination transaction that
// also advances the position, and only then confirms the position to the
// slot. A crash anywhere re-applies the same window, with the same result.
//
// See docs/cdc.md for REPLICA IDENTITY, TOAST and slot-loss handling.
package pgwal
