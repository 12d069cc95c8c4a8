# Shared helpers for the bench scripts: build weir once, time a command,
# read peak RSS. Source it; it expects PGURL (psql-style URL).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOFLAGS="${GOFLAGS:--tags=duckdb_arrow}"
BIN=bench/.bin
mkdir -p "$BIN"

build_weir() {
	go build -o "$BIN/weir" ./cmd/weir
}

# timed NAME CMD...: runs CMD under /usr/bin/time -v, sets SECS and RSS_MB
# (peak RSS, which counts the pages of the executable it touched), and
# ANON_MB: the peak of the process's own memory (RssAnon: heap, stacks,
# buffers), sampled every 50 ms from /proc, which is what grows with data.
timed() {
	local name=$1; shift
	local log="$BIN/$name.time"
	/usr/bin/time -v -o "$log" "$@" &
	local tpid=$! peak=0 kb child
	while kill -0 "$tpid" 2>/dev/null; do
		child=$(pgrep -P "$tpid" | head -1 || true)
		if [ -n "$child" ]; then
			kb=$(awk '/^RssAnon:/ {print $2}' "/proc/$child/status" 2>/dev/null || echo 0)
			[ "${kb:-0}" -gt "$peak" ] && peak=$kb
		fi
		sleep 0.05
	done
	wait "$tpid"
	SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
	RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$log")
	ANON_MB=$(awk -v k="$peak" 'BEGIN {printf "%.1f", k/1024}')
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
