// Package clickhouse is weir's ClickHouse route, as a source and a
// destination, over the native protocol (ch-go) or HTTP.
//
// URLs: clickhouse://user:pass@host:9000/db for the native protocol (LZ4),
// clickhouse+http://host:8123/db and clickhouse+https://… for endpoints that
// only expose HTTP. Options ride on the query string (see Options): engine,
// order_by, on_cluster, max_body_bytes, lease, http_port, subseconds.
//
// The native protocol revision is negotiated: ch-go speaks the newest one,
// which servers older than revision 54420 (ClickHouse 18.x/19.x) misread, so
// weir dials once, reads the server's revision from its hello, and redials
// those servers with protocol 54031.
//
// Writing encodes Arrow columns straight into ClickHouse Native columns (one
// block per record batch; no per-row boxing) into a staging table
// _weir_stage_<table>_<run>, one INSERT per pipe, and commits by swapping it
// in (EXCHANGE TABLES on Atomic databases, else one multi-table RENAME), or
// by attaching its partitions (append, merge). Over HTTP the same rows go as
// gzip'd RowBinary bodies, split at max_body_bytes.
//
// ClickHouse has no transactions and no advisory locks, so a run holds a
// lease: a table _weir_lock_<table> whose CREATE is the compare-and-swap and
// whose rows carry the run id and a heartbeat; see lock.go and
// docs/routes-clickhouse.md for the race windows.
//
// Reading decodes Native blocks into Arrow builders, in parallel ranges of
// the first sorting-key column or cityHash64 buckets. Between two ClickHouse
// servers the Native bytes are relayed untouched over HTTP
// (SELECT … FORMAT Native into INSERT … FORMAT Native).
package clickhouse
