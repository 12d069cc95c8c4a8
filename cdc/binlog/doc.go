// Package binlog is batch change data capture from a MySQL or MariaDB
// binary log (ROW format, FULL row images) into any destination that
// implements cdc.Applier.
//
// The first run records the binlog coordinate (file:pos and the server's
// GTID set) and then loads every table in full with routes.Copy, committing
// that coordinate as the position with the rows. The load is not pinned to
// the coordinate, so it may already hold some later changes: the next run
// replays them. That is exactly right because a FULL row image states the
// whole row, so replaying a change sets the row to what it was at that
// change, and the fold keeps only the last change per key: every key
// changed after the coordinate ends as its last change, and every other key
// was not changed since the coordinate, so the load read its current value.
//
// Every later run reads the server's current coordinate (the drain's
// target), streams the binlog from the saved coordinate to it with
// go-mysql's BinlogSyncer, decodes the row images (rows.go), folds the
// row events per key (package cdc) and
// applies them in one destination transaction that also saves the target as
// the new position. A crash anywhere re-applies the same window.
//
// See docs/cdc.md for the server settings, type mapping and limits.
package binlog
