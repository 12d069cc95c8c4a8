#!/usr/bin/env bash
# weir → Iceberg against weir → Parquet (file://) on TPC-H lineitem, for
# one or more weir binaries, alternating in one run (issue 22's "Iceberg
# within 10 % of Parquet"):
#   bench/iceberg_vs_parquet.sh WEIR_BIN...
# SF (default 0.1) is the TPC-H scale factor, RUNS (default 3) the rounds;
# each round runs every binary into Iceberg (SQLite catalog, file
# warehouse) and into file://, each a fresh lake, under
# /usr/bin/time -f '%U %S %M' (user and system CPU-seconds of the weir
# process, peak RSS in KiB), printing the load average beside each line.
# Every output is checked: its row count and the sum of l_orderkey, read
# back with weir read, equal PostgreSQL's. The source table is TABLE
# (default weir_bench.lineitem_sf<SF>, built with lib.sh's
# make_lineitem_source when missing, by the first binary).
source "$(dirname "$0")/lib.sh"
PGURL=${PGURL:-postgres://root@127.0.0.1:15432/test?sslmode=disable}
export PGOPTIONS="-c client_min_messages=warning"
SF=${SF:-0.1}
RUNS=${RUNS:-3}
TABLE=${TABLE:-weir_bench.lineitem_sf${SF//./_}}
LAKE=${LAKE:-$PWD/$BIN/icelake}
[ $# -gt 0 ] || { echo "usage: $0 WEIR_BIN..." >&2; exit 2; }
if [ "$(psql_q -c "SELECT count(*) FROM pg_class WHERE oid = to_regclass('$TABLE')")" != 1 ]; then
	cp "$1" "$BIN/weir" && make_lineitem_source "$SF"
fi
WANT=$(psql_q -F' ' -c "SELECT count(*), sum(l_orderkey) FROM $TABLE")

check() { # WEIR URL TABLE
	local got
	got=$("$1" read "$2" --table "$3" --columns l_orderkey --to - | awk -F, 'NR > 1 { n++; k += $1 } END { printf "%d %d\n", n, k }')
	[ "$got" = "$WANT" ] || { echo "$1 → $2: rows/key sum $got, source $WANT" >&2; exit 1; }
}

for r in $(seq "$RUNS"); do
	for w in "$@"; do
		for dest in iceberg file; do
			rm -rf "$LAKE" && mkdir -p "$LAKE"
			case $dest in
			iceberg) url="iceberg://?catalog=sql&uri=sqlite://$LAKE/c.db&warehouse=file://$LAKE"; t=bench.lineitem ;;
			file) url="file://$LAKE"; t=lineitem ;;
			esac
			load=$(cut -d' ' -f1-3 /proc/loadavg)
			/usr/bin/time -o "$BIN/ab.time" -f '%U %S %M' "$w" transfer "$PGURL" "$url" --table "$TABLE" --dest-table "$t" >/dev/null 2>"$BIN/ab.err" ||
				{ cat "$BIN/ab.err" >&2; exit 1; }
			read -r u s m <"$BIN/ab.time"
			printf '%-8s %-32s run %d  cpu %6.2f (user %s sys %s)  maxrss %4d MB  load %s\n' \
				"$dest" "$(basename "$w")" "$r" "$(echo "$u + $s" | bc -l)" "$u" "$s" $((m / 1024)) "$load"
			[ "$r" = 1 ] && check "$w" "$url" "$t"
		done
	done
done
rm -rf "$LAKE"
