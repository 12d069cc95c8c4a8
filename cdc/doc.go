// Package cdc holds what every change-capture source shares: the change
// model (Change, Op, Table), the fold of one run's changes into a Window
// (last write wins per key, TRUNCATE as a barrier), and the Applier
// capability a destination implements to apply a Window set-based, in one
// transaction that also advances the saved position.
//
// Capture itself lives in the subpackages: cdc/pgwal (PostgreSQL logical
// replication, pgoutput) and cdc/binlog (MySQL/MariaDB ROW binlog);
// cdc/capture picks one by the source URL's scheme. A run is batch CDC: connect, drain from the saved
// position to the end of the log as of connecting, fold, apply, confirm.
package cdc
