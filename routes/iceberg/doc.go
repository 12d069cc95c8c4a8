// Package iceberg is weir's Apache Iceberg route (iceberg-go), as a source
// and a destination: iceberg:// for a SQL catalog on SQLite (embedded, the
// default) or PostgreSQL, iceberg+rest:// for a REST catalog; warehouses on
// file:// and s3:// (iceberg-go's S3 FileIO).
//
// Writing: each pipe's batches are converted to the table's schema and
// written as Parquet data files as they come (bounded memory), by weir's
// own encoder (routes/fileformat; iceberg-go only describes each file from
// its footer, datafile.go) unless the table needs iceberg-go's writer
// (partitioned, format v1/v3, a codec fileformat lacks); Commit adds
// them in one Iceberg commit — an overwrite snapshot (replace), an append
// snapshot (append), or a row delta of the new rows plus equality deletes
// of their keys (merge, an upsert) — whose transaction also sets the state
// table property (weir.state.<source>) and whose snapshot summary carries
// weir.watermark.<source> and weir.run. A run holds a lease on the table
// (a row of weir_locks in the SQL catalog's database; a weir.lock table
// property in a REST catalog) from Prepare to Commit or Abort; Abort
// removes the run's data files.
//
// Reading: Plan splits a snapshot's data files into groups, Read scans a
// group to Arrow. Time travel: name the table ns.t@<snapshot-id>, or add
// snapshot=<id> to the URL. Incremental reads by snapshot use the
// pseudo-cursor routes.SnapshotCursor (offsets are snapshot sequence numbers);
// Changes reports what a range of snapshots deleted or rewrote.
//
// See docs/routes-iceberg.md for the URL, the type mapping, and the
// lease's race window.
package iceberg
