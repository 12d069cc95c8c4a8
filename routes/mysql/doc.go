// Package mysql is weir's MySQL and MariaDB route, as a source and a
// destination, on go-sql-driver/mysql. URLs are
// mysql://user:pass@host:3306/db (or mariadb://…); a table without a
// database part lives in the URL's database.
//
// Reading runs one streaming SELECT per range on the text protocol (equal
// key ranges of a single-column integer primary key, else one range), and
// decodes each row from the driver's read buffer straight into Arrow
// builders: dates, times and decimals are parsed in place, text and blobs
// copied once. Every session runs with time_zone '+00:00', so TIMESTAMP
// values are UTC. The ranges of a parallel read are separate statements,
// each consistent in itself; MySQL has no way to share one snapshot
// between connections short of FLUSH TABLES WITH READ LOCK, which weir
// does not take.
//
// Writing stages into `_weir_stage_<table>_<run>` with one
// `LOAD DATA LOCAL INFILE 'Reader::…'` per pipe, fed through an io.Pipe by
// an encoder that writes Arrow batches as LOAD DATA text (no temp files),
// and fails on any warning the load leaves, since LOAD DATA LOCAL reports
// data errors only as warnings. Commit swaps (replace: one RENAME TABLE),
// appends or merges (INSERT … SELECT, ON DUPLICATE KEY UPDATE) and saves
// `_weir_state`; see Commit for how the state stays consistent with the
// data in each mode.
//
// A run holds GET_LOCK('weir:<db>.<table>') on a dedicated session for its
// whole life, so a second run is refused at Prepare with a
// *routes.LockedError naming it, and a staging table left by a killed run
// (whose lock died with its session) is dropped by the next.
//
// See docs/routes-mysql.md for the type mappings and URL parameters.
package mysql
