# shellcheck shell=bash
# scripts/env.sh — where the integration tests find their servers.
# Sourced by scripts/test.sh; developers can `source scripts/env.sh` and then run
# `go test` by hand. Values already set in the environment are kept.
# The servers themselves are the project's own instances, brought up by
# scripts/services.sh (not the machine's servers on 5432/3306).

export WEIR_TEST_PG="${WEIR_TEST_PG:-postgres://root@127.0.0.1:15432/test?sslmode=disable}"
export WEIR_TEST_MYSQL="${WEIR_TEST_MYSQL:-mysql://root@127.0.0.1:13306/test}"
export WEIR_TEST_CLICKHOUSE="${WEIR_TEST_CLICKHOUSE:-clickhouse://default@127.0.0.1:19000/default}"
export WEIR_TEST_CLICKHOUSE_HTTP="${WEIR_TEST_CLICKHOUSE_HTTP:-clickhouse+http://default@127.0.0.1:18123/default}"
# The BigQuery emulator: it has no copy jobs, so replace swaps by DML.
export WEIR_TEST_BIGQUERY="${WEIR_TEST_BIGQUERY:-bigquery://test-project/weir_test?endpoint=http://127.0.0.1:9050&swap=dml}"
# An SQS server speaking the JSON protocol (fauxqs, scripts/services.sh).
export WEIR_TEST_SQS="${WEIR_TEST_SQS:-http://127.0.0.1:19324}"
# etcd (Debian's etcd-server 3.4, scripts/services.sh), for the etcd:// claim store.
export WEIR_TEST_ETCD="${WEIR_TEST_ETCD:-etcd://127.0.0.1:12379}"

# No build tag is needed: duck calls DuckDB's C Arrow functions itself
# (docs/architecture.md). Models need cgo, Go's default with a C compiler.
