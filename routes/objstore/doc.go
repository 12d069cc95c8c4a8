// Package objstore is weir's route for object stores and local files:
// s3:// (any S3-compatible endpoint), gcs:// and file:// (or a bare path);
// and, as a source only, github:// (github.go: the CSV files of a GitHub
// repository at one commit, read through a store over the REST API;
// docs/routes-api.md).
//
// As a destination it writes Parquet (zstd, default) or CSV.gz files into a
// run's staging folder next to the table's, moves them into the table's
// folder at commit, and publishes them by writing the table's manifest last:
//
//	<prefix>/<table>/_weir_manifest.json          the table: format, schema, files, state
//	<prefix>/<table>/_weir_lock.json              the lease of the run writing it
//	<prefix>/<table>/part-<runid>-<pipe>-<n>.parquet
//	<prefix>/_weir_staging/<table>/<runid>/part-…  a run's files before it publishes
//
// So a plain glob of the table's folder reads the committed table (no run=
// folders for Hive discovery to turn into a column). Readers that follow
// the manifest never see a file of an unfinished, failed or killed run;
// replace deletes old runs' files only after the new manifest is in place;
// append lists the previous files plus the new run's. Tables written in the
// layout before staging (<table>/run=<runid>/…) are read and appended to as
// they are; their next replace lays them out flat.
// The manifest is also the state store (routes.StateReader). Runs exclude
// each other with a lease object created with a conditional write (S3
// If-None-Match, GCS DoesNotExist, O_EXCL-like flock for files) and
// refreshed while the stage lives; the manifest itself is written with a
// compare-and-swap on the version read at Prepare, so a run that lost its
// lease can never overwrite a newer table. docs/objstore.md has the details
// and the limits.
//
// As a source, a table name is a path under the URL's prefix: a weir table
// (read through its manifest), a .parquet / .csv / .csv.gz file, or a folder
// of them. CSV types are inferred (see InferRows).
//
// The URL's query parameters: format (parquet, csv.gz, csv), endpoint and
// region (S3; endpoint also for a GCS emulator), path_style, lease,
// file_bytes, part_bytes, row_group_bytes. S3 credentials come from the
// URL's user:password or the AWS SDK's default chain; GCS from Application
// Default Credentials.
//
// Subpackage where holds the filter language weir.Read uses.
package objstore
