#!/usr/bin/env bash
# weir's models vs DuckDB alone running the same SQL over the same data, in
# one run (issue 20, "Speed"). The DAG is shaped like leat's: 2 bronze
# (orders, customers from PostgreSQL into an embedded Iceberg lake) →
# 2 silver (silver.orders: the quickstart's model and contract;
# silver.customers: typed) → 1 gold join + aggregate (the quickstart's gold,
# reading both silvers). The quickstart DAG of bench/medallion.sh is the
# same minus silver.customers (gold reads bronze.customers there).
#   bench/medallion_duckdb.sh [ROWS]          (default 2000000)
#   RUNS=3 bench/medallion_duckdb.sh 2000000  (runs, weir and DuckDB alternating which goes first)
#
# Per run, after the bronze tasks loaded ROWS orders (not timed; the
# loaded lake is kept and restored for the next run):
#   backfill  weir: `weir run --once` of the three model tasks on an empty
#             silver/gold; DuckDB: bench/duckalone runs the same model SQL
#             over the bronze data files (read_parquet), the silver
#             contract's rules as one CASE (good rows and bad rows each to
#             a zstd Parquet file, as weir writes them), gold's SQL with
#             `this` empty;
#   cycle     ROWS/100 new orders arrive in the app table, bronze appends
#             them (not timed); weir: the three models again (silver reads
#             only that snapshot, gold only silver's new rows, merged with
#             `this`); DuckDB: the same SQL over bronze's new data files
#             only, gold over its own new silver rows with `this` = its
#             previous gold.
# Printed: CPU-seconds (user + system) of each process, their ratio
# weir/DuckDB, the load average; minima over the runs. Both gold tables
# are compared at the end of each run (weir read vs DuckDB's file).
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
WORK=${WORK:-$PWD/$BIN/medallion_duckdb}
RUNS=${RUNS:-3}
N=${1:-2000000}
S=weir_bench_medallion
build_weir
go build -o "$BIN/duckalone" ./bench/duckalone
eval "$(sed -n '/^make_source()/,/^}/p;/^define_rows()/,/^}/p' "$(dirname "$0")/medallion.sh")"

dagfile() { # the leat-shaped DAG over orders_N
	mkdir -p "$WORK"
	cp -r examples/quickstart/models examples/quickstart/contracts "$WORK/"
	cat >"$WORK/models/silver_customers.sql" <<'SQL'
SELECT customer_id, trim(name) AS name, upper(country) AS country, CAST(signed_up AS DATE) AS signed_up
FROM input
SQL
	cat >"$WORK/weir.yaml" <<YAML
version: 1
name: medallion_duckdb_bench
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
  silver_customers:
    model: {source: lake:bronze.customers, sink: lake:silver.customers, mode: append, sql_file: models/silver_customers.sql}
  gold_revenue_by_country:
    model:
      sources: {o: lake:silver.orders, c: lake:silver.customers}
      lookup: {c: customer_id}
      sink: lake:gold.revenue_by_country
      mode: upsert
      key: [country]
      sql_file: models/gold_revenue_by_country.sql
    contract: contracts/gold_revenue_by_country.yaml
YAML
}

MODELS=(--task silver_orders --task silver_customers --task gold_revenue_by_country)

weir_models() { # K: the three models in one weir process, timed; sets CPU_S
	sync
	timed "md_weir_$1" "$BIN/weir" run --once -f "$WORK/weir.yaml" "${MODELS[@]}" --json >"$BIN/md_weir_$1.json"
	if jq -e 'select(.error != null and .error != "")' "$BIN/md_weir_$1.json" >/dev/null; then
		echo "a task failed:" >&2; cat "$BIN/md_weir_$1.json" >&2; exit 1
	fi
}

# files LIST: a DuckDB list literal of the paths in LIST (one a line).
files() { awk 'BEGIN {printf "["} {printf "%s'\''%s'\''", (NR > 1 ? ", " : ""), $0} END {printf "]"}' "$1"; }

# duck_sql K BRONZE_ORDERS BRONZE_CUSTOMERS: DuckDB's own job for step K
# (0: backfill), reading the listed bronze files.
duck_sql() {
	local k=$1 d=$WORK/duck this
	if [ "$k" = 0 ]; then
		this="SELECT CAST(NULL AS VARCHAR) AS country, CAST(NULL AS BIGINT) AS orders, CAST(NULL AS DECIMAL(38,2)) AS revenue, CAST(NULL AS DECIMAL(12,2)) AS average_order, CAST(NULL AS TIMESTAMP) AS first_order, CAST(NULL AS TIMESTAMP) AS last_order WHERE false"
	else
		this="SELECT * FROM read_parquet('$d/gold_$((k - 1)).parquet')"
	fi
	cat <<SQL
CREATE VIEW input AS SELECT * FROM read_parquet($(files "$2"));
CREATE TEMP TABLE s AS SELECT *, CASE
  WHEN order_id IS NULL OR customer_id IS NULL OR amount IS NULL OR ordered_at IS NULL THEN 'required'
  WHEN count(*) OVER (PARTITION BY order_id) > 1 THEN 'unique(order_id)'
  WHEN status NOT IN ('paid', 'refunded', 'pending') THEN 'accepted_values(status)'
  WHEN amount < 0 OR amount > 10000 THEN 'range(amount)' END AS _reason
FROM ($(cat "$WORK/models/silver_orders.sql"));
COPY (SELECT * EXCLUDE (_reason) FROM s WHERE _reason IS NULL) TO '$d/silver_orders_$k.parquet' (FORMAT parquet, COMPRESSION zstd);
COPY (SELECT * FROM s WHERE _reason IS NOT NULL) TO '$d/silver_orders_q_$k.parquet' (FORMAT parquet, COMPRESSION zstd);
DROP VIEW input;
SQL
	if [ -s "$3" ]; then cat <<SQL
CREATE VIEW input AS SELECT * FROM read_parquet($(files "$3"));
COPY ($(cat "$WORK/models/silver_customers.sql")) TO '$d/silver_customers_$k.parquet' (FORMAT parquet, COMPRESSION zstd);
DROP VIEW input;
SQL
	fi
	cat <<SQL
CREATE VIEW o AS SELECT * FROM read_parquet('$d/silver_orders_$k.parquet');
CREATE VIEW c AS SELECT * FROM read_parquet('$d/silver_customers_*.parquet');
CREATE VIEW this AS $this;
COPY ($(grep -v '^--' "$WORK/models/gold_revenue_by_country.sql")) TO '$d/gold_$k.parquet' (FORMAT parquet, COMPRESSION zstd);
SQL
}

duck_models() { # K: DuckDB's own job, timed; sets CPU_S
	mkdir -p "$WORK/duck"
	duck_sql "$1" "$WORK/new_orders" "$WORK/new_customers" >"$WORK/duck_$1.sql"
	sync
	timed "md_duck_$1" "$BIN/duckalone" "$WORK/duck_$1.sql"
}

# new_files TABLE: the data files of bronze TABLE not listed before (into $WORK/new_TABLE).
new_files() {
	find "$WORK/lake" -path "*bronze*$1*" -name '*.parquet' | sort >"$WORK/all_$1.now"
	touch "$WORK/all_$1"
	comm -13 "$WORK/all_$1" "$WORK/all_$1.now" >"$WORK/new_$1"
	mv "$WORK/all_$1.now" "$WORK/all_$1"
}

# gold_check K: weir's gold table equals DuckDB's gold_K (as CSV, sorted).
gold_check() {
	"$BIN/weir" read lake --table gold.revenue_by_country --to - -f "$WORK/weir.yaml" | tail -n +2 | tr -d '\r' | sort >"$WORK/gold_weir.csv"
	printf "COPY (SELECT * FROM read_parquet('%s')) TO '%s' (HEADER false);\n" "$WORK/duck/gold_$1.parquet" "$WORK/gold_duck_raw.csv" >"$WORK/gold.sql"
	"$BIN/duckalone" "$WORK/gold.sql" && sort "$WORK/gold_duck_raw.csv" >"$WORK/gold_duck.csv"
	if ! cmp -s "$WORK/gold_weir.csv" "$WORK/gold_duck.csv"; then
		echo "gold differs after step $1:" >&2; diff "$WORK/gold_weir.csv" "$WORK/gold_duck.csv" >&2 || true; exit 1
	fi
}

define_rows
make_source "$N"
rm -rf "$WORK" "$WORK.bronze"
dagfile "$N"
"$BIN/weir" run --once -f "$WORK/weir.yaml" --task bronze_orders --task bronze_customers >/dev/null
cp -a "$WORK" "$WORK.bronze"
print_load
results=()
for ((r = 1; r <= RUNS; r++)); do
	rm -rf "$WORK" && cp -a "$WORK.bronze" "$WORK"
	rm -f "$WORK/all_orders" "$WORK/all_customers"
	new_files orders; new_files customers
	line=""
	for step in 0 1; do
		if [ "$step" = 1 ]; then
			psql_q -c "INSERT INTO $S.orders_$N SELECT * FROM $S.order_rows($((N + 1)), $((N / 100)))"
			"$BIN/weir" once -f "$WORK/weir.yaml" --task bronze_orders >/dev/null
			new_files orders; new_files customers
		fi
		load=$(cut -d' ' -f1 /proc/loadavg)
		if (( r % 2 )); then
			weir_models "$step"; w=$CPU_S
			duck_models "$step"; d=$CPU_S
		else
			duck_models "$step"; d=$CPU_S
			weir_models "$step"; w=$CPU_S
		fi
		gold_check "$step"
		line+=$(printf '%s weir %6.2f CPU-s  DuckDB %6.2f CPU-s  ratio %4.2fx  (load %s)   ' \
			"$([ "$step" = 0 ] && echo backfill || echo "cycle(1%)")" "$w" "$d" "$(echo "$w / $d" | bc -l)" "$load")
	done
	psql_q -c "DELETE FROM $S.orders_$N WHERE order_id > $N"
	echo "run $r ($( (( r % 2 )) && echo 'weir first' || echo 'DuckDB first')): $line"
done
print_load
rm -rf "$WORK" "$WORK.bronze"
