#!/usr/bin/env bash
# PG → local Parquet: weir transfer into a file:// lake vs the raw binary
# COPY written to a file (the floor: bytes off the wire, no encoding), in
# the same run.
#   bench/pg_to_parquet.sh [ROWS...]        (default: 10000000 30000000)
# Prints, per size: both times and sizes, weir's speed as a ratio of the
# floor's, and weir's peak RSS (flat from 10M to 30M rows is the point).
# Source tables live in schema weir_bench and are shared with pg_to_pg.sh;
# the lake goes to $LAKE (default bench/.bin/lake) and is removed after
# each size.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
LAKE=${LAKE:-$PWD/$BIN/lake}
SIZES=("${@:-10000000 30000000}")
build_weir


# manifest_rows DIR: the row count a weir table's manifest declares.
manifest_rows() {
	sed -n 's/^  "rows": \([0-9]*\),$/\1/p' "$1/_weir_manifest.json"
}

bench_size() {
	local n=$1 src=weir_bench.src_$1
	make_pg_source "$n"
	rm -rf "$LAKE" && mkdir -p "$LAKE"
	timed floor_$n bash -c "psql '$PGURL' -qAtX -c 'COPY $src TO STDOUT (FORMAT binary)' > '$LAKE/floor.bin'"
	local floor=$SECS floor_mb; floor_mb=$(du -m "$LAKE/floor.bin" | cut -f1)
	rm -f "$LAKE/floor.bin"
	timed weir_$n "$BIN/weir" transfer "$PGURL" "file://$LAKE" --table "$src" --dest-table bench_parquet --json >"$BIN/weir_parquet_$n.json"
	local weir=$SECS mem; mem=$(mem_note)
	local got; got=$(manifest_rows "$LAKE/bench_parquet")
	[ "$got" = "$n" ] || { echo "the lake's manifest lists $got rows, want $n" >&2; exit 1; }
	local pq_mb; pq_mb=$(du -sm "$LAKE/bench_parquet" | cut -f1)
	printf '%-10s floor %7.1fs %6s MB  weir %7.1fs %6s MB parquet  ratio %.2f  %s\n' \
		"$n" "$floor" "$floor_mb" "$weir" "$pq_mb" "$(echo "$floor / $weir" | bc -l)" "$mem"
	rm -rf "$LAKE"
}

for n in ${SIZES[@]}; do print_load; bench_size "$n"; done
print_load
