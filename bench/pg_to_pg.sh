#!/usr/bin/env bash
# PG → PG: weir transfer vs the raw binary COPY pipe, in the same run.
#   bench/pg_to_pg.sh [ROWS...]        (default: 10000000 30000000)
# Prints, per size: both times, weir's throughput as a ratio of the pipe's,
# and weir's peak RSS. Tables live in schema weir_bench and are kept between
# runs (a source of the wanted size is reused).
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
SIZES=("${@:-10000000 30000000}")
build_weir


bench_size() {
	local n=$1 src=weir_bench.src_$1
	make_pg_source "$n"
	local mb; mb=$(psql_q -c "SELECT pg_relation_size('$src') / 1048576")
	psql_q -c "DROP TABLE IF EXISTS weir_bench.pipe_dst, weir_bench.weir_dst" \
	       -c "CREATE TABLE weir_bench.pipe_dst (LIKE $src INCLUDING ALL)"
	psql_q -c "CHECKPOINT"
	timed pipe_$n bash -c "psql '$PGURL' -qAtX -c 'COPY $src TO STDOUT (FORMAT binary)' | psql '$PGURL' -qAtX -c 'COPY weir_bench.pipe_dst FROM STDIN (FORMAT binary)'"
	local pipe=$SECS
	psql_q -c "DROP TABLE weir_bench.pipe_dst" -c "CHECKPOINT"
	timed weir_$n "$BIN/weir" transfer "$PGURL" "$PGURL" --table "$src" --dest-table weir_bench.weir_dst --json >"$BIN/weir_$n.json"
	local weir=$SECS mem; mem=$(mem_note)
	local got; got=$(psql_q -c "SELECT count(*) FROM weir_bench.weir_dst")
	[ "$got" = "$n" ] || { echo "weir_dst has $got rows, want $n" >&2; exit 1; }
	printf '%-10s %8s MB  pipe %7.1fs  weir %7.1fs  ratio %.2f  %s\n' \
		"$n" "$mb" "$pipe" "$weir" "$(echo "$pipe / $weir" | bc -l)" "$mem"
}

for n in ${SIZES[@]}; do print_load; bench_size "$n"; done
print_load
