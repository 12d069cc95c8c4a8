#!/usr/bin/env bash
# PG → local Parquet: weir transfer into a file:// lake vs the raw binary
# COPY written to a file (the floor: bytes off the wire, no encoding), and
# the peer tools when bench/peers.sh built them, alternating in one run.
#   bench/pg_to_parquet.sh [SOURCE...]
# SOURCE is ROWS (the synthetic weir_bench.src_ROWS of lib.sh),
# pgbench:SCALE (pgbench_accounts, SCALE × 100,000 rows) or lineitem:SF
# (TPC-H lineitem; SF 1 is 6M rows). Default: pgbench:100 lineitem:1.
# RUNS (default 3) alternating runs of each tool; the figures are the
# minima of wall seconds and of the tool's own CPU-seconds (user + system,
# /usr/bin/time), weir's private memory the largest. Every output is
# checked against the source: row count and per-column checksums (sum of
# the key, of a decimal in cents, of a text's lengths) read back with
# weir read. COMPRESSION=... adds compression= to weir's URL.
# Source tables are shared with the other scripts; the lake goes to $LAKE
# (default bench/.bin/lake) and is removed after each source.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
LAKE=${LAKE:-$PWD/$BIN/lake}
RUNS=${RUNS:-3}
SOURCES=("${@:-pgbench:100 lineitem:1}")
build_weir
WEIR_URL="file://$LAKE${COMPRESSION:+?compression=$COMPRESSION}"

# source_of SOURCE: sets TABLE and CHECK (the checksum columns: key,
# decimal, text), building the source when missing.
source_of() {
	case $1 in
	pgbench:*) make_pgbench_source "${1#pgbench:}"; TABLE=weir_bench_pgbench_${1#pgbench:}.pgbench_accounts; CHECK=(aid abalance "") ;;
	lineitem:*) make_lineitem_source "${1#lineitem:}"; TABLE=weir_bench.lineitem_sf$(echo "${1#lineitem:}" | tr . _); CHECK=(l_orderkey l_extendedprice l_comment) ;;
	*) make_pg_source "$1"; TABLE=weir_bench.src_$1; CHECK=(id amount code) ;;
	esac
}

# pg_checksum: "rows keysum centsum textlen" of the source table.
pg_checksum() {
	local t="0"; [ -n "${CHECK[2]}" ] && t="coalesce(sum(length(${CHECK[2]})), 0)"
	psql_q -F' ' -c "SELECT count(*), sum(${CHECK[0]}), sum((${CHECK[1]} * 100)::int8), $t FROM $TABLE"
}

# file_checksum URL TABLE: the same four figures, read back with weir read.
file_checksum() {
	local cols=${CHECK[0]},${CHECK[1]}; [ -n "${CHECK[2]}" ] && cols=$cols,${CHECK[2]}
	"$BIN/weir" read "$1" --table "$2" --columns "$cols" --to - | python3 -c '
import csv, sys
from decimal import Decimal
r = csv.reader(sys.stdin); next(r)
n = k = c = t = 0
for row in r:
    n += 1; k += int(row[0]); c += int(Decimal(row[1]) * 100)
    if len(row) > 2: t += len(row[2])
print(n, k, c, t)'
}

declare -A WALL CPU MEM
record() { # TOOL: keep the minima of this run's SECS and CPU_S
	local k=$1
	if [ -z "${WALL[$k]:-}" ] || [ "$(echo "$SECS < ${WALL[$k]}" | bc -l)" = 1 ]; then WALL[$k]=$SECS; fi
	if [ -z "${CPU[$k]:-}" ] || [ "$(echo "$CPU_S < ${CPU[$k]}" | bc -l)" = 1 ]; then CPU[$k]=$CPU_S; fi
	if [ "$k" = weir ] && { [ -z "${MEM[$k]:-}" ] || [ "$(echo "$ANON_MB > ${MEM[$k]}" | bc -l)" = 1 ]; }; then MEM[$k]=$ANON_MB; fi
}

check() { # TOOL URL TABLE: the tool's output holds the source's rows
	local got; got=$(file_checksum "$2" "$3")
	[ "$got" = "$WANT" ] || { echo "$1: output checksum $got, source $WANT" >&2; exit 1; }
}

bench_source() {
	source_of "$1"
	WALL=() CPU=() MEM=()
	WANT=$(pg_checksum)
	local sling ingestr; sling=$(peer_bin sling); ingestr=$(peer_bin ingestr)
	for r in $(seq "$RUNS"); do
		rm -rf "$LAKE" && mkdir -p "$LAKE"
		timed floor bash -c "psql '$PGURL' -qAtX -c 'COPY $TABLE TO STDOUT (FORMAT binary)' > '$LAKE/floor.bin'"
		record floor; rm -f "$LAKE/floor.bin"
		timed weir "$BIN/weir" transfer "$PGURL" "$WEIR_URL" --table "$TABLE" --dest-table bench_parquet --json >"$BIN/weir_parquet.json"
		record weir
		[ "$r" = 1 ] && check weir "file://$LAKE" bench_parquet
		PQ_MB=$(du -sm "$LAKE/bench_parquet" | cut -f1)
		rm -rf "$LAKE/bench_parquet"
		if [ -n "$sling" ]; then
			timed sling "$sling" run --src-conn "$PGURL" --src-stream "$TABLE" --tgt-object "file://$LAKE/sling.parquet"
			record sling
			[ "$r" = 1 ] && check sling "file://$LAKE" sling.parquet
			rm -f "$LAKE/sling.parquet"
		fi
		if [ -n "$ingestr" ]; then
			timed ingestr "$ingestr" ingest --source-uri "$PGURL" --source-table "$TABLE" --dest-uri "file://$LAKE/ingestr.parquet" --dest-table ingestr
			record ingestr
			[ "$r" = 1 ] && check ingestr "file://$LAKE" ingestr.parquet
			rm -f "$LAKE/ingestr.parquet"
		fi
	done
	local line
	line=$(printf '%-12s rows %s  floor %6.1fs/%5.1f  weir %6.1fs/%5.1f (%s MB, private %s MiB)' "$1" "${WANT%% *}" \
		"${WALL[floor]}" "${CPU[floor]}" "${WALL[weir]}" "${CPU[weir]}" "$PQ_MB" "${MEM[weir]}")
	for p in sling ingestr; do
		[ -n "${WALL[$p]:-}" ] && line+=$(printf '  %s %6.1fs/%5.1f' "$p" "${WALL[$p]}" "${CPU[$p]}")
	done
	echo "$line  weir/floor wall $(printf %.2f "$(echo "${WALL[weir]} / ${WALL[floor]}" | bc -l)")"
	rm -rf "$LAKE"
}

for s in ${SOURCES[@]}; do print_load; bench_source "$s"; done
print_load
