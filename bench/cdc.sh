#!/usr/bin/env bash
# Batch CDC: changes/s of one log_based run that drains CHANGES changes of
# one table, for each capture (PostgreSQL WAL, MariaDB binlog) × destination
# × width × mix.
#   bench/cdc.sh [CHANGES]        (default: 1000000)
# Narrow it down with (defaults in brackets):
#   CAPTURES="pg binlog"                        [pg binlog]
#   DEST="postgres mysql clickhouse iceberg"    [postgres mysql clickhouse iceberg]
#   WIDTHS="5 15"                               [5 15]  (bigint key, then alternating int and md5 text)
#   MIXES="insert update mixed"                 [insert update]
#     insert  insert-heavy: 80 % new rows, 20 % updates of existing rows
#     update  update-only: every change updates one existing row
#     mixed   40 % inserts, 40 % updates, 20 % deletes (the older figures)
#   WEIR_BIN=bench/.bin/weir.base  times that binary (a before/after pair in one session)
#   PROFILE=1  writes weir's CPU profile of each timed run to bench/.bin/<case>.pprof
#   BENCH_DB=weir_bench_cdc  the schema/database names, so that two worktrees can bench at once
# Per case: the drain run's wall time, changes/s, CPU seconds (user + system)
# and changes per CPU-second, and weir's peak RSS (total and its own anonymous
# memory); then the destination's count and sum(c1) are checked against the
# source's. Everything lives in schema/database weir_bench_cdc (and _dst);
# every replication slot and publication the bench makes is dropped at the
# end, also when a case fails (trap), and the binlogs expire on the test
# server (scripts/services.sh).
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
MYURL=${MYURL:-mysql://root@127.0.0.1:13306/test}
CHURL=${CHURL:-clickhouse://default@127.0.0.1:19000/default}
CHARGS=(--host 127.0.0.1 --port "${CHPORT:-19000}")
export PGOPTIONS="-c client_min_messages=warning"
N=${1:-1000000}
DB=${BENCH_DB:-weir_bench_cdc}
LAKE=$PWD/$BIN/cdc_lake
SLOTS=$BIN/cdc_slots # the slots (and publications: same name) this bench made
# WEIR_BIN=path runs that binary instead of building one (before/after).
if [ -n "${WEIR_BIN:-}" ]; then W=$WEIR_BIN; else build_weir; W=$BIN/weir; fi

my_q() { mariadb -h127.0.0.1 -P13306 -uroot -N -B "$@"; } # the test instance (scripts/services.sh)
ch_q() { clickhouse-client "${CHARGS[@]}" --query "$1"; }

# cols_ddl WIDTH: the columns after id, alternating int and text.
cols_ddl() {
	local w=$1 out=""
	for ((i = 1; i < w; i++)); do
		if ((i % 2)); then out+=", c$i int"; else out+=", c$i varchar(40)"; fi
	done
	echo "$out"
}
cols_val() { # cols_val WIDTH EXPR: values from the integer expression EXPR
	local w=$1 g=$2 out=""
	for ((i = 1; i < w; i++)); do
		if ((i % 2)); then out+=", ($g) % 100000 + $i"; else out+=", md5(concat($g, '-$i'))"; fi
	done
	echo "$out"
}
# upd_set WIDTH: an update of every column after id (a whole-row change).
upd_set() {
	local w=$1 out="c1 = c1 + 1"
	for ((i = 2; i < w; i++)); do
		if ((i % 2)); then out+=", c$i = c$i + 1"; else out+=", c$i = md5(c$i)"; fi
	done
	echo "$out"
}

# base_rows MIX: the rows the table starts with.
base_rows() { if [ "$1" = update ]; then echo "$N"; else echo $((N / 2)); fi; }

# change_sql MIX WIDTH TABLE SERIES: the statements that make N changes
# (SERIES LO HI is the dialect's row generator expression).
change_sql() {
	local mix=$1 w=$2 t=$3 base; base=$(base_rows "$1")
	case $mix in
	insert) echo "INSERT INTO $t SELECT g $(cols_val "$w" g) FROM $($4 $((base + 1)) $((base + N * 4 / 5)));
		UPDATE $t SET $(upd_set "$w") WHERE id <= $((N / 5));" ;;
	update) echo "UPDATE $t SET $(upd_set "$w") WHERE id <= $N;" ;;
	mixed) echo "INSERT INTO $t SELECT g $(cols_val "$w" g) FROM $($4 $((base + 1)) $((base + N * 2 / 5)));
		UPDATE $t SET c1 = c1 + 1 WHERE id <= $((N * 2 / 5));
		DELETE FROM $t WHERE id > $((N * 2 / 5)) AND id <= $((N * 3 / 5));" ;;
	*) echo "unknown mix $mix" >&2; exit 2 ;;
	esac
}
pg_series() { echo "generate_series($1, $2) g"; }
my_series() { echo "(SELECT seq AS g FROM seq_$1_to_$2) s"; }

# dest_url DEST CAPTURE: where the case's replica goes.
dest_url() {
	case $1 in
	postgres) echo "$PGURL" ;;
	mysql) echo "$MYURL" ;;
	clickhouse) echo "$CHURL" ;;
	iceberg) echo "iceberg://?catalog=sql&uri=sqlite://$LAKE/catalog.db&warehouse=file://$LAKE/warehouse" ;;
	*) echo "unknown destination $1" >&2; exit 2 ;;
	esac
}

# reset_dest DEST: an empty destination schema.
reset_dest() {
	case $1 in
	postgres) psql_q -c "DROP SCHEMA IF EXISTS ${DB}_dst CASCADE" -c "CREATE SCHEMA ${DB}_dst" ;;
	mysql) my_q -e "DROP DATABASE IF EXISTS ${DB}_dst; CREATE DATABASE ${DB}_dst" ;;
	clickhouse) ch_q "DROP DATABASE IF EXISTS ${DB}_dst" && ch_q "CREATE DATABASE ${DB}_dst" ;;
	iceberg) rm -rf "$LAKE" && mkdir -p "$LAKE/warehouse" ;;
	esac
}

drop_dest() {
	case $1 in
	postgres) psql_q -c "DROP SCHEMA IF EXISTS ${DB}_dst CASCADE" ;;
	mysql) my_q -e "DROP DATABASE IF EXISTS ${DB}_dst" ;;
	clickhouse) ch_q "DROP DATABASE IF EXISTS ${DB}_dst" ;;
	iceberg) rm -rf "$LAKE" ;;
	esac
}

# dest_sums DEST TABLE: "count|sum(c1)" of the replica's live rows.
dest_sums() {
	local t=${DB}_dst.$2
	case $1 in
	postgres) psql_q -c "SELECT count(*), sum(c1) FROM $t" ;;
	mysql) my_q -e "SELECT count(*), sum(c1) FROM $t" | tr '\t' '|' ;;
	clickhouse) ch_q "SELECT count(), sum(c1) FROM $t FINAL WHERE _weir_deleted = 0" | tr '\t' '|' ;;
	iceberg) # weir reads the lake back into PostgreSQL (no SQL engine on the lake here)
		psql_q -c "DROP SCHEMA IF EXISTS ${DB}_chk CASCADE" -c "CREATE SCHEMA ${DB}_chk"
		"$W" transfer "$(dest_url iceberg)" "$PGURL" --tables "$t" --dest-schema "${DB}_chk" >/dev/null
		psql_q -c "SELECT count(*), sum(c1) FROM ${DB}_chk.$2" -c "DROP SCHEMA ${DB}_chk CASCADE" ;;
	esac
}

# run_weir NAME SRC DST TABLE: one log_based run, timed.
run_weir() {
	local prof=()
	[ -z "${PROFILE:-}" ] || prof=(env "WEIR_CPUPROFILE=$BIN/$1.pprof")
	timed "$1" "${prof[@]}" "$W" transfer "$2" "$3" --mode log_based --tables "$4" --dest-schema "${DB}_dst" --json >"$BIN/$1.json"
}

report() { # report CASE
	local changes; changes=$(grep -o '"changes": [0-9]*' "$BIN/$1.json" | grep -o '[0-9]*$')
	printf '%-34s %8d changes  %6.1fs  %8.0f changes/s  CPU %6.1fs  %8.0f changes/CPU-s  peak RSS %6.1f MiB (own memory %6.1f MiB)\n' \
		"$1" "$changes" "$SECS" "$(echo "$changes / $SECS" | bc -l)" "$CPU_S" "$(echo "$changes / $CPU_S" | bc -l)" "$RSS_MB" "$ANON_MB"
}

check() { # check SOURCE_SUMS DEST TABLE
	local d; d=$(dest_sums "$2" "$3")
	[ "$1" = "$d" ] || { echo "$2: destination $d != source $1" >&2; exit 1; }
}

# record_slots: remember the publications (= slots) that list the bench's
# schema, for drop_slots; called right after each bootstrap, failed or not.
record_slots() {
	psql_q -c "SELECT DISTINCT pubname FROM pg_publication_tables WHERE schemaname = '$DB'" >>"$SLOTS" || true
}

# drop_slots: drop every slot and publication recorded, waiting for the
# walsender of a run that just ended to let its slot go.
drop_slots() {
	[ -s "$SLOTS" ] || return 0
	local name
	for name in $(sort -u "$SLOTS"); do
		for _ in $(seq 50); do
			[ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name = '$name'")" = 0 ] && break
			sleep 0.2
		done
		psql_q -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$name'" \
			-c "DROP PUBLICATION IF EXISTS $name" >/dev/null
	done
	: >"$SLOTS"
}

pg_case() { # pg_case DEST WIDTH MIX
	local dest=$1 w=$2 mix=$3 t=$DB.src_$2 name=pg_${1}_${2}c_$3 url; url=$(dest_url "$1")
	reset_dest "$dest"
	psql_q -c "DROP SCHEMA IF EXISTS $DB CASCADE" -c "CREATE SCHEMA $DB" \
		-c "CREATE TABLE $t (id bigint PRIMARY KEY $(cols_ddl "$w"))" \
		-c "INSERT INTO $t SELECT g $(cols_val "$w" g) FROM generate_series(1, $(base_rows "$mix")) g"
	local ok=1
	"$W" transfer "$PGURL" "$url" --mode log_based --tables "$t" --dest-schema "${DB}_dst" >/dev/null || ok=
	record_slots
	[ -n "$ok" ] || { echo "$name: bootstrap failed" >&2; exit 1; }
	psql_q -c "$(change_sql "$mix" "$w" "$t" pg_series)"
	run_weir "$name" "$PGURL" "$url" "$t"
	report "$name"
	check "$(psql_q -c "SELECT count(*), sum(c1) FROM $t")" "$dest" "src_$w"
	drop_slots
	psql_q -c "DROP SCHEMA IF EXISTS $DB CASCADE"
	drop_dest "$dest"
}

my_case() { # my_case DEST WIDTH MIX
	local dest=$1 w=$2 mix=$3 t=$DB.src_$2 name=binlog_${1}_${2}c_$3 url; url=$(dest_url "$1")
	reset_dest "$dest"
	my_q -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB; USE $DB;
		CREATE TABLE $t (id bigint PRIMARY KEY $(cols_ddl "$w"));
		INSERT INTO $t SELECT seq $(cols_val "$w" seq) FROM seq_1_to_$(base_rows "$mix")"
	"$W" transfer "$MYURL" "$url" --mode log_based --tables "$t" --dest-schema "${DB}_dst" >/dev/null
	my_q -D "$DB" -e "$(change_sql "$mix" "$w" "$t" my_series)"
	run_weir "$name" "$MYURL" "$url" "$t"
	report "$name"
	check "$(my_q -e "SELECT count(*), sum(c1) FROM $t" | tr '\t' '|')" "$dest" "src_$w"
	my_q -e "DROP DATABASE $DB"
	drop_dest "$dest"
}

# A failed run must not leave a slot retaining WAL on a shared server.
trap 'drop_slots >/dev/null 2>&1 || true' EXIT
print_load
for cap in ${CAPTURES:-pg binlog}; do
	for dest in ${DEST:-postgres mysql clickhouse iceberg}; do
		for w in ${WIDTHS:-5 15}; do
			for mix in ${MIXES:-insert update}; do
				case $cap in
				pg) pg_case "$dest" "$w" "$mix" ;;
				binlog) my_case "$dest" "$w" "$mix" ;;
				*) echo "unknown capture $cap" >&2; exit 2 ;;
				esac
			done
		done
	done
done
print_load
