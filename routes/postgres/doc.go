// Package postgres is weir's PostgreSQL route, as a source and a destination,
// on pgx v5.
//
// Reading runs one `COPY (SELECT …) TO STDOUT (FORMAT binary)` per range
// (integer primary key ranges, or ctid page ranges for a table without one),
// all pipes pinned to one exported snapshot so a parallel read is as
// consistent as a single one. Writing stages into `_weir_stage_<table>_<run>`
// with one `COPY … FROM STDIN (FORMAT binary)` per pipe, and commits by
// swapping, appending or merging in one transaction that also writes
// `_weir_state`. When both ends are Postgres the binary COPY bytes pass
// through untouched; otherwise they are decoded into (or encoded from) Arrow.
//
// A run holds a session-level advisory lock on the destination table for its
// whole life, so a second run is refused at Prepare, and a staging table left
// by a killed run (whose lock died with its session) is dropped by the next.
package postgres
