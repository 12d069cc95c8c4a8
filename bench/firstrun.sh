#!/usr/bin/env bash
# A model's first run over one big Iceberg snapshot, in bounded memory:
# N orders are copied from PostgreSQL into a lake table in one commit
# (bronze, not measured), then `weir once --task silver` runs a row-wise model
# over it with no max_batch_rows (the default from the memory budget,
# docs/runner.md "Memory": 1 GiB → 1,743,087 rows a batch for these
# 77-byte rows) and its peak private memory is sampled.
#   bench/firstrun.sh [ROWS...]     (default: 5000000 20000000)
# Prints per size: batches, wall and CPU seconds, weir's peak private
# memory (RssAnon) and peak RSS. Tables live in schema weir_bench_firstrun
# (orders_<N> kept and reused); the lake goes to $WORK (default
# bench/.bin/firstrun) and is removed after each size.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
WORK=${WORK:-$PWD/$BIN/firstrun}
SIZES=("${@:-5000000 20000000}")
S=weir_bench_firstrun
build_weir

make_source() { # ROWS
	local n=$1 t=$S.orders_$1
	psql_q -c "CREATE SCHEMA IF NOT EXISTS $S"
	if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$t')")" = 1 ]; then return; fi
	echo "building $t ($n rows)..." >&2
	psql_q -c "DROP TABLE IF EXISTS ${t}_tmp" -c "CREATE UNLOGGED TABLE ${t}_tmp AS
	  SELECT g::int8 AS order_id, 1 + (g * 7919) % 400 AS customer_id,
	         (5 + (g * 31) % 400 + (g % 100) / 100.0)::numeric(12,2) AS amount,
	         (ARRAY['paid','refunded','pending','Paid'])[1 + (g * 13) % 4] AS status,
	         timestamp '2024-01-01' + g * interval '1 minute' AS ordered_at
	  FROM generate_series(1::int8, $n) g" \
	  -c "ALTER TABLE ${t}_tmp SET LOGGED" -c "ALTER TABLE ${t}_tmp ADD PRIMARY KEY (order_id)" \
	  -c "ALTER TABLE ${t}_tmp RENAME TO orders_$n" -c "VACUUM ANALYZE $t"
}

dagfile() { # ROWS
	mkdir -p "$WORK"
	cat >"$WORK/weir.yaml" <<YAML
version: 1
connections:
  app: $PGURL
  lake: iceberg://?catalog=sql&uri=sqlite://./lake/catalog.db&warehouse=file://./lake
tasks:
  bronze:
    transfer: {from: app, table: $S.orders_$1, to: lake, dest_table: bronze.orders, mode: append}
  silver:
    model:
      source: lake:bronze.orders
      sink: lake:silver.orders
      mode: append
      sql: SELECT order_id, customer_id, amount, lower(status) AS status, ordered_at FROM input WHERE amount > 0
YAML
}

for n in ${SIZES[@]}; do
	make_source "$n"
	rm -rf "$WORK" && dagfile "$n"
	"$BIN/weir" once --task bronze -f "$WORK/weir.yaml" --json >/dev/null
	sync
	print_load
	timed "firstrun_$n" "$BIN/weir" once --task silver -f "$WORK/weir.yaml" --json >"$BIN/firstrun_$n.json"
	printf '%9d rows: %s batches, %6.1f s wall, %6.1f CPU-s, %s\n' "$n" \
		"$(jq -r .batches "$BIN/firstrun_$n.json")" "$SECS" "$CPU_S" "$(mem_note)"
	print_load
	rm -rf "$WORK"
done
