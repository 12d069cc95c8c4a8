#!/usr/bin/env bash
# The quickstart DAG (examples/quickstart: bronze → silver with a contract →
# gold join + aggregate, on an embedded Iceberg lake) scaled up: an
# incremental cycle with 1% new rows vs a full recompute of the same DAG.
#   bench/medallion.sh [ROWS...]        (default: 5000000 20000000)
#   CYCLES=3 bench/medallion.sh 200000  (incremental cycles per size; the median is reported)
#
# Per size N:
#   full   `weir run --once` on an empty lake: bronze loads N orders, silver
#          types and checks all N, gold aggregates all of silver;
#   cycle  N/100 new orders arrive in the app table, then `weir run --once`:
#          bronze appends them, silver reads only that snapshot, gold reads
#          only silver's new snapshot, merges its aggregate into the stored
#          totals (the view this) and upserts the countries it touched.
# Prints both wall times, their ratio, each model's time in both (from the
# --json reports), and the peak RSS of each.
#
# Bronze reads from PostgreSQL here, not from the quickstart's CSV file: a
# file has no index, so an append from it rescans the whole file each cycle
# (O(table)); an indexed cursor reads only the new rows, as an app database
# would. Tables live in schema weir_bench_medallion (orders_<N> is kept and
# reused; the rows a run adds are deleted afterwards); the lake goes to
# $WORK (default bench/.bin/medallion) and is removed after each size.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
WORK=${WORK:-$PWD/$BIN/medallion}
CYCLES=${CYCLES:-3}
SIZES=("${@:-5000000 20000000}")
S=weir_bench_medallion
build_weir

make_source() { # ROWS: orders shaped like examples/quickstart/gen's (~1.5% break the contract)
	local n=$1 t=$S.orders_$1
	psql_q -c "CREATE SCHEMA IF NOT EXISTS $S" -c "CREATE TABLE IF NOT EXISTS $S.customers AS
	  SELECT g::int8 AS customer_id, 'customer ' || g AS name,
	         (ARRAY['FR','DE','US','JP','BR','IN','GB','ES'])[1 + (g * 7) % 8] AS country,
	         date '2022-01-01' + (g * 37) % 700 AS signed_up
	  FROM generate_series(1, 400) g" \
	  -c "DO \$\$ BEGIN ALTER TABLE $S.customers ADD PRIMARY KEY (customer_id); EXCEPTION WHEN invalid_table_definition THEN NULL; END \$\$"
	if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$t')")" = 1 ]; then return; fi
	echo "building $t ($n rows)..." >&2
	psql_q -c "CREATE UNLOGGED TABLE ${t}_tmp AS SELECT * FROM $S.order_rows(1, $n)" \
	  -c "ALTER TABLE ${t}_tmp SET LOGGED" -c "ALTER TABLE ${t}_tmp ADD PRIMARY KEY (order_id)" \
	  -c "ALTER TABLE ${t}_tmp RENAME TO orders_$n" -c "VACUUM ANALYZE $t"
}

define_rows() { # $S.order_rows(first, count): deterministic orders
	psql_q -c "CREATE SCHEMA IF NOT EXISTS $S" -c "CREATE OR REPLACE FUNCTION $S.order_rows(first int8, n int8)
	  RETURNS TABLE (order_id int8, customer_id int8, amount numeric(12,2), status text, ordered_at timestamp)
	  LANGUAGE sql AS \$\$
	  SELECT g, 1 + (g * 7919) % 400,
	         CASE g % 200 WHEN 1 THEN -(5 + (g * 31) % 400) WHEN 2 THEN 250000 ELSE 5 + (g * 31) % 400 + (g % 100) / 100.0 END,
	         CASE WHEN g % 200 = 0 THEN 'lost' ELSE (ARRAY['paid','paid','paid','paid','refunded','pending','Paid','PENDING'])[1 + (g * 13) % 8] END,
	         timestamp '2024-01-01' + g * interval '1 minute'
	  FROM generate_series(first, first + n - 1) g \$\$"
}

# dagfile N: the quickstart's DAG, bronze from the app table orders_N.
dagfile() {
	mkdir -p "$WORK"
	cp -r examples/quickstart/models examples/quickstart/contracts "$WORK/"
	cat >"$WORK/weir.yaml" <<EOF
version: 1
name: medallion_bench
connections:
  app: $PGURL
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze_orders:
    transfer: {from: app, table: $S.orders_$1, to: lake, dest_table: bronze.orders, mode: append}
  bronze_customers:
    transfer: {from: app, table: $S.customers, to: lake, dest_table: bronze.customers, mode: append}
  silver_orders:
    model: {source: lake:bronze.orders, sink: lake:silver.orders, mode: append, sql_file: models/silver_orders.sql}
    contract: contracts/silver_orders.yaml
  gold_revenue_by_country:
    model:
      sources: {o: lake:silver.orders, c: lake:bronze.customers}
      lookup: {c: customer_id}
      sink: lake:gold.revenue_by_country
      mode: upsert
      key: [country]
      sql_file: models/gold_revenue_by_country.sql
    contract: contracts/gold_revenue_by_country.yaml
EOF
}

# task_ms JSON TASK: a task's elapsed_ms in a run's JSON lines.
task_ms() { jq -r --arg t "$2" 'select(.task == $t) | .elapsed_ms' "$1"; }

# check JSON: every task of the run succeeded.
check() {
	if jq -e 'select(.error != null and .error != "")' "$1" >/dev/null; then
		echo "a task failed:" >&2; jq -c 'select(.error != null and .error != "")' "$1" >&2; exit 1
	fi
}

run_dag() { # NAME: one pass, timed; sets SECS CPU RSS_MB ANON_MB and JSON
	JSON=$BIN/medallion_$1.json
	# Flush what the previous run wrote (1.5 GB of Parquet after a full
	# run at 5M) so its writeback is not timed as part of this one.
	sync
	timed "medallion_$1" "$BIN/weir" run --once -f "$WORK/weir.yaml" --json >"$JSON"
	check "$JSON"
	# CPU seconds (user + system) of weir itself: on a shared machine the
	# wall time also counts the time weir waited for a core.
	CPU=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$BIN/medallion_$1.time")
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench_size() {
	local n=$1 delta=$(( $1 / 100 )) t=$S.orders_$1
	make_source "$n"
	rm -rf "$WORK" && dagfile "$n"
	echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg): full run of $n rows" >&2
	run_dag "full_$n"
	local full=$SECS full_cpu=$CPU full_rss=$RSS_MB full_anon=$ANON_MB
	local full_silver full_gold
	full_silver=$(task_ms "$JSON" silver_orders); full_gold=$(task_ms "$JSON" gold_revenue_by_country)
	local next=$(( n + 1 )) cycles=() cpus=() silvers=() golds=() rss=0 anon=0
	for ((c = 1; c <= CYCLES; c++)); do
		psql_q -c "INSERT INTO $t SELECT * FROM $S.order_rows($next, $delta)"
		next=$(( next + delta ))
		echo "$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg): cycle $c" >&2
		run_dag "cycle_${n}_$c"
		cycles+=("$SECS"); cpus+=("$CPU"); silvers+=("$(task_ms "$JSON" silver_orders)"); golds+=("$(task_ms "$JSON" gold_revenue_by_country)")
		[ "$(jq -r 'select(.task == "silver_orders") | .rows_in' "$JSON")" = "$delta" ] || { echo "cycle $c: silver did not read exactly $delta rows" >&2; exit 1; }
		rss=$(echo "$RSS_MB $rss" | awk '{print ($1 > $2) ? $1 : $2}'); anon=$(echo "$ANON_MB $anon" | awk '{print ($1 > $2) ? $1 : $2}')
	done
	psql_q -c "DELETE FROM $t WHERE order_id > $n" -c "VACUUM $t"
	local cycle cpu silver gold
	cycle=$(printf '%s\n' "${cycles[@]}" | median); cpu=$(printf '%s\n' "${cpus[@]}" | median); silver=$(printf '%s\n' "${silvers[@]}" | median); gold=$(printf '%s\n' "${golds[@]}" | median)
	printf '%-10s wall: full %7.1fs  cycle(1%%) %6.2fs  ratio %5.1fx | cpu: full %7.1fs  cycle %6.2fs  ratio %5.1fx | silver %6.2fs → %5.2fs (%5.1fx)  gold %5.2fs → %5.2fs | peak RSS full %6.1f MiB (own %6.1f), cycle %6.1f MiB (own %6.1f)\n' \
		"$n" "$full" "$cycle" "$(echo "$full / $cycle" | bc -l)" "$full_cpu" "$cpu" "$(echo "$full_cpu / $cpu" | bc -l)" \
		"$(echo "$full_silver / 1000" | bc -l)" "$(echo "$silver / 1000" | bc -l)" "$(echo "$full_silver / $silver" | bc -l)" \
		"$(echo "$full_gold / 1000" | bc -l)" "$(echo "$gold / 1000" | bc -l)" \
		"$full_rss" "$full_anon" "$rss" "$anon"
	rm -rf "$WORK"
}

define_rows
for n in ${SIZES[@]}; do bench_size "$n"; done
