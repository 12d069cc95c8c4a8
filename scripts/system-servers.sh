#!/usr/bin/env bash
# scripts/system-servers.sh — a fingerprint of the machine's own database servers,
# to prove that the tests leave them alone (issue 21: the test servers are the
# project's own, see scripts/services.sh).
#
#   scripts/system-servers.sh               print the fingerprint
#   scripts/system-servers.sh compare FILE  print it again and fail (exit 1, with a
#                                           diff) when it differs from FILE
#
# The fingerprint: a checksum of every file under /etc/postgresql, /etc/mysql and
# /etc/clickhouse-server (when present) and of each system PostgreSQL cluster's
# postgresql.auto.conf; the settings the system servers run with, when they run
# (PostgreSQL: wal_level, the content of its hba_file, its start time; MariaDB:
# @@log_bin, @@binlog_format); and which process listens on the standard ports
# 5432, 3306, 9000, 8123 (a restart changes it). It only reads: files, and one
# query per running server (as the postgres user over its socket; as root over
# MariaDB's socket). Cheap: well under a second. WEIR_SYSTEM_CONF_DIRS replaces
# the list of config directories (to try the check itself on a scratch directory).
set -uo pipefail
export LC_ALL=C

fingerprint() {
	local d f
	for d in ${WEIR_SYSTEM_CONF_DIRS:-/etc/postgresql /etc/mysql /etc/clickhouse-server}; do
		[ -d "$d" ] || continue
		find "$d" \( -type f -o -type l \) -print0 2>/dev/null | sort -z |
			while IFS= read -r -d '' f; do
				printf 'file %s %s\n' "$f" "$(sha256sum <"$f" 2>/dev/null | cut -c1-64 || echo unreadable)"
			done
	done

	# PostgreSQL clusters of postgresql-common (Debian): ver cluster port status owner datadir log
	if command -v pg_lsclusters >/dev/null; then
		local ver cluster port status owner data rest got hba
		while read -r ver cluster port status owner data rest; do
			f=$data/postgresql.auto.conf
			printf 'pg %s/%s auto.conf %s\n' "$ver" "$cluster" "$(sha256sum <"$f" 2>/dev/null | cut -c1-64 || echo absent)"
			case "$status" in online*) ;; *)
				printf 'pg %s/%s %s\n' "$ver" "$cluster" "$status"
				continue
				;;
			esac
			got=$(runuser -u "$owner" -- psql -X -q -A -t -F ' ' -h /var/run/postgresql -p "$port" -d postgres \
				-c "SELECT current_setting('wal_level'), pg_postmaster_start_time(), current_setting('hba_file')" 2>&1 </dev/null)
			hba=${got##* }
			printf 'pg %s/%s port %s running: wal_level, started, hba_file: %s; hba_file content %s\n' \
				"$ver" "$cluster" "$port" "$got" "$(sha256sum <"$hba" 2>/dev/null | cut -c1-64 || echo unreadable)"
		done < <(pg_lsclusters -h 2>/dev/null)
	fi

	# MariaDB / MySQL of the system: its own client config (/etc/mysql) names the socket.
	if command -v mariadb >/dev/null && [ -d /etc/mysql ]; then
		printf 'mariadb system: %s\n' "$(mariadb -uroot -N -B --connect-timeout=3 \
			-e "SELECT @@port, @@log_bin, @@binlog_format, @@datadir" 2>&1 </dev/null | tr '\t\n' '  ')"
	fi

	local p pid
	for p in 5432 3306 9000 8123; do
		pid=$(ss -Hltnp "sport = :$p" 2>/dev/null | grep -o 'pid=[0-9]*' | sort -u | tr '\n' ' ')
		printf 'listen %s %s\n' "$p" "${pid:-none}"
	done
}

case "${1:-}" in
"")
	fingerprint
	;;
compare)
	[ -f "${2:-}" ] || { echo "usage: $0 compare FILE (a fingerprint printed before)" >&2; exit 2; }
	if ! out=$(diff -u "$2" <(fingerprint)); then
		printf 'system-servers.sh: the machine'"'"'s own servers or their configs changed during the run:\n%s\n' "$out" >&2
		exit 1
	fi
	echo "system servers unchanged ($(wc -l <"$2") facts compared: configs in /etc, running settings, listeners)"
	;;
*)
	echo "usage: $0 [compare FILE]" >&2
	exit 2
	;;
esac
