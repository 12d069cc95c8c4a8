# Shared helpers for the bench scripts: build weir once, time a command,
# read peak RSS. Source it; it expects PGURL (psql-style URL).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=bench/.bin
mkdir -p "$BIN"

build_weir() {
	go build -o "$BIN/weir" ./cmd/weir
}

# timed NAME CMD...: runs CMD under /usr/bin/time -v and sets SECS and,
# for the process CMD starts (weir), three peaks sampled every 50 ms from
# /proc/<pid>/status:
#   ANON_MB  peak private memory (RssAnon: heap, stacks, buffers): what grows
#            with the data if memory is not bounded; the targets judge this;
#   RSS_MB   peak total RSS (VmHWM, the kernel's own high-water mark, read
#            until the process exits): private memory plus the executable's
#            file-backed pages (RssFile), shared page cache that is the same
#            for any weir process whatever the data;
#   FILE_MB  the peak of RssFile, to show that split.
# and CPU_S, the process's user + system CPU seconds: on a shared machine
# the wall time measures the wait for a core as much as the work.
timed() {
	local name=$1; shift
	local log="$BIN/$name.time"
	/usr/bin/time -v -o "$log" "$@" &
	local tpid=$! anon=0 file=0 hwm=0 child a f h
	while kill -0 "$tpid" 2>/dev/null; do
		child=${child:-$(pgrep -P "$tpid" | head -1 || true)}
		if [ -n "$child" ] && read -r a f h < <(awk '/^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} /^VmHWM:/ {h=$2} END {print a+0, f+0, h+0}' "/proc/$child/status" 2>/dev/null); then
			[ "$a" -gt "$anon" ] && anon=$a
			[ "$f" -gt "$file" ] && file=$f
			[ "$h" -gt "$hwm" ] && hwm=$h
		fi
		sleep 0.05
	done
	wait "$tpid"
	SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
	# time -v's maximum RSS is the same VmHWM, taken at exit: use the larger.
	RSS_MB=$(awk -F': ' -v k="$hwm" '/Maximum resident set size/ {m=($2>k)?$2:k; printf "%.1f", m/1024}' "$log")
	CPU_S=$(awk -F': ' '/User time|System time/ {s+=$2} END {printf "%.2f", s}' "$log")
	ANON_MB=$(awk -v k="$anon" 'BEGIN {printf "%.1f", k/1024}')
	FILE_MB=$(awk -v k="$file" 'BEGIN {printf "%.1f", k/1024}')
}

# mem_note: the memory part of a result line.
mem_note() {
	printf 'weir private %5.1f MiB (peak RSS %6.1f MiB, of it executable pages %5.1f MiB)' "$ANON_MB" "$RSS_MB" "$FILE_MB"
}

psql_q() { psql "$PGURL" -v ON_ERROR_STOP=1 -qAtX "$@"; }

# make_pg_source ROWS: the PostgreSQL source table weir_bench.src_<ROWS> (needs PGURL):
make_pg_source() { # bigint PK and 8 mixed columns, ~150 bytes a row; reused when present
	local n=$1 t=weir_bench.src_$1
	if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$t')")" = 1 ]; then return; fi
	echo "building $t ($n rows)..." >&2
	psql_q -c "CREATE SCHEMA IF NOT EXISTS weir_bench" -c "DROP TABLE IF EXISTS ${t}_tmp" -c "CREATE UNLOGGED TABLE ${t}_tmp AS
	  SELECT g::int8 AS id, (g % 1000)::int4 AS account, md5(g::text) AS code,
	         'event-' || (g % 97)::text || '-' || repeat('x', (g % 40)::int) AS label,
	         (g * 0.37)::numeric(14,2) AS amount, (g % 3 = 0) AS flag, g::float8 / 7 AS score,
	         timestamptz '2024-01-01' + g * interval '1 second' AS created_at,
	         date '2020-01-01' + (g % 2000)::int AS day
	  FROM generate_series(1, $n) g" \
	  -c "ALTER TABLE ${t}_tmp SET LOGGED" -c "ALTER TABLE ${t}_tmp ADD PRIMARY KEY (id)" \
	  -c "ALTER TABLE ${t}_tmp RENAME TO src_$n" -c "VACUUM ANALYZE $t"
}

# print_load: a comment line with the time, the load average and the commit,
# printed before and after each size (the machine may be shared).
print_load() {
	printf '# %s  load average %s  commit %s%s\n' "$(date -u +%H:%M:%S)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
		"$(git rev-parse --short HEAD)" "$(git diff --quiet HEAD -- . ':!bench' 2>/dev/null || echo ' (modified)')"
}

# server_cpu: "MY PG", the CPU seconds (user + system) the local MariaDB
# server and PostgreSQL's backends have used so far: mariadbd's own, and
# the postmaster's reaped children (every backend that has exited). Take it
# before and after a run (after the run's connections closed) and subtract:
# on a 2-core machine the servers' CPU and the client's add up to what the
# cores must do, which bounds how far any client's parallelism can go.
# "? ?" when a server is not local. The long-lived checkpointer and WAL
# writer are not counted; every other client's work is (tests, other
# benches): the figures mean something only while nothing else uses the
# servers.
TEST_SERVERS=${WEIR_TEST_DIR:-/var/tmp/weir-test} # scripts/services.sh's DIR
server_cpu() {
	local my pg
	# the project's own instances (scripts/services.sh), not the machine's
	my=$(cat "$TEST_SERVERS/mariadb/mariadbd.pid" 2>/dev/null || pgrep -x mariadbd | head -1 || true)
	pg=$(head -1 "$TEST_SERVERS/pg/postmaster.pid" 2>/dev/null || pgrep -o -x postgres || true)
	sleep 0.5 # let the postmaster reap the run's backends
	awk -v my="/proc/$my/stat" -v pg="/proc/$pg/stat" 'BEGIN {
		hz = 100; m = "?"; p = "?"
		if ((getline l < my) > 0) { split(l, f, " "); m = sprintf("%.2f", (f[14] + f[15]) / hz) }
		if ((getline l < pg) > 0) { split(l, f, " "); p = sprintf("%.2f", (f[16] + f[17]) / hz) }
		print m, p }'
}

# cpu_delta BEFORE AFTER: "mariadbd X s, postgres Y s" between two server_cpu readings.
cpu_delta() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		if (x[1] == "?" || x[2] == "?") { print "server CPU unknown"; exit }
		printf "mariadbd %.2f + postgres %.2f CPU-s", y[1] - x[1], y[2] - x[2] }'
}

# PEERS: where bench/peers.sh puts the peer tools' binaries (outside the
# repository). peer_bin NAME prints the newest binary of NAME there, or
# nothing when the peer was not built (the scripts then skip its column).
PEERS=${PEERS:-/var/cache/weir/peers}
peer_bin() {
	ls -1t "$PEERS/$1"-* 2>/dev/null | head -1 || true
}

# make_pgbench_source SCALE: pgbench's own pgbench_accounts (SCALE × 100,000
# rows), in schema weir_bench_pgbench_<SCALE>; reused when present.
make_pgbench_source() {
	local s=$1 schema=weir_bench_pgbench_$1
	if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$schema.pgbench_accounts')")" = 1 ]; then return; fi
	echo "building $schema.pgbench_accounts (pgbench -i -s $s)..." >&2
	psql_q -c "CREATE SCHEMA IF NOT EXISTS $schema"
	PGOPTIONS="$PGOPTIONS -c search_path=$schema" pgbench -i -q -s "$s" "$PGURL" >&2
}

# make_lineitem_source SF: TPC-H lineitem at scale factor SF (SF1: 6M rows),
# generated by DuckDB's tpch extension through weir's embedded DuckDB
# (examples/tpch/gen, nothing downloaded) and loaded with weir itself into
# weir_bench.lineitem_sf<SF> (dots in SF become _); reused when present.
make_lineitem_source() {
	local sf=$1 t=weir_bench.lineitem_sf${1//./_}
	if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$t')")" = 1 ]; then return; fi
	echo "building $t (TPC-H SF $sf)..." >&2
	local dir="$BIN/tpch_$sf"
	go run ./examples/tpch/gen -o "$dir" -sf "$sf" -batch 10 >&2
	psql_q -c "CREATE SCHEMA IF NOT EXISTS weir_bench"
	"$BIN/weir" transfer "file://$PWD/$dir" "$PGURL" --table lineitem.parquet --dest-table "$t" >&2
	psql_q -c "VACUUM ANALYZE $t"
	rm -rf "$dir"
}
