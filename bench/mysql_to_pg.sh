#!/usr/bin/env bash
# MariaDB → PG: weir transfer vs the raw text pipe, in the same run.
#   bench/mysql_to_pg.sh [ROWS...]     (default: 10000000)
# The pipe is `mariadb --quick -B -N -e "SELECT …" | psql -c "COPY … FROM STDIN"`:
# mariadb's batch output (tab-separated, \t \n \\ escaped) is PostgreSQL's COPY
# text format as long as no value is NULL (batch mode prints NULL as the word)
# and booleans come as 0/1, which is what the source holds.
# Prints, per size: both times, weir's throughput as a ratio of the pipe's,
# and weir's peak RSS. The source weir_bench.src_<N> (MariaDB) is kept between
# runs and reused when it has N rows; the destinations (PostgreSQL schema
# weir_bench: pipe_dst_my, weir_dst_my) are dropped before each run.
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
MYURL=${MYURL:-mysql://root@127.0.0.1:13306/weir_bench}
read -r -a MYARGS <<<"${MYSQL_ARGS:--h 127.0.0.1 -P 13306 -u root}"
export PGOPTIONS="-c client_min_messages=warning"
SIZES=("${@:-10000000}")
build_weir

my_q() { mariadb "${MYARGS[@]}" -BN "$@"; }

COLS="id, account, code, label, amount, flag, score, created_at, day"

make_source() { # ROWS: bigint PK and 8 mixed columns, like bench/pg_to_pg.sh's
	local n=$1 t=weir_bench.src_$1
	my_q -e "CREATE DATABASE IF NOT EXISTS weir_bench"
	if [ "$(my_q -e "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'weir_bench' AND TABLE_NAME = 'src_$n'")" = 1 ] &&
		[ "$(my_q -e "SELECT COUNT(*) FROM $t")" = "$n" ]; then return; fi
	echo "building $t ($n rows)..." >&2
	local sql step=1000000 lo hi
	# Generated from MariaDB's Sequence engine (seq_A_to_B) in 1M-row
	# transactions, in key order, without the binlog (bench data is not
	# something a replica or a CDC test should see).
	sql="USE weir_bench;
	SET SESSION sql_log_bin = 0, unique_checks = 0, foreign_key_checks = 0;
	DROP TABLE IF EXISTS ${t}_tmp, $t;
	CREATE TABLE ${t}_tmp (
	  id BIGINT NOT NULL PRIMARY KEY, account INT, code VARCHAR(32), label VARCHAR(64),
	  amount DECIMAL(14,2), flag TINYINT(1), score DOUBLE, created_at DATETIME(6), day DATE
	) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;"
	for ((lo = 1; lo <= n; lo += step)); do
		hi=$((lo + step - 1 < n ? lo + step - 1 : n))
		sql+="
	INSERT INTO ${t}_tmp
	  SELECT seq, seq % 1000, MD5(seq), CONCAT('event-', seq % 97, '-', REPEAT('x', seq % 40)),
	         seq * 0.37, seq % 3 = 0, CAST(seq AS DOUBLE) / 7,
	         TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq SECOND + INTERVAL seq % 1000000 MICROSECOND,
	         DATE'2020-01-01' + INTERVAL seq % 2000 DAY
	  FROM seq_${lo}_to_${hi};"
	done
	sql+="
	RENAME TABLE ${t}_tmp TO $t;
	ANALYZE TABLE $t;"
	my_q -e "$sql" >/dev/null
}

bench_size() {
	local n=$1 src=weir_bench.src_$1
	make_source "$n"
	local mb; mb=$(my_q -e "SELECT ROUND(DATA_LENGTH / 1048576) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'weir_bench' AND TABLE_NAME = 'src_$n'")
	# The pipe's table has the types weir creates for these columns.
	psql_q -c "CREATE SCHEMA IF NOT EXISTS weir_bench" \
	       -c "DROP TABLE IF EXISTS weir_bench.pipe_dst_my, weir_bench.weir_dst_my" \
	       -c "CREATE TABLE weir_bench.pipe_dst_my (id bigint PRIMARY KEY, account integer, code text, label text,
	             amount numeric(14,2), flag boolean, score double precision, created_at timestamp, day date)"
	psql_q -c "CHECKPOINT"
	local c0 c1 c2 c3
	c0=$(server_cpu)
	timed my2pg_pipe_$n bash -o pipefail -c "mariadb ${MYARGS[*]} --quick -B -N -e 'SELECT $COLS FROM $src' | psql '$PGURL' -qAtX -v ON_ERROR_STOP=1 -c 'COPY weir_bench.pipe_dst_my FROM STDIN'"
	local pipe=$SECS pipe_cpu=$CPU_S
	c1=$(server_cpu)
	local got; got=$(psql_q -c "SELECT count(*) FROM weir_bench.pipe_dst_my")
	[ "$got" = "$n" ] || { echo "pipe_dst_my has $got rows, want $n" >&2; exit 1; }
	psql_q -c "DROP TABLE weir_bench.pipe_dst_my" -c "CHECKPOINT"
	c2=$(server_cpu)
	timed my2pg_weir_$n "$BIN/weir" transfer "$MYURL" "$PGURL" --table "$src" --dest-table weir_bench.weir_dst_my --json >"$BIN/my2pg_weir_$n.json"
	local weir=$SECS mem; mem=$(mem_note)
	c3=$(server_cpu)
	got=$(psql_q -c "SELECT count(*) FROM weir_bench.weir_dst_my")
	[ "$got" = "$n" ] || { echo "weir_dst_my has $got rows, want $n" >&2; exit 1; }
	printf '%-10s %8s MB  pipe %7.1fs  weir %7.1fs  ratio %.2f  %s\n' \
		"$n" "$mb" "$pipe" "$weir" "$(echo "$pipe / $weir" | bc -l)" "$mem"
	# Where the CPU went: with every process busy, the cores must do the
	# sum, so pipe total / weir total is the ratio two saturated cores allow.
	printf '%-10s CPU  pipe: %s + clients %.2f  |  weir: %s + weir %.2f  |  totals %s\n' "$n" \
		"$(cpu_delta "$c0" "$c1")" "$pipe_cpu" "$(cpu_delta "$c2" "$c3")" "$CPU_S" \
		"$(awk -v a="$c0 $c1 $c2 $c3" -v p="$pipe_cpu" -v w="$CPU_S" 'BEGIN { split(a, c, " ")
			if (c[1] == "?") { print "?"; exit }
			tp = c[3] - c[1] + c[4] - c[2] + p; tw = c[7] - c[5] + c[8] - c[6] + w
			printf "%.2f vs %.2f CPU-s (ratio %.2f)", tp, tw, tp / tw }')"
}

for n in ${SIZES[@]}; do print_load; bench_size "$n"; done
print_load
