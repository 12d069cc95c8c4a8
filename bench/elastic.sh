#!/usr/bin/env bash
# Elastic workers: one backlog copied by 1, 2 and 4 `weir worker` processes
# sharing a `weir backfill` plan (docs/workers.md), against one ordinary
# `weir once` run of the same task, in the same run.
#   bench/elastic.sh [ROWS]              (default: 2000000)
# Narrow it down with (defaults in brackets):
#   WORKERS="1 2 4"   [1 2 4]   worker counts to time
#   SHARDS=8          [8]       buckets the backfill cuts the backlog into
#   CLAIMS=sqlite|postgres  [sqlite]  the claim store
# Per case: wall time from the first worker's start to the last one's end,
# the CPU seconds (user + system) of all workers together, rows/s, and the
# sink checked against the source (count, distinct keys, sum of keys). The
# source is weir_bench.src_<ROWS> (make_pg_source, kept between runs); the
# sink lives in schema weir_bench_elastic, rebuilt for every case.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
N=${1:-2000000}
WORKERS=${WORKERS:-1 2 4}
SHARDS=${SHARDS:-8}
CLAIMS=${CLAIMS:-sqlite}
SINK=weir_bench_elastic
SRC=weir_bench.src_$N
DIR=$BIN/elastic
if [ -n "${WEIR_BIN:-}" ]; then W=$WEIR_BIN; else build_weir; W=$BIN/weir; fi

# reset: an empty sink schema, a fresh dagfile and claim store.
reset() {
	psql_q -c "DROP SCHEMA IF EXISTS $SINK CASCADE" -c "CREATE SCHEMA $SINK"
	rm -rf "$DIR" && mkdir -p "$DIR"
	cat >"$DIR/weir.yaml" <<EOF
version: 1
connections:
  pg: {url: "$PGURL"}
tasks:
  copy:
    transfer: {from: pg, table: $SRC, to: pg, dest_table: $SINK.out, mode: append}
EOF
	case $CLAIMS in
	sqlite) STORE="sqlite://$PWD/$DIR/claims.db" ;;
	postgres) STORE="$PGURL&schema=$SINK" ;;
	*) echo "CLAIMS=$CLAIMS: want sqlite or postgres" >&2; exit 2 ;;
	esac
}

# check: the sink holds every source row exactly once.
check() {
	local want got
	want=$(psql_q -c "SELECT count(*), count(DISTINCT id), sum(id) FROM $SRC")
	got=$(psql_q -c "SELECT count(*), count(DISTINCT id), sum(id) FROM $SINK.out")
	[ "$want" = "$got" ] || { echo "sink (count|distinct|sum) $got, source $want" >&2; exit 1; }
}

# report NAME WALL CPU SERVER_BEFORE: weir's figures, then the servers' CPU
# since SERVER_BEFORE (server_cpu): on 2 cores PostgreSQL's share bounds
# what more workers can gain.
report() {
	printf '%-12s %9d rows  wall %7.1fs  %9.0f rows/s  weir CPU %6.1fs (all workers)  %8.0f rows/CPU-s  %s\n' \
		"$1" "$N" "$2" "$(echo "$N / $2" | bc -l)" "$3" "$(echo "$N / $3" | bc -l)" "$(cpu_delta "$4" "$(server_cpu)")"
}

make_pg_source "$N"
print_load

# The reference: one ordinary run of the task (no plan, no claims).
reset
before=$(server_cpu)
timed once_$N "$W" once --task copy -f "$DIR/weir.yaml" >"$DIR/once.out" 2>&1
check
report "once" "$SECS" "$CPU_S" "$before"

for w in $WORKERS; do
	reset
	"$W" backfill --task copy --shards "$SHARDS" --claims "$STORE" -f "$DIR/weir.yaml" >"$DIR/plan.json"
	before=$(server_cpu)
	start=$(date +%s.%N)
	pids=()
	for ((i = 0; i < w; i++)); do
		/usr/bin/time -f '%U %S' -o "$DIR/worker_$i.time" \
			"$W" worker --task copy --claims "$STORE" -f "$DIR/weir.yaml" --wait >"$DIR/worker_$i.json" 2>"$DIR/worker_$i.log" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { echo "a worker failed: see $DIR/worker_*.log" >&2; exit 1; }
	done
	wall=$(echo "$(date +%s.%N) - $start" | bc -l)
	cpu=$(cat "$DIR"/worker_*.time | awk '{s += $1 + $2} END {printf "%.2f", s}')
	check
	report "$w worker(s)" "$wall" "$cpu" "$before"
done
print_load
psql_q -c "DROP SCHEMA IF EXISTS $SINK CASCADE"
