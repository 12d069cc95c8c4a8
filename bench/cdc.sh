#!/usr/bin/env bash
# Batch CDC: changes/s of one log_based run that drains CHANGES mixed
# changes (40% inserts, 40% updates, 20% deletes, one row each), for the
# PostgreSQL WAL (PG → PG) and the MariaDB binlog (MySQL → MySQL), at 5 and
# 15 columns.
#   bench/cdc.sh [CHANGES]        (default: 1000000)
#   WIDTHS="5" SKIP_PG=1 SKIP_BINLOG=1 narrow it down.
# Per case: the drain run's time, changes/s, and weir's peak RSS (total and
# its own anonymous memory). Everything lives in schema/database
# weir_bench_cdc, dropped (with the slot) at the end.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
MYURL=${MYURL:-mysql://root@127.0.0.1:13306/test}
export PGOPTIONS="-c client_min_messages=warning"
N=${1:-1000000}
DB=weir_bench_cdc
build_weir

my_q() { mariadb -h127.0.0.1 -P13306 -uroot -N -B "$@"; } # the test instance (scripts/services.sh)

# cols_sql WIDTH DIALECT: the columns after id, alternating int and text.
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

# run_weir NAME SRC DST TABLE: one log_based run, timed.
run_weir() {
	timed "$1" "$BIN/weir" transfer "$2" "$3" --mode log_based --tables "$4" --dest-schema "${DB}_dst" --json >"$BIN/$1.json"
}

report() { # report SOURCE WIDTH
	local changes; changes=$(grep -o '"changes": [0-9]*' "$BIN/$1_$2.json" | grep -o '[0-9]*$')
	printf '%-9s %2d cols  %8d changes  %6.1fs  %8.0f changes/s  CPU %6.1fs  %8.0f changes/CPU-s  peak RSS %6.1f MiB (own memory %6.1f MiB)\n' \
		"$1" "$2" "$changes" "$SECS" "$(echo "$changes / $SECS" | bc -l)" "$CPU_S" "$(echo "$changes / $CPU_S" | bc -l)" "$RSS_MB" "$ANON_MB"
}

pg_case() {
	local w=$1 t=$DB.src_$1 base=$((N / 2))
	psql_q -c "DROP SCHEMA IF EXISTS $DB CASCADE" -c "DROP SCHEMA IF EXISTS ${DB}_dst CASCADE" \
		-c "CREATE SCHEMA $DB" -c "CREATE SCHEMA ${DB}_dst" \
		-c "CREATE TABLE $t (id bigint PRIMARY KEY $(cols_ddl "$w"))" \
		-c "INSERT INTO $t SELECT g $(cols_val "$w" g) FROM generate_series(1, $base) g"
	"$BIN/weir" transfer "$PGURL" "$PGURL" --mode log_based --tables "$t" --dest-schema "${DB}_dst" >/dev/null
	psql_q -c "INSERT INTO $t SELECT g $(cols_val "$w" g) FROM generate_series($base + 1, $base + $N * 2 / 5) g" \
		-c "UPDATE $t SET c1 = c1 + 1 WHERE id <= $N * 2 / 5" \
		-c "DELETE FROM $t WHERE id > $N * 2 / 5 AND id <= $N * 3 / 5"
	run_weir pg_$w "$PGURL" "$PGURL" "$t"
	report pg "$w"
	check_pg "$t" "${DB}_dst.src_$w"
	drop_pg_slot
}

check_pg() {
	local s d
	s=$(psql_q -c "SELECT count(*), sum(c1) FROM $1")
	d=$(psql_q -c "SELECT count(*), sum(c1) FROM $2")
	[ "$s" = "$d" ] || { echo "destination $d != source $s" >&2; exit 1; }
}

drop_pg_slot() {
	local name
	# The server ends a walsender a moment after weir exits; a slot still
	# active cannot be dropped yet.
	for _ in $(seq 50); do
		[ "$(psql_q -c "SELECT count(*) FROM pg_replication_slots WHERE active AND slot_name IN (SELECT pubname FROM pg_publication_tables WHERE schemaname = '$DB')")" = 0 ] && break
		sleep 0.2
	done
	for name in $(psql_q -c "SELECT DISTINCT pubname FROM pg_publication_tables WHERE schemaname = '$DB'"); do
		psql_q -c "SELECT pg_drop_replication_slot('$name')" -c "DROP PUBLICATION $name" >/dev/null
	done
	psql_q -c "DROP SCHEMA IF EXISTS $DB CASCADE" -c "DROP SCHEMA IF EXISTS ${DB}_dst CASCADE"
}

my_case() {
	local w=$1 t=$DB.src_$1 base=$((N / 2))
	my_q -e "DROP DATABASE IF EXISTS $DB; DROP DATABASE IF EXISTS ${DB}_dst; CREATE DATABASE $DB; CREATE DATABASE ${DB}_dst; USE $DB;
		CREATE TABLE $t (id bigint PRIMARY KEY $(cols_ddl "$w"));
		INSERT INTO $t SELECT seq $(cols_val "$w" seq) FROM seq_1_to_$base"
	"$BIN/weir" transfer "$MYURL" "$MYURL" --mode log_based --tables "$t" --dest-schema "${DB}_dst" >/dev/null
	my_q -D "$DB" -e "INSERT INTO $t SELECT seq $(cols_val "$w" seq) FROM seq_$((base + 1))_to_$((base + N * 2 / 5));
		UPDATE $t SET c1 = c1 + 1 WHERE id <= $((N * 2 / 5));
		DELETE FROM $t WHERE id > $((N * 2 / 5)) AND id <= $((N * 3 / 5))"
	run_weir binlog_$w "$MYURL" "$MYURL" "$t"
	report binlog "$w"
	local s d
	s=$(my_q -e "SELECT count(*), sum(c1) FROM $t")
	d=$(my_q -e "SELECT count(*), sum(c1) FROM ${DB}_dst.src_$w")
	[ "$s" = "$d" ] || { echo "destination $d != source $s" >&2; exit 1; }
	my_q -e "DROP DATABASE $DB; DROP DATABASE ${DB}_dst"
}

# A failed run must not leave a slot retaining WAL on a shared server.
trap 'drop_pg_slot >/dev/null 2>&1 || true' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
WIDTHS=${WIDTHS:-5 15}
[ -n "${SKIP_PG:-}" ] || for w in $WIDTHS; do pg_case "$w"; done
[ -n "${SKIP_BINLOG:-}" ] || for w in $WIDTHS; do my_case "$w"; done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
