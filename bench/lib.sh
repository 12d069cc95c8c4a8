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

# timed NAME CMD...: runs CMD under /usr/bin/time -v, sets SECS and RSS_MB.
timed() {
	local name=$1; shift
	local log="$BIN/$name.time"
	/usr/bin/time -v -o "$log" "$@"
	SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
	RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$log")
}

psql_q() { psql "$PGURL" -v ON_ERROR_STOP=1 -qAtX "$@"; }
