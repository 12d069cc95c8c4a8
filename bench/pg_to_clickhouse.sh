#!/usr/bin/env bash
# PG → ClickHouse: weir transfer (native protocol) vs the raw CSV pipe, in the same run.
#   bench/pg_to_clickhouse.sh [ROWS...]     (default: 10000000)
# The pipe is `psql -c "COPY (SELECT …) TO STDOUT (FORMAT csv)" | clickhouse-client
# --query "INSERT INTO … FORMAT CSV"`; its SELECT prints the boolean as 0/1 and
# the timestamptz as UTC wall time, which ClickHouse's CSV reader takes.
# Prints, per size: both times, weir's throughput as a ratio of the pipe's,
# and weir's peak RSS. The source is bench/pg_to_pg.sh's weir_bench.src_<N>
# (built here the same way when missing, and kept); the destinations
# (ClickHouse database weir_bench: pipe_dst, weir_dst) are dropped before each run.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
CHURL=${CHURL:-clickhouse://default@127.0.0.1:19000/weir_bench}
read -r -a CHARGS <<<"${CLICKHOUSE_ARGS:---host 127.0.0.1 --port 19000 --user default}"
export PGOPTIONS="-c client_min_messages=warning"
SIZES=("${@:-10000000}")
build_weir

ch_q() { clickhouse-client "${CHARGS[@]}" --query "$1"; }


bench_size() {
	local n=$1 src=weir_bench.src_$1
	make_pg_source "$n"
	local mb; mb=$(psql_q -c "SELECT pg_relation_size('$src') / 1048576")
	# The pipe's table has the types weir creates for these columns
	# (Nullable but for the key; ClickHouse 18.16 DateTime: whole seconds,
	# which is what the source holds).
	ch_q "CREATE DATABASE IF NOT EXISTS weir_bench"
	ch_q "DROP TABLE IF EXISTS weir_bench.pipe_dst"
	ch_q "DROP TABLE IF EXISTS weir_bench.weir_dst"
	ch_q "CREATE TABLE weir_bench.pipe_dst (id Int64, account Nullable(Int32), code Nullable(String),
	        label Nullable(String), amount Nullable(Decimal(14, 2)), flag Nullable(UInt8), score Nullable(Float64),
	        created_at Nullable(DateTime('UTC')), day Nullable(Date)) ENGINE = MergeTree ORDER BY id"
	psql_q -c "CHECKPOINT"
	local sel="SELECT id, account, code, label, amount, flag::int, score, created_at AT TIME ZONE 'UTC', day FROM $src"
	timed pg2ch_pipe_$n bash -o pipefail -c "psql '$PGURL' -qAtX -v ON_ERROR_STOP=1 -c \"COPY ($sel) TO STDOUT (FORMAT csv)\" | clickhouse-client ${CHARGS[*]} --query 'INSERT INTO weir_bench.pipe_dst FORMAT CSV'"
	local pipe=$SECS
	local got; got=$(ch_q "SELECT count() FROM weir_bench.pipe_dst")
	[ "$got" = "$n" ] || { echo "pipe_dst has $got rows, want $n" >&2; exit 1; }
	ch_q "DROP TABLE weir_bench.pipe_dst" # no background merges of it during weir's run
	timed pg2ch_weir_$n "$BIN/weir" transfer "$PGURL" "$CHURL" --table "$src" --dest-table weir_bench.weir_dst --json >"$BIN/pg2ch_weir_$n.json"
	local weir=$SECS mem; mem=$(mem_note)
	got=$(ch_q "SELECT count() FROM weir_bench.weir_dst")
	[ "$got" = "$n" ] || { echo "weir_dst has $got rows, want $n" >&2; exit 1; }
	printf '%-10s %8s MB  pipe %7.1fs  weir %7.1fs  ratio %.2f  %s\n' \
		"$n" "$mb" "$pipe" "$weir" "$(echo "$pipe / $weir" | bc -l)" "$mem"
}

for n in ${SIZES[@]}; do print_load; bench_size "$n"; done
print_load
