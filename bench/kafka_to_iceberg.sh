#!/usr/bin/env bash
# Stream ingest: EVENTS JSON events (~200 bytes, 8 fields) from a Kafka topic
# (an in-process kfake broker, bench/kafkafeed, 4 partitions) landed by a
# `stream:` task with trigger available_now into a local Iceberg table (SQLite
# catalog, file warehouse) and into PostgreSQL, append and merge on id, no
# contract (schema inference). Prints events/s and weir's peak RSS / own memory
# for each (the broker is a separate process, not counted).
#   bench/kafka_to_iceberg.sh [EVENTS] [BATCH_SIZE]   (default: 1000000 50000)
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
EVENTS=${1:-1000000}
BATCH=${2:-50000}
PORT=${PORT:-19092}
WORK=${WORK:-$PWD/$BIN/kafka_to_iceberg}
S=weir_bench_stream
build_weir
go build -o "$BIN/kafkafeed" ./bench/kafkafeed

rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN/kafkafeed" -port "$PORT" -events "$EVENTS" > "$WORK/feed.out" 2>&1 &
FEED=$!
trap 'kill $FEED 2>/dev/null || true; wait $FEED 2>/dev/null || true' EXIT
until grep -q ready "$WORK/feed.out"; do
	kill -0 $FEED 2>/dev/null || { cat "$WORK/feed.out"; exit 1; }
	sleep 0.2
done
psql_q -c "DROP SCHEMA IF EXISTS $S CASCADE" -c "CREATE SCHEMA $S"
cat > "$WORK/weir.yaml" <<YAML
version: 1
connections:
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
  pg: $PGURL
tasks:
YAML
for dst in lake:raw pg:$S; do
	name=${dst%%:*}
	cat >> "$WORK/weir.yaml" <<YAML
  ${name}_append:
    stream: {source: "kafka://127.0.0.1:$PORT/events?group=bench_${name}_append", sink: $dst.ev_append, batch_size: $BATCH, batch_interval: 2s}
  ${name}_merge:
    stream: {source: "kafka://127.0.0.1:$PORT/events?group=bench_${name}_merge", sink: $dst.ev_merge, batch_size: $BATCH, batch_interval: 2s, materialization: merge, key: [id]}
YAML
done

echo "events=$EVENTS batch_size=$BATCH load=$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %10s %10s %12s %8s %14s %10s %10s\n' task events secs events/s cpu_s events/cpu_s rss_mb own_mb
for task in lake_append lake_merge pg_append pg_merge; do
	timed "$task" "$BIN/weir" once -f "$WORK/weir.yaml" --task "$task" --json > "$WORK/$task.json"
	rows=$(sed -n 's/.*"rows_in":\([0-9]*\).*/\1/p' "$WORK/$task.json")
	# the last batch_interval (2 s) is the idle wait that ends an available_now run
	# CPU seconds (user + system): on a loaded machine events/cpu_s says more than events/s
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$BIN/$task.time")
	printf '%-14s %10s %10.1f %12.0f %8.1f %14.0f %10s %10s\n' "$task" "$rows" "$SECS" "$(echo "$rows / $SECS" | bc -l)" \
		"$cpu" "$(echo "$rows / $cpu" | bc -l)" "$RSS_MB" "$ANON_MB"
done
psql_q -c "DROP SCHEMA $S CASCADE"
