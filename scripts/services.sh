#!/usr/bin/env bash
# scripts/services.sh — install, configure and start the local servers that
# weir's integration tests talk to:
#
#   PostgreSQL  127.0.0.1:5432  trust, wal_level=logical, replication slots, db "test"
#   MariaDB     127.0.0.1:3306  root without password, ROW binlog, local_infile, db "test"
#   ClickHouse  127.0.0.1:9000 (native) and :8123 (HTTP), Debian's 18.16, timezone UTC
#   BigQuery    127.0.0.1:9050 (REST) and :9060 (gRPC): goccy/bigquery-emulator, project
#               test-project, dataset weir_test; built once from the Go module proxy (it
#               compiles ZetaSQL with clang: ~20 minutes on 2 cores, logged in
#               /var/cache/weir/bq/build.log) and cached in /var/cache/weir/bq, so only the
#               first run on a machine pays for it. Built when missing under CI=true, or when
#               go and clang++ are at hand; WEIR_BUILD_BIGQUERY=1 forces it, =0 skips it
#
# Idempotent and safe to run many times (runs are serialised with a lock). When
# everything is already up it only checks (one query per server: about a second,
# 2-4 s on a machine loaded by parallel builds);
# a server is restarted only when a setting it needs is not in effect. Runs as
# root, without systemd and without stdin (CI=true). Prints one line per
# service; exits non-zero with a message on stderr if a service cannot be
# brought up.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

WAIT_SECS=${WEIR_SERVICES_WAIT:-90}   # bound on every "wait until it answers"
LOG_DIR=${WEIR_SERVICES_LOG_DIR:-/var/log/weir-services}

die() { printf 'services.sh: error: %s\n' "$*" >&2; exit 1; }
note() { printf 'services.sh: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and edits server configs)"

# Everything below runs from / so no server inherits a working directory that
# may disappear (CI runs from a temporary clone).
cd /
mkdir -p "$LOG_DIR"

# One run at a time: developers' and CI's test runs may start this concurrently.
# Every command that may leave a daemon behind runs through nolock, so no server
# inherits the lock's descriptor (it would hold the lock for its lifetime).
LOCK_FILE=/run/lock/weir-services.lock
[ -d /run/lock ] || LOCK_FILE=/tmp/weir-services.lock
exec 9>"$LOCK_FILE"
flock -w 900 9 || die "another services.sh has held the lock for 15 minutes"
nolock() { "$@" 9>&-; }

# wait_until SECONDS CMD... — poll CMD until it succeeds or SECONDS pass.
wait_until() {
	local secs=$1; shift
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.25
	done
}

# write_if_changed FILE CONTENT — write CONTENT (plus a newline) to FILE only if
# it differs. Returns 0 when the file was (re)written, 1 when already up to date.
# No subprocess when nothing changes (this script must be fast when all is up).
write_if_changed() {
	local file=$1 content=$2
	if [ -f "$file" ] && [ "$(<"$file")" = "$content" ]; then
		return 1
	fi
	printf '%s\n' "$content" >"$file.weir-new"
	chmod 0644 "$file.weir-new"
	mv -f "$file.weir-new" "$file"
	return 0
}

APT_UPDATED=0
# apt_install PKG... — install Debian packages non-interactively; refresh the
# package lists first only when one of the packages has no install candidate.
apt_install() {
	local p log="$LOG_DIR/apt.log"
	if [ "$APT_UPDATED" = 0 ]; then
		for p in "$@"; do
			if ! apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
				note "apt-get update (no candidate for $p)"
				apt-get update -q </dev/null >>"$log" 2>&1 ||
					{ tail -n 20 "$log" >&2; die "apt-get update failed (full log: $log)"; }
				APT_UPDATED=1
				break
			fi
		done
	fi
	nolock apt-get install -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=300 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"$@" </dev/null >>"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "apt-get install $* failed (full log: $log)"; }
}

###############################################################################
# PostgreSQL
###############################################################################
PG_PORT=5432
PG_WANT="logical t t"
PG_CONF='# weir scripts/services.sh: logical replication for CDC tests.
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20'
PG_HBA_MARK='# weir scripts/services.sh: loopback trust first (pg_hba.conf is first-match)'

pg_admin() { # psql as the postgres superuser over the Unix socket (peer or trust)
	runuser -u postgres -- psql -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@"
}

# pg_probe — what the tests see: TCP, trust, role root, database test.
pg_probe() {
	psql -X -q -A -t -F ' ' -h 127.0.0.1 -p "$PG_PORT" -U root -d test -c "SELECT
		current_setting('wal_level'),
		current_setting('max_replication_slots')::int >= 20,
		current_setting('max_wal_senders')::int >= 20" 2>&1
}

pg_settings_ok() {
	[ "$(pg_admin -F ' ' -c "SELECT current_setting('wal_level'),
		current_setting('max_replication_slots')::int >= 20,
		current_setting('max_wal_senders')::int >= 20" 2>/dev/null)" = "$PG_WANT" ]
}

pg_wait() {
	wait_until "$WAIT_SECS" pg_isready -h 127.0.0.1 -p "$PG_PORT" -q ||
		die "PostgreSQL $PG_VER did not accept connections on 127.0.0.1:$PG_PORT within ${WAIT_SECS}s (log: /var/log/postgresql/postgresql-$PG_VER-main.log)"
}

pg_ctl() { # pg_ctlcluster without systemd; on failure show the server log and die
	nolock pg_ctlcluster --skip-systemctl-redirect "$PG_VER" main "$1" >>"$LOG_DIR/postgres.log" 2>&1 || {
		tail -n 20 "/var/log/postgresql/postgresql-$PG_VER-main.log" >&2 2>/dev/null || true
		die "pg_ctlcluster $PG_VER main $1 failed (logs: $LOG_DIR/postgres.log, /var/log/postgresql/)"
	}
}

setup_postgres() {
	if ! command -v pg_ctlcluster >/dev/null || ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
		note "installing PostgreSQL from Debian"
		apt_install postgresql postgresql-client
	fi
	local versions=(/etc/postgresql/*/main/postgresql.conf)
	if [ ! -f "${versions[0]}" ]; then
		local bins=(/usr/lib/postgresql/*/bin/postgres) bin_ver
		bin_ver=$(basename "$(dirname "$(dirname "${bins[-1]}")")")
		note "creating PostgreSQL cluster $bin_ver/main"
		pg_createcluster "$bin_ver" main >>"$LOG_DIR/postgres.log" 2>&1 ||
			die "pg_createcluster $bin_ver main failed (log: $LOG_DIR/postgres.log)"
		versions=(/etc/postgresql/*/main/postgresql.conf)
	fi
	# The newest cluster (glob order is lexical: fine for 15..99).
	PG_VER=${versions[-1]#/etc/postgresql/}
	PG_VER=${PG_VER%%/*}
	local etc=/etc/postgresql/$PG_VER/main hba_changed=0 action=""

	# Settings for logical replication, in conf.d (read after postgresql.conf).
	# Whether to restart is decided from the settings in effect, not from this write.
	[ -d "$etc/conf.d" ] || install -d -o postgres -g postgres "$etc/conf.d"
	if write_if_changed "$etc/conf.d/99-weir.conf" "$PG_CONF"; then
		grep -Eq "^[[:space:]]*include_dir[[:space:]]*=[[:space:]]*'conf\.d'" "$etc/postgresql.conf" ||
			printf "\ninclude_dir = 'conf.d'\t# added by weir scripts/services.sh\n" >>"$etc/postgresql.conf"
	fi

	# pg_hba.conf is first-match: the two trust lines must come before any other rule.
	local hba=$etc/pg_hba.conf
	if [ "$(awk '!/^[[:space:]]*(#|$)/ { $1 = $1; print; if (++n == 2) exit }' "$hba")" != \
		$'host all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust' ]; then
		[ -f "$hba.weir-orig" ] || cp -p "$hba" "$hba.weir-orig"
		{
			echo "$PG_HBA_MARK"
			echo "host    all             all             127.0.0.1/32            trust"
			echo "host    replication     all             127.0.0.1/32            trust"
			awk -v mark="$PG_HBA_MARK" '{ l = $0; $1 = $1 }
				$0 == "host all all 127.0.0.1/32 trust" || $0 == "host replication all 127.0.0.1/32 trust" || l == mark { next }
				{ print l }' "$hba"
		} >"$hba.weir-new"
		cat "$hba.weir-new" >"$hba" # keeps owner and mode
		rm -f "$hba.weir-new"
		hba_changed=1
	fi

	# Fast path: already up and configured.
	if [ "$hba_changed" = 0 ] && [ "$(pg_probe)" = "$PG_WANT" ]; then
		echo "postgres ok (PG $PG_VER on 127.0.0.1:$PG_PORT, wal_level=logical)"
		return
	fi

	if ! pg_isready -h 127.0.0.1 -p "$PG_PORT" -q; then
		case "$(pg_lsclusters -h "$PG_VER" main 2>/dev/null | awk '{print $4}')" in
		online*) ;; # running, maybe still starting up: pg_wait below
		*) pg_ctl start; action=" (started)" ;;
		esac
	elif [ "$hba_changed" = 1 ]; then
		pg_ctl reload
	fi
	pg_wait

	if ! pg_settings_ok; then
		note "restarting PostgreSQL $PG_VER for wal_level=logical"
		pg_ctl restart
		pg_wait
		pg_settings_ok || die "PostgreSQL is still not at wal_level=logical with >= 20 slots/senders after a restart: a later setting overrides $etc/conf.d/99-weir.conf (see postgresql.auto.conf, ALTER SYSTEM)"
		action=" (restarted)"
	fi

	# Role root (superuser; what the tests connect as) and database test.
	[ "$(pg_admin -c "SELECT rolsuper AND rolcanlogin FROM pg_roles WHERE rolname = 'root'")" = t ] ||
		pg_admin -c "DO \$\$ BEGIN
			IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'root') THEN ALTER ROLE root SUPERUSER LOGIN;
			ELSE CREATE ROLE root SUPERUSER LOGIN; END IF; END \$\$" >/dev/null
	[ "$(pg_admin -c "SELECT count(*) FROM pg_database WHERE datname = 'test'")" = 1 ] ||
		pg_admin -c "CREATE DATABASE test OWNER root" >/dev/null

	local got
	got=$(pg_probe)
	[ "$got" = "$PG_WANT" ] ||
		die "PostgreSQL as root@127.0.0.1:$PG_PORT/test: got '$got', want '$PG_WANT' (wal_level, slots>=20, senders>=20)"
	echo "postgres ok (PG $PG_VER on 127.0.0.1:$PG_PORT, wal_level=logical)$action"
}

###############################################################################
# MariaDB
###############################################################################
MY_CONF_DIR=/etc/mysql/mariadb.conf.d
MY_WANT="ON,ROW,FULL,FULL,ON,1"
MY_CONF='# weir scripts/services.sh: ROW binlog for CDC tests, LOAD DATA LOCAL.
[mysqld]
server_id=1
log_bin=mysql-bin
binlog_format=ROW
binlog_row_image=FULL
binlog_row_metadata=FULL
local_infile=1
bind-address=127.0.0.1'
MY_SETTINGS_SQL="CONCAT_WS(',', @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, @@local_infile, @@server_id)"

my_admin() { # mariadb as root over the Unix socket, without writing to the binlog
	mariadb -uroot -N -B --init-command='SET SESSION sql_log_bin = 0' "$@"
}

# my_probe — what the tests see: root over TCP without password, database test.
# Prints "settings|has test db|version" then the grants.
my_probe() {
	mariadb -h 127.0.0.1 -P 3306 -uroot -N -B -e "SELECT CONCAT_WS('|', $MY_SETTINGS_SQL,
		(SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'test'), VERSION()); SHOW GRANTS" 2>&1
}

my_probe_ok() { # $1: output of my_probe
	local first=${1%%$'\n'*}
	[[ $first == "$MY_WANT|1|"* ]] && [[ $1 == *"GRANT ALL PRIVILEGES ON *.* TO "*"WITH GRANT OPTION"* ]]
}

my_ok_line() { # $1: output of my_probe, $2: what was done
	local ver=${1%%$'\n'*}
	ver=${ver##*|}
	echo "mariadb ok (MariaDB ${ver%%-*} on 127.0.0.1:3306, binlog_format=ROW, local_infile=ON)$2"
}

my_running() { start-stop-daemon --status --exec /usr/sbin/mariadbd; }

my_start() {
	install -d -o mysql -g mysql -m 0755 /run/mysqld
	nolock start-stop-daemon --start --oknodo --background --chuid mysql:mysql --exec /usr/sbin/mariadbd ||
		die "start-stop-daemon could not start /usr/sbin/mariadbd"
	# ping answers before auth works; wait for a real query.
	wait_until "$WAIT_SECS" my_admin -e 'SELECT 1' || {
		tail -n 20 /var/log/mysql/error.log >&2 2>/dev/null || true
		die "MariaDB did not come up within ${WAIT_SECS}s (log: /var/log/mysql/error.log)"
	}
}

my_stop() {
	mariadb-admin -uroot shutdown >/dev/null 2>&1 || true
	wait_until "$WAIT_SECS" bash -c '! start-stop-daemon --status --exec /usr/sbin/mariadbd' ||
		die "MariaDB did not stop within ${WAIT_SECS}s after mariadb-admin shutdown"
}

setup_mariadb() {
	if [ ! -x /usr/sbin/mariadbd ] || ! command -v mariadb >/dev/null || ! command -v mariadb-admin >/dev/null; then
		note "installing MariaDB from Debian"
		apt_install mariadb-server mariadb-client
	fi
	local action="" conf_changed=0 probe

	[ -d "$MY_CONF_DIR" ] || install -d -m 0755 "$MY_CONF_DIR"
	write_if_changed "$MY_CONF_DIR/99-weir.cnf" "$MY_CONF" && conf_changed=1

	# Fast path: already up and configured.
	probe=$(my_probe) || true
	if [ "$conf_changed" = 0 ] && my_probe_ok "$probe"; then
		my_ok_line "$probe" ""
		return
	fi

	# A my.cnf that does not include mariadb.conf.d (as on these machines): add
	# the include so that the file above is read.
	if ! my_print_defaults --mysqld | grep -x -- '--binlog_row_metadata=FULL' >/dev/null; then
		local cnf
		cnf=$(readlink -f /etc/mysql/my.cnf)
		printf '\n# added by weir scripts/services.sh\n!includedir %s/\n' "$MY_CONF_DIR" >>"$cnf"
		my_print_defaults --mysqld | grep -x -- '--binlog_row_metadata=FULL' >/dev/null ||
			die "MariaDB does not read $MY_CONF_DIR/99-weir.cnf (my_print_defaults --mysqld); check /etc/mysql/my.cnf"
	fi

	if ! my_running || ! mariadb-admin -uroot ping >/dev/null 2>&1; then
		my_start
		action=" (started)"
	fi
	if [ "$(my_admin -e "SELECT $MY_SETTINGS_SQL")" != "$MY_WANT" ]; then
		note "restarting MariaDB for the ROW binlog settings"
		my_stop
		my_start
		local got
		got=$(my_admin -e "SELECT $MY_SETTINGS_SQL")
		[ "$got" = "$MY_WANT" ] ||
			die "MariaDB log_bin,binlog_format,row_image,row_metadata,local_infile,server_id after a restart: $got, want $MY_WANT"
		action=" (restarted)"
	fi

	# root over TCP without a password (skip-name-resolve: 'localhost' does not
	# match TCP from 127.0.0.1), and database test.
	my_admin -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
		ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		CREATE DATABASE IF NOT EXISTS test;"

	probe=$(my_probe) || die "cannot connect as root@127.0.0.1:3306: $probe"
	my_probe_ok "$probe" || die "MariaDB as root@127.0.0.1:3306: got '$probe', want settings $MY_WANT, database test, all privileges"
	my_ok_line "$probe" "$action"
}

###############################################################################
# ClickHouse (Debian's clickhouse-server 18.16.1)
###############################################################################
CH_BIN=/usr/sbin/clickhouse-server
CH_CONFIG=/etc/clickhouse-server/config.xml
CH_STATUS=/var/lib/clickhouse/status # the running server writes "PID: n" there
CH_HTTP=http://127.0.0.1:8123
# 18.16's root element is <yandex>. A config.d element merges into the first
# element of the same name in config.xml, so every listen_host there is removed
# (Debian's are commented out, which means the default ::1 and 127.0.0.1) and
# one 127.0.0.1 is added.
CH_CONF='<?xml version="1.0"?>
<!-- weir scripts/services.sh: loopback only, UTC. -->
<yandex>
    <listen_host remove="remove"/>
    <listen_host remove="remove"/>
    <listen_host>127.0.0.1</listen_host>
    <timezone>UTC</timezone>
</yandex>'

ch_query() { curl -sf --max-time 10 "$CH_HTTP/" --data-binary "$1"; }
ch_ping() { curl -sf --max-time 2 "$CH_HTTP/ping" >/dev/null; }
ch_tz_ok() { case "$1" in UTC | Etc/UTC) return 0 ;; *) return 1 ;; esac; } # 18.16 reports UTC as Etc/UTC

ch_stop() { # the running server: its pid from the status file, else the one listening on :8123
	local pid
	pid=$(sed -n 's/^PID: *\([0-9][0-9]*\)$/\1/p' "$CH_STATUS" 2>/dev/null || true)
	if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != clickhouse-serv ]; then
		pid=$(ss -Hltnp 'sport = :8123' 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
	fi
	[ -n "$pid" ] || die "ClickHouse needs a restart but its process was not found"
	kill "$pid"
	wait_until "$WAIT_SECS" bash -c "! kill -0 $pid" ||
		die "ClickHouse (pid $pid) did not stop within ${WAIT_SECS}s"
}

ch_start() {
	# setsid: its own session, so it outlives this script and the shell that ran
	# it. A plain command (not a function), so no subshell is left holding the lock.
	setsid runuser -u clickhouse -- "$CH_BIN" --config-file="$CH_CONFIG" \
		</dev/null >>/var/log/clickhouse-server/stdout.log 2>&1 9>&- &
	wait_until "$WAIT_SECS" ch_ping || {
		tail -n 20 /var/log/clickhouse-server/clickhouse-server.err.log >&2 2>/dev/null || true
		die "ClickHouse did not answer $CH_HTTP/ping within ${WAIT_SECS}s (logs: /var/log/clickhouse-server/)"
	}
}

setup_clickhouse() {
	local action="" changed=0 tz ver
	if [ ! -x "$CH_BIN" ] || ! command -v clickhouse-client >/dev/null; then
		local t0=$SECONDS
		note "installing clickhouse-server and clickhouse-client from Debian"
		apt_install clickhouse-server clickhouse-client
		action=" (installed in $((SECONDS - t0))s)"
	fi
	[ -d /etc/clickhouse-server/config.d ] || install -d -m 0755 /etc/clickhouse-server/config.d
	write_if_changed /etc/clickhouse-server/config.d/weir.xml "$CH_CONF" && changed=1

	# Fast path: running with our config (HTTP answers, UTC, native port open).
	tz=$(ch_query 'SELECT timezone()' 2>/dev/null) || tz=""
	if [ -n "$tz" ] && [ "$changed" = 0 ] && ch_tz_ok "$tz" &&
		ver=$(ch_query 'SELECT version()' 2>/dev/null) && (: </dev/tcp/127.0.0.1/9000) 2>/dev/null; then
		echo "clickhouse ok ($ver, native 127.0.0.1:9000, http 127.0.0.1:8123, timezone $tz)$action"
		return
	fi
	getent passwd clickhouse >/dev/null || die "user clickhouse missing (it comes with the clickhouse-server package)"
	local d
	for d in /var/lib/clickhouse /var/log/clickhouse-server; do
		[ "$(stat -c %U:%G "$d" 2>/dev/null)" = clickhouse:clickhouse ] ||
			install -d -o clickhouse -g clickhouse -m 0750 "$d"
	done
	if ch_ping; then
		note "restarting ClickHouse to apply config.d/weir.xml"
		ch_stop
		action="$action (restarted)"
	else
		action="$action (started)"
	fi
	ch_start
	tz=$(ch_query 'SELECT timezone()') || die "ClickHouse HTTP query on $CH_HTTP failed"
	ch_tz_ok "$tz" || die "ClickHouse timezone is '$tz', want UTC (config.d/weir.xml not applied?)"

	ver=$(clickhouse-client --host 127.0.0.1 --port 9000 --query 'SELECT version()' 2>&1) ||
		die "clickhouse-client cannot query 127.0.0.1:9000: $ver"
	echo "clickhouse ok ($ver, native 127.0.0.1:9000, http 127.0.0.1:8123, timezone $tz)$action"
}

###############################################################################
# BigQuery emulator (github.com/goccy/bigquery-emulator)
###############################################################################
BQ_VERSION=v0.6.6
BQ_DIR=/var/cache/weir/bq # the binary is cached here: CI on this machine reuses it
BQ_BIN=$BQ_DIR/bigquery-emulator
BQ_PROJECT=test-project
BQ_DATASET=weir_test
BQ_PORT=9050
BQ_GRPC_PORT=9060
BQ_API=http://127.0.0.1:$BQ_PORT

bq_ping() { curl -sf --max-time 5 "$BQ_API/bigquery/v2/projects/$BQ_PROJECT/datasets/$BQ_DATASET" >/dev/null; }

# bq_build — compile the emulator from a small module (go install …@version
# fails: the module proxy refuses the version list go install reads for
# deprecation notices). Niced: it compiles ZetaSQL's C++ through cgo.
bq_build() {
	command -v go >/dev/null || die "go is needed to build the BigQuery emulator"
	command -v clang++ >/dev/null || apt_install clang # Debian's g++ 12 fails on ZetaSQL (constexpr, C linkage)
	local src=$BQ_DIR/src log=$BQ_DIR/build.log t0=$SECONDS
	mkdir -p "$src"
	note "building the BigQuery emulator $BQ_VERSION: it compiles ZetaSQL, ~20 minutes on 2 cores with clang, once per machine (log: $log)"
	# (&& chains: errexit does not apply inside a subshell followed by ||)
	(
		cd "$src" && export GOFLAGS=-mod=mod CGO_ENABLED=1 CC=clang CXX=clang++ &&
			{ [ -f go.mod ] || go mod init bqbuild; } &&
			go get "github.com/goccy/bigquery-emulator@$BQ_VERSION" &&
			nice -n 19 go build -o "$BQ_BIN.new" github.com/goccy/bigquery-emulator/cmd/bigquery-emulator
	) </dev/null >>"$log" 2>&1 9>&- || { tail -n 30 "$log" >&2; die "building the BigQuery emulator failed (log: $log)"; }
	mv -f "$BQ_BIN.new" "$BQ_BIN"
	BQ_ACTION=" (built in $((SECONDS - t0))s)"
	echo "services.sh: bigquery-emulator $BQ_VERSION built in $((SECONDS - t0))s" >>"$log"
}

# bq_want_build — whether a missing emulator binary is built now. CI must
# have the emulator (its tests fail without it), so CI builds; elsewhere it
# is built when the tools are at hand, unless WEIR_BUILD_BIGQUERY=0.
bq_want_build() {
	case "${WEIR_BUILD_BIGQUERY:-}" in
	1) return 0 ;;
	0) return 1 ;;
	esac
	[ "${CI:-}" = true ] && return 0
	command -v go >/dev/null && command -v clang++ >/dev/null
}

# bq_build_unlocked — build without holding the services lock: the build
# outlasts the 15 minutes other runs wait for that lock. Builds are
# serialised by their own lock; a run that waited finds the binary built.
bq_build_unlocked() {
	mkdir -p "$BQ_DIR"
	flock -u 9
	exec 8>"$BQ_DIR/build.lock"
	flock -w 7200 8 || die "another BigQuery emulator build has held $BQ_DIR/build.lock for 2 hours"
	[ -x "$BQ_BIN" ] || bq_build
	exec 8>&-
	flock -w 900 9 || die "another services.sh has held the lock for 15 minutes"
}

# bq_stop_wedged — an emulator that listens but no longer answers (its
# SQLite catalog can break under concurrent writers: every call then fails
# with "sql: connection is already closed") is stopped, to be started again.
bq_stop_wedged() {
	local pid
	pid=$(ss -Hltnp "sport = :$BQ_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
	[ -n "$pid" ] || return 0
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$BQ_BIN" ] ||
		die "127.0.0.1:$BQ_PORT is taken by another program (pid $pid), not the BigQuery emulator"
	note "the BigQuery emulator (pid $pid) listens but does not answer: restarting it"
	kill "$pid"
	wait_until "$WAIT_SECS" bash -c "! kill -0 $pid" ||
		die "the BigQuery emulator (pid $pid) did not stop within ${WAIT_SECS}s"
	BQ_ACTION=" (restarted: it had stopped answering)"
}

setup_bigquery() {
	BQ_ACTION=""
	if bq_ping; then
		echo "bigquery ok (emulator $BQ_VERSION on 127.0.0.1:$BQ_PORT, project $BQ_PROJECT)"
		return
	fi
	[ -x "$BQ_BIN" ] && bq_stop_wedged
	if [ ! -x "$BQ_BIN" ]; then
		if ! bq_want_build; then
			note "bigquery: no emulator binary at $BQ_BIN and no go/clang++ to build it (or WEIR_BUILD_BIGQUERY=0); its tests skip (and fail under CI=true)"
			return
		fi
		bq_build_unlocked
		if bq_ping; then # started by a run that held the lock meanwhile
			echo "bigquery ok (emulator $BQ_VERSION on 127.0.0.1:$BQ_PORT, project $BQ_PROJECT)$BQ_ACTION"
			return
		fi
	fi
	# A plain command with setsid, like ClickHouse: it outlives this script
	# and does not hold the lock.
	setsid "$BQ_BIN" --project="$BQ_PROJECT" --dataset="$BQ_DATASET" --host=127.0.0.1 \
		--port="$BQ_PORT" --grpc-port="$BQ_GRPC_PORT" </dev/null >>"$LOG_DIR/bigquery-emulator.log" 2>&1 9>&- &
	wait_until "$WAIT_SECS" bq_ping || {
		tail -n 20 "$LOG_DIR/bigquery-emulator.log" >&2 2>/dev/null || true
		die "the BigQuery emulator did not answer $BQ_API within ${WAIT_SECS}s (log: $LOG_DIR/bigquery-emulator.log)"
	}
	echo "bigquery ok (emulator $BQ_VERSION on 127.0.0.1:$BQ_PORT, project $BQ_PROJECT)$BQ_ACTION (started)"
}

setup_postgres
setup_mariadb
setup_clickhouse
setup_bigquery
