// Package bigquery is weir's BigQuery destination:
// bigquery://PROJECT/DATASET?location=EU, credentials from Application
// Default Credentials or credentials_file=, endpoint= for another API root
// (an emulator; http:// endpoints go without authentication).
//
// A run takes a lease on the destination table (the table
// _weir_lock_<table>, see lock.go) and creates a staging table
// _weir_stage_<table>_<run> with the mapped schema (see mapType). Each
// pipe converts its Arrow batches to the staged types, encodes them with
// routes/fileformat's Parquet encoder into an io.Pipe, and a load job reads the
// pipe as a media upload: bounded memory, no DML, nothing billed.
//
// Commit: replace (and the first load of any mode) swaps the staging
// table in with a copy job WRITE_TRUNCATE (swap=dml: DELETE and INSERT …
// SELECT in one transaction instead) and then loads its state row;
// append and merge run one multi-statement transaction — INSERT … SELECT
// or MERGE, plus the state row — which is DML and needs billing. State
// lives in the dataset's _weir_state table (an append-only log; the
// highest version per destination table and source wins).
//
// BigQuery is not a source: the endpoint is a routes.Prober and a
// CursorSource (Probe and MaxCursor) so an append resumes from the rows a
// replace loaded; it has no Plan or Read.
// docs/bigquery.md has the details, the limits and what the emulator tests
// leave untested.
package bigquery
