#!/usr/bin/env bash
# scripts/services.sh — the servers weir's integration tests talk to: private
# instances of the project's own, in one directory, on their own ports. The
# machine's own servers (a system PostgreSQL on 5432, MariaDB on 3306, a
# ClickHouse started by its Debian package) and their configs in /etc are never
# read, edited, restarted or stopped.
#
#   scripts/services.sh          start what is not running (also: `start`)
#   scripts/services.sh stop     stop the private instances (their data stays)
#   scripts/services.sh status   one line per instance: running or not
#   scripts/services.sh install  only install the Debian packages that are missing
#
#   PostgreSQL  127.0.0.1:15432  Debian's binaries (/usr/lib/postgresql/N/bin), initdb'd
#               into $DIR/pg; trust for root (superuser) incl. replication,
#               wal_level=logical, 20 slots/senders, db "test"
#   MariaDB     127.0.0.1:13306  mariadb-install-db into $DIR/mariadb/data, its own option
#               file $DIR/mariadb/my.cnf (--defaults-file: /etc/mysql is not read);
#               root without password, ROW binlog with full row metadata, local_infile,
#               db "test"
#   ClickHouse  127.0.0.1:19000 (native), :18123 (HTTP); Debian's 18.16 with its own
#               config in $DIR/clickhouse (nothing in /etc/clickhouse-server), timezone
#               UTC, user default without password
#   BigQuery    127.0.0.1:9050 (REST), :9060 (gRPC): goccy/bigquery-emulator, project
#               test-project, dataset weir_test; built once from the Go module proxy (it
#               compiles ZetaSQL with clang: ~20 minutes on 2 cores, logged in
#               /var/cache/weir/bq/build.log) and cached in /var/cache/weir/bq, so only the
#               first run on a machine pays for it. Built when missing under CI=true, or when
#               go and clang++ are at hand; WEIR_BUILD_BIGQUERY=1 forces it, =0 skips it.
#               Under CI=true an emulator of this directory's up for over an hour is
#               restarted (it keeps its catalog in memory and wedges after long use)
#   SQS         127.0.0.1:19324 (WEIR_TEST_SQS_PORT): fauxqs 1.9.2 from npm, which speaks the
#               JSON protocol (X-Amz-Target AmazonSQS.*) aws-sdk-go-v2's SQS client uses
#               (sqslite 2.1.1 speaks only the query protocol: it answers 415 to JSON);
#               installed with `npm ci` from scripts/sqs/package-lock.json into
#               /var/cache/weir/fauxqs (Debian's nodejs and npm installed when missing),
#               run by scripts/sqs/serve.mjs on 127.0.0.1 only; in memory, log in
#               log/fauxqs.log (trimmed at start)
#   etcd        127.0.0.1:12379 (client), :12380 (peer): Debian's etcd-server 3.4, one member
#               run as user etcd with its data in $DIR/etcd/data; history compacted after an
#               hour (--auto-compaction-retention), database capped at 256 MB
#               (--quota-backend-bytes); no auth. Its settings are its flags: a running etcd
#               started with other flags is restarted
#
# Layout: everything lives in DIR=${WEIR_TEST_DIR:-/var/tmp/weir-test} (it must be
# traversable by the users postgres, mysql and clickhouse; a second set of instances in
# another directory also needs WEIR_TEST_PG_PORT, WEIR_TEST_MYSQL_PORT,
# WEIR_TEST_CLICKHOUSE_PORT, WEIR_TEST_CLICKHOUSE_HTTP_PORT, WEIR_TEST_SQS_PORT,
# WEIR_TEST_ETCD_PORT, WEIR_TEST_ETCD_PEER_PORT, and shares the emulator):
#   pg/  pg-sock/             PostgreSQL's data directory (own postgresql.conf, pg_hba.conf,
#                             weir.conf with the settings below; logs in pg/log) and socket
#   mariadb/                  my.cnf, data/, socket, pid, error.log
#   clickhouse/               config.xml, users.xml, data/, tmp/, user_files/, log/
#   etcd/                     data/, etcd.pid, etcd.log (trimmed at start)
#   log/                      this script's logs (apt, the BigQuery emulator, fauxqs)
#   env.sh, ready             written by a run that brought all up (`stop` removes ready):
#                             `source $DIR/env.sh` exports the WEIR_TEST_* URLs
# Nothing grows without bound: retained WAL is capped (max_slot_wal_keep_size: an
# abandoned replication slot is invalidated instead of filling the disk), binlogs expire
# after a day, server logs rotate (PostgreSQL hourly and truncated, ClickHouse by size),
# other logs are trimmed at start, etcd compacts its history hourly under a 256 MB quota.
# Remove everything with `scripts/services.sh stop` and `rm -rf $DIR`. Packages come
# from Debian (postgresql, mariadb-server, clickhouse-server, etcd-server, nodejs and npm
# for the SQS server) and are installed when missing; installing them may start the
# system's own servers on their standard ports: those are left alone. (/var/tmp is pruned of files unused for 30
# days by systemd-tmpfiles on some machines: if an instance then fails to start, stop
# it and remove its directory; the next run creates it again.)
#
# Idempotent and safe to run many times (runs are serialised with a lock). When
# everything is already up it only checks (one query per server). An instance is
# restarted only when a setting it needs is not in effect. Runs as root (it runs each
# server as its own system user), without systemd and without stdin (CI=true). Prints
# one line per service; exits non-zero with a message on stderr if a service cannot
# be brought up.
#
# Older versions of this script configured the system's servers instead. On a machine
# where they ran, undo that by hand (then restart those servers yourself):
#   rm /etc/postgresql/*/main/conf.d/99-weir.conf   (and the "include_dir = 'conf.d'
#       # added by weir" line in postgresql.conf, if it was added)
#   mv /etc/postgresql/*/main/pg_hba.conf.weir-orig /etc/postgresql/*/main/pg_hba.conf
#   rm /etc/mysql/mariadb.conf.d/99-weir.cnf        (and the "# added by weir" !includedir
#       lines at the end of /etc/mysql/my.cnf, if they were added)
#   rm /etc/clickhouse-server/config.d/weir.xml
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

CMD=${1:-start}
case "$CMD" in
start | stop | status | install) ;;
*)
	printf 'usage: %s [start|stop|status|install]\n' "$0" >&2
	exit 2
	;;
esac

DIR=${WEIR_TEST_DIR:-/var/tmp/weir-test}
WAIT_SECS=${WEIR_SERVICES_WAIT:-90} # bound on every "wait until it answers"
LOG_DIR=$DIR/log

# A second set of instances (another WEIR_TEST_DIR) needs other ports.
PG_PORT=${WEIR_TEST_PG_PORT:-15432}
MY_PORT=${WEIR_TEST_MYSQL_PORT:-13306}
CH_TCP_PORT=${WEIR_TEST_CLICKHOUSE_PORT:-19000}
CH_HTTP_PORT=${WEIR_TEST_CLICKHOUSE_HTTP_PORT:-18123}
BQ_PORT=9050
BQ_GRPC_PORT=9060
SQS_PORT=${WEIR_TEST_SQS_PORT:-19324}
ETCD_PORT=${WEIR_TEST_ETCD_PORT:-12379}
ETCD_PEER_PORT=${WEIR_TEST_ETCD_PEER_PORT:-12380}

die() { printf 'services.sh: error: %s\n' "$*" >&2; exit 1; }
note() { printf 'services.sh: %s\n' "$*" >&2; }

# scripts/sqs (package.json, its lock, serve.mjs), found before leaving the
# directory the script was started from.
SQS_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/sqs

# Everything below runs from / so no server inherits a working directory that
# may disappear (CI runs from a temporary clone).
cd /
case "$DIR" in /*) ;; *) die "WEIR_TEST_DIR must be an absolute path, got '$DIR'" ;; esac

# wait_until SECONDS CMD... — poll CMD until it succeeds or SECONDS pass.
wait_until() {
	local secs=$1; shift
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.25
	done
}

not() { ! "$@"; }

# wait_started PID SECONDS CMD... — like wait_until, but give up as soon as
# the server started in the background as PID has exited.
wait_started() {
	local pid=$1 secs=$2; shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		proc_alive "$pid" || return 1
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

# trim_log FILE — keep a log written only while a server starts (or by a server
# that does not rotate its own) from growing: above 20 MB keep its last 1 MB.
# Called only while that server is stopped.
trim_log() {
	local f=$1 size
	size=$(stat -c %s "$f" 2>/dev/null) || return 0
	((size > 20 * 1024 * 1024)) || return 0
	tail -c 1048576 "$f" >"$f.weir-new" && cat "$f.weir-new" >"$f" # keeps owner and mode
	rm -f "$f.weir-new"
}

# pid_alive PIDFILE COMM — whether the pid in PIDFILE (its first number) is a
# live process named COMM. A zombie is dead (a killed server's is reaped late
# where pid 1 is not an init).
pid_alive() {
	local pid
	pid=$(grep -o -m1 '[0-9][0-9]*' "$1" 2>/dev/null | head -n 1) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && proc_alive "$pid"
}

proc_alive() { # PID: a process that has not exited (not a zombie)
	local state
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ -n "$state" ] && [ "${state%% *}" != Z ]
}

# stop_pid NAME PIDFILE COMM — SIGTERM the process and wait until it is gone.
stop_pid() {
	local name=$1 pidfile=$2 comm=$3 pid
	pid_alive "$pidfile" "$comm" || { echo "$name stopped (was not running)"; return 0; }
	pid=$(grep -o -m1 '[0-9][0-9]*' "$pidfile" | head -n 1)
	kill "$pid"
	wait_until "$WAIT_SECS" not pid_alive "$pidfile" "$comm" ||
		die "$name (pid $pid) did not stop within ${WAIT_SECS}s"
	echo "$name stopped"
}

###############################################################################
# PostgreSQL
###############################################################################
PG_DATA=$DIR/pg
PG_SOCK=$DIR/pg-sock
PG_WANT="logical 20 20 4GB t"
PG_CONF="# weir scripts/services.sh: the test instance's settings (included last by postgresql.conf).
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG_SOCK'
max_connections = 200
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
# an abandoned replication slot is invalidated past this, instead of filling the disk
max_slot_wal_keep_size = 4GB
max_wal_size = 1GB
logging_collector = on
log_directory = 'log'
log_filename = 'postgresql-%H.log'
log_rotation_age = 60
log_rotation_size = 0
log_truncate_on_rotation = on
timezone = 'UTC'"
PG_HBA='# weir scripts/services.sh: trust on the socket and on loopback, replication included.
local all         all                trust
local replication all                trust
host  all         all   127.0.0.1/32 trust
host  replication all   127.0.0.1/32 trust'
PG_PROBE_SQL="SELECT current_setting('wal_level'), current_setting('max_replication_slots'),
	current_setting('max_wal_senders'), current_setting('max_slot_wal_keep_size'),
	(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"

# pg_bin_dir — the binaries matching the data directory's version, else the newest.
pg_bin_dir() {
	local v
	if [ -f "$PG_DATA/PG_VERSION" ]; then
		v=$(<"$PG_DATA/PG_VERSION")
		[ -x "/usr/lib/postgresql/$v/bin/postgres" ] && { echo "/usr/lib/postgresql/$v/bin"; return; }
		die "$PG_DATA is a PostgreSQL $v data directory but /usr/lib/postgresql/$v/bin is missing (remove $PG_DATA to start afresh)"
	fi
	local bins=(/usr/lib/postgresql/*/bin/postgres)
	[ -x "${bins[0]}" ] || return 1
	# newest version: sort numerically (glob order is lexical)
	printf '%s\n' "${bins[@]}" | sort -t/ -k4,4n | tail -n 1 | xargs dirname
}

pg_as() { runuser -u postgres -- "$@"; }

# pg_probe — what the tests see: TCP, trust, role root, database test.
pg_probe() {
	"$PG_BIN/psql" -X -q -A -t -F ' ' -h 127.0.0.1 -p "$PG_PORT" -U root -d test -c "$PG_PROBE_SQL" 2>&1
}

pg_admin() { # psql as postgres over the instance's socket
	"$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$PG_PORT" -U postgres -d postgres "$@"
}

pg_running() { pid_alive "$PG_DATA/postmaster.pid" postgres; }

pg_ctl_do() { # pg_ctl start|stop|restart|reload; on failure show the server log and die
	local log=$PG_DATA/startup.log
	[ "$1" = reload ] || trim_log "$log"
	# pg_ctl puts the server in its own session; the lock's descriptor is closed.
	pg_as "$PG_BIN/pg_ctl" "$1" -D "$PG_DATA" -l "$log" -w -t "$WAIT_SECS" -m fast \
		</dev/null >>"$LOG_DIR/pg_ctl.log" 2>&1 9>&- || {
		tail -n 20 "$log" >&2 2>/dev/null || true
		die "pg_ctl $1 -D $PG_DATA failed (logs: $LOG_DIR/pg_ctl.log, $log, $PG_DATA/log/)"
	}
}

pg_init() {
	note "creating the PostgreSQL instance in $PG_DATA ($PG_BIN/initdb)"
	local tmp=$PG_DATA.init
	rm -rf "$tmp"
	install -d -o postgres -g postgres -m 0700 "$tmp"
	pg_as "$PG_BIN/initdb" -D "$tmp" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
		</dev/null >>"$LOG_DIR/initdb.log" 2>&1 ||
		{ tail -n 20 "$LOG_DIR/initdb.log" >&2; die "initdb failed (log: $LOG_DIR/initdb.log)"; }
	printf "\n# weir scripts/services.sh: its settings come last.\ninclude = 'weir.conf'\n" >>"$tmp/postgresql.conf"
	mv "$tmp" "$PG_DATA"
}

setup_postgres() {
	PG_BIN=$(pg_bin_dir) || die "no /usr/lib/postgresql/*/bin/postgres after installing postgresql"
	local action="" changed=0 got
	[ -f "$PG_DATA/PG_VERSION" ] || { pg_init; action=" (created)"; }
	install -d -o postgres -g postgres -m 0755 "$PG_SOCK"
	write_if_changed "$PG_DATA/weir.conf" "$PG_CONF" && changed=1
	write_if_changed "$PG_DATA/pg_hba.conf" "$PG_HBA" && changed=1
	[ "$changed" = 0 ] || chown postgres:postgres "$PG_DATA/weir.conf" "$PG_DATA/pg_hba.conf"

	# Fast path: already up and configured.
	if [ "$changed" = 0 ] && [ "$(pg_probe)" = "$PG_WANT" ]; then
		echo "postgres ok (PG $(<"$PG_DATA/PG_VERSION") on 127.0.0.1:$PG_PORT, wal_level=logical, data $PG_DATA)"
		return
	fi

	if ! pg_running; then
		# A killed postmaster left as a zombie still "exists" to the new one's
		# lock file check: wait until it is reaped.
		local old
		old=$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null) || old=""
		[ -z "$old" ] || wait_until "$WAIT_SECS" test ! -e "/proc/$old" ||
			die "PostgreSQL's previous postmaster (pid $old) has not been reaped in ${WAIT_SECS}s"
		pg_ctl_do start
		[ -n "$action" ] || action=" (started)"
	elif [ "$changed" = 1 ]; then
		pg_ctl_do reload
	fi
	wait_until "$WAIT_SECS" pg_admin -c 'SELECT 1' ||
		die "PostgreSQL did not accept connections on $PG_SOCK within ${WAIT_SECS}s (logs: $PG_DATA/log/)"

	# Settings that need a restart (wal_level, slots, senders, port).
	if [ "$(pg_admin -F ' ' -c "SELECT count(*) FROM pg_settings WHERE pending_restart")" != 0 ]; then
		note "restarting the PostgreSQL instance for settings that need a restart"
		pg_ctl_do restart
		action=" (restarted)"
	fi

	# Role root (superuser; what the tests connect as) and database test.
	[ "$(pg_admin -c "SELECT rolsuper AND rolcanlogin FROM pg_roles WHERE rolname = 'root'")" = t ] ||
		pg_admin -c "DO \$\$ BEGIN
			IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'root') THEN ALTER ROLE root SUPERUSER LOGIN;
			ELSE CREATE ROLE root SUPERUSER LOGIN; END IF; END \$\$" >/dev/null
	[ "$(pg_admin -c "SELECT count(*) FROM pg_database WHERE datname = 'test'")" = 1 ] ||
		pg_admin -c "CREATE DATABASE test OWNER root" >/dev/null

	got=$(pg_probe)
	[ "$got" = "$PG_WANT" ] ||
		die "PostgreSQL as root@127.0.0.1:$PG_PORT/test: got '$got', want '$PG_WANT' (wal_level, slots, senders, max_slot_wal_keep_size, superuser)"
	echo "postgres ok (PG $(<"$PG_DATA/PG_VERSION") on 127.0.0.1:$PG_PORT, wal_level=logical, data $PG_DATA)$action"
}

stop_postgres() {
	PG_BIN=$(pg_bin_dir 2>/dev/null) || { echo "postgres stopped (no binaries)"; return; }
	if [ -f "$PG_DATA/PG_VERSION" ] && pg_running; then
		pg_ctl_do stop
		echo "postgres stopped"
	else
		echo "postgres stopped (was not running)"
	fi
}

status_postgres() {
	if [ -f "$PG_DATA/postmaster.pid" ] && pid_alive "$PG_DATA/postmaster.pid" postgres; then
		echo "postgres running (127.0.0.1:$PG_PORT, pid $(head -n 1 "$PG_DATA/postmaster.pid"), data $PG_DATA)"
	else
		echo "postgres not running (data $PG_DATA$([ -d "$PG_DATA" ] || echo ': not created'))"
	fi
}

###############################################################################
# MariaDB
###############################################################################
MY_DIR=$DIR/mariadb
MY_CNF=$MY_DIR/my.cnf
MY_PID=$MY_DIR/mariadbd.pid
MY_WANT="ON,ROW,FULL,FULL,ON,1,$MY_PORT,86400"
MY_CONF="# weir scripts/services.sh: the test instance's only option file (--defaults-file).
[client]
socket = $MY_DIR/mariadbd.sock
port = $MY_PORT

[mysqld]
datadir = $MY_DIR/data
socket = $MY_DIR/mariadbd.sock
pid-file = $MY_PID
log-error = $MY_DIR/error.log
port = $MY_PORT
bind-address = 127.0.0.1
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
server_id = 1
log_bin = mysql-bin
binlog_format = ROW
binlog_row_image = FULL
binlog_row_metadata = FULL
# binlogs rotate at 256 MB and are purged after a day
max_binlog_size = 256M
binlog_expire_logs_seconds = 86400
local_infile = 1
# no warning per aborted connection (tests drop connections on purpose)
log_warnings = 1"
MY_SETTINGS_SQL="CONCAT_WS(',', @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata,
	@@local_infile, @@server_id, @@port, @@binlog_expire_logs_seconds)"

my_admin() { # mariadb as root over the instance's socket, without writing to the binlog
	mariadb --defaults-file="$MY_CNF" -uroot -N -B --init-command='SET SESSION sql_log_bin = 0' "$@"
}

# my_probe — what the tests see: root over TCP without password, database test.
# Prints "settings|has test db|version" then the grants.
my_probe() {
	mariadb --no-defaults -h 127.0.0.1 -P "$MY_PORT" -uroot -N -B -e "SELECT CONCAT_WS('|', $MY_SETTINGS_SQL,
		(SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'test'), VERSION()); SHOW GRANTS" 2>&1
}

my_probe_ok() { # $1: output of my_probe
	local first=${1%%$'\n'*}
	[[ $first == "$MY_WANT|1|"* ]] && [[ $1 == *"GRANT ALL PRIVILEGES ON *.* TO "*"WITH GRANT OPTION"* ]]
}

my_ok_line() { # $1: output of my_probe, $2: what was done
	local ver=${1%%$'\n'*}
	ver=${ver##*|}
	echo "mariadb ok (MariaDB ${ver%%-*} on 127.0.0.1:$MY_PORT, binlog_format=ROW, local_infile=ON, data $MY_DIR/data)$2"
}

my_running() { pid_alive "$MY_PID" mariadbd; }

my_start() {
	trim_log "$MY_DIR/error.log"
	trim_log "$MY_DIR/stdout.log"
	# setsid: its own session, so it outlives this script; the lock's descriptor is closed.
	setsid runuser -u mysql -- /usr/sbin/mariadbd --defaults-file="$MY_CNF" \
		</dev/null >>"$MY_DIR/stdout.log" 2>&1 9>&- &
	# ping answers before auth works; wait for a real query.
	wait_started $! "$WAIT_SECS" my_admin -e 'SELECT 1' || {
		tail -n 20 "$MY_DIR/error.log" >&2 2>/dev/null || true
		die "MariaDB did not come up within ${WAIT_SECS}s (log: $MY_DIR/error.log)"
	}
}

my_stop() {
	my_running || return 0
	my_admin -e 'SHUTDOWN' >/dev/null 2>&1 || kill "$(grep -o -m1 '[0-9][0-9]*' "$MY_PID")" 2>/dev/null || true
	wait_until "$WAIT_SECS" not my_running || die "MariaDB did not stop within ${WAIT_SECS}s"
}

my_init() {
	note "creating the MariaDB instance in $MY_DIR/data (mariadb-install-db)"
	local tmp=$MY_DIR/data.init
	rm -rf "$tmp"
	install -d -o mysql -g mysql -m 0750 "$tmp"
	# --auth-root-authentication-method=normal: root@localhost without a password
	# (not unix_socket): the tests connect as root over TCP.
	mariadb-install-db --defaults-file="$MY_CNF" --user=mysql --datadir="$tmp" \
		--auth-root-authentication-method=normal --skip-test-db \
		</dev/null >>"$LOG_DIR/mariadb-install-db.log" 2>&1 ||
		{ tail -n 20 "$LOG_DIR/mariadb-install-db.log" >&2; die "mariadb-install-db failed (log: $LOG_DIR/mariadb-install-db.log)"; }
	mv "$tmp" "$MY_DIR/data"
}

setup_mariadb() {
	local action="" conf_changed=0 probe got
	install -d -o mysql -g mysql -m 0755 "$MY_DIR"
	write_if_changed "$MY_CNF" "$MY_CONF" && conf_changed=1

	# Fast path: already up and configured.
	probe=$(my_probe) || true
	if [ "$conf_changed" = 0 ] && my_probe_ok "$probe"; then
		my_ok_line "$probe" ""
		return
	fi

	[ -d "$MY_DIR/data/mysql" ] || { my_init; action=" (created)"; }
	if ! my_running; then
		my_start
		[ -n "$action" ] || action=" (started)"
	elif [ "$(my_admin -e "SELECT $MY_SETTINGS_SQL" 2>/dev/null)" != "$MY_WANT" ]; then
		note "restarting the MariaDB instance for the settings in $MY_CNF"
		my_stop
		my_start
		action=" (restarted)"
	fi
	got=$(my_admin -e "SELECT $MY_SETTINGS_SQL")
	[ "$got" = "$MY_WANT" ] ||
		die "MariaDB log_bin,binlog_format,row_image,row_metadata,local_infile,server_id,port,expire: $got, want $MY_WANT"

	# root over TCP without a password (skip-name-resolve: 'localhost' does not
	# match TCP from 127.0.0.1), and database test.
	my_admin -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
		ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
		CREATE USER IF NOT EXISTS 'root'@'localhost' IDENTIFIED BY '';
		GRANT ALL PRIVILEGES ON *.* TO 'root'@'localhost' WITH GRANT OPTION;
		CREATE DATABASE IF NOT EXISTS test;"

	probe=$(my_probe) || die "cannot connect as root@127.0.0.1:$MY_PORT: $probe"
	my_probe_ok "$probe" || die "MariaDB as root@127.0.0.1:$MY_PORT: got '$probe', want settings $MY_WANT, database test, all privileges"
	my_ok_line "$probe" "$action"
}

stop_mariadb() {
	if my_running; then
		my_stop
		echo "mariadb stopped"
	else
		echo "mariadb stopped (was not running)"
	fi
}

status_mariadb() {
	if my_running; then
		echo "mariadb running (127.0.0.1:$MY_PORT, pid $(grep -o -m1 '[0-9][0-9]*' "$MY_PID"), data $MY_DIR/data)"
	else
		echo "mariadb not running (data $MY_DIR/data$([ -d "$MY_DIR/data" ] || echo ': not created'))"
	fi
}

###############################################################################
# ClickHouse (Debian's clickhouse-server 18.16.1)
###############################################################################
CH_BIN=/usr/sbin/clickhouse-server
CH_DIR=$DIR/clickhouse
CH_STATUS=$CH_DIR/data/status # the running server writes "PID: n" there
CH_HTTP=http://127.0.0.1:$CH_HTTP_PORT
# 18.16 reads config.d/ and users.d/ next to the config file: there are none.
# Its root element is <yandex>; mark_cache_size and uncompressed_cache_size
# have no default. No interserver port (no replication), no query_log.
CH_CONF="<?xml version=\"1.0\"?>
<!-- weir scripts/services.sh: the test instance's config, passed as clickhouse-server's config file. -->
<yandex>
    <logger>
        <level>information</level>
        <log>$CH_DIR/log/clickhouse-server.log</log>
        <errorlog>$CH_DIR/log/clickhouse-server.err.log</errorlog>
        <size>50M</size>
        <count>3</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$CH_TCP_PORT</tcp_port>
    <http_port>$CH_HTTP_PORT</http_port>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>1073741824</uncompressed_cache_size>
    <mark_cache_size>536870912</mark_cache_size>
    <path>$CH_DIR/data/</path>
    <tmp_path>$CH_DIR/tmp/</tmp_path>
    <user_files_path>$CH_DIR/user_files/</user_files_path>
    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>
    <users_config>$CH_DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
</yandex>"
CH_USERS='<?xml version="1.0"?>
<!-- weir scripts/services.sh: user default without password, from loopback only. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>'

ch_query() { curl -sf --max-time 10 "$CH_HTTP/" --data-binary "$1"; }
ch_ping() { curl -sf --max-time 2 "$CH_HTTP/ping" >/dev/null; }
ch_tz_ok() { case "$1" in UTC | Etc/UTC) return 0 ;; *) return 1 ;; esac; } # 18.16 reports UTC as Etc/UTC
ch_running() { pid_alive "$CH_STATUS" clickhouse-serv; }

ch_start() {
	trim_log "$CH_DIR/log/stdout.log"
	# setsid: its own session, so it outlives this script; the lock's descriptor is closed.
	setsid runuser -u clickhouse -- "$CH_BIN" --config-file="$CH_DIR/config.xml" \
		</dev/null >>"$CH_DIR/log/stdout.log" 2>&1 9>&- &
	wait_started $! "$WAIT_SECS" ch_ping || {
		tail -n 20 "$CH_DIR/log/clickhouse-server.err.log" >&2 2>/dev/null || true
		die "ClickHouse did not answer $CH_HTTP/ping within ${WAIT_SECS}s (logs: $CH_DIR/log/)"
	}
}

setup_clickhouse() {
	local action="" changed=0 tz ver d
	getent passwd clickhouse >/dev/null || die "user clickhouse missing (it comes with the clickhouse-server package)"
	install -d -o clickhouse -g clickhouse -m 0755 "$CH_DIR"
	for d in data tmp user_files format_schemas log; do
		[ -d "$CH_DIR/$d" ] || install -d -o clickhouse -g clickhouse -m 0750 "$CH_DIR/$d"
	done
	write_if_changed "$CH_DIR/config.xml" "$CH_CONF" && changed=1
	write_if_changed "$CH_DIR/users.xml" "$CH_USERS" && changed=1

	# Fast path: running with our config (HTTP answers, UTC, native port open).
	tz=$(ch_query 'SELECT timezone()' 2>/dev/null) || tz=""
	if [ -n "$tz" ] && [ "$changed" = 0 ] && ch_tz_ok "$tz" &&
		ver=$(ch_query 'SELECT version()' 2>/dev/null) && (: </dev/tcp/127.0.0.1/$CH_TCP_PORT) 2>/dev/null; then
		echo "clickhouse ok ($ver, native 127.0.0.1:$CH_TCP_PORT, http 127.0.0.1:$CH_HTTP_PORT, timezone $tz, data $CH_DIR/data)$action"
		return
	fi
	if ch_running; then
		note "restarting the ClickHouse instance to apply $CH_DIR/config.xml"
		stop_pid clickhouse "$CH_STATUS" clickhouse-serv >/dev/null
		action="$action (restarted)"
	else
		action="$action (started)"
	fi
	ch_start
	tz=$(ch_query 'SELECT timezone()') || die "ClickHouse HTTP query on $CH_HTTP failed"
	ch_tz_ok "$tz" || die "ClickHouse timezone is '$tz', want UTC ($CH_DIR/config.xml not applied?)"

	ver=$(clickhouse-client --host 127.0.0.1 --port "$CH_TCP_PORT" --query 'SELECT version()' 2>&1) ||
		die "clickhouse-client cannot query 127.0.0.1:$CH_TCP_PORT: $ver"
	echo "clickhouse ok ($ver, native 127.0.0.1:$CH_TCP_PORT, http 127.0.0.1:$CH_HTTP_PORT, timezone $tz, data $CH_DIR/data)$action"
}

status_clickhouse() {
	if ch_running; then
		echo "clickhouse running (native 127.0.0.1:$CH_TCP_PORT, http 127.0.0.1:$CH_HTTP_PORT, pid $(grep -o -m1 '[0-9][0-9]*' "$CH_STATUS"), data $CH_DIR/data)"
	else
		echo "clickhouse not running (data $CH_DIR/data$([ -d "$CH_DIR/data" ] || echo ': not created'))"
	fi
}

###############################################################################
# BigQuery emulator (github.com/goccy/bigquery-emulator)
###############################################################################
BQ_VERSION=v0.6.6
BQ_DIR=/var/cache/weir/bq # the binary is cached here: CI on this machine reuses it
BQ_BIN=$BQ_DIR/bigquery-emulator
BQ_PROJECT=test-project
BQ_DATASET=weir_test
BQ_API=http://127.0.0.1:$BQ_PORT
BQ_LOG=$LOG_DIR/bigquery-emulator.log

bq_ping() { curl -sf --max-time 5 "$BQ_API/bigquery/v2/projects/$BQ_PROJECT/datasets/$BQ_DATASET" >/dev/null; }

BQ_PIDFILE=$DIR/bigquery-emulator.pid

# bq_pid — the emulator this directory's run started, if it still runs.
bq_pid() {
	local pid
	pid=$(cat "$BQ_PIDFILE" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$BQ_BIN" ] && echo "$pid"
}

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
	wait_until "$WAIT_SECS" not proc_alive "$pid" ||
		die "the BigQuery emulator (pid $pid) did not stop within ${WAIT_SECS}s"
	BQ_ACTION=" (restarted: it had stopped answering)"
}

# bq_stop_stale — under CI=true, an emulator of this directory's that has run
# for more than an hour is stopped, to be started afresh: its in-memory catalog
# grows with every test run and, after hours of concurrent use, it has wedged
# mid-run (every call then answered 500 "sql: connection is already closed",
# seen 2026-12-07), which a ping at the start cannot foresee.
bq_stop_stale() {
	local pid age
	[ "${CI:-}" = true ] || return 0
	pid=$(bq_pid) || return 0
	age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ') || return 0
	[ -n "$age" ] && [ "$age" -gt 3600 ] || return 0
	note "the BigQuery emulator (pid $pid) has run for ${age}s: restarting it for a fresh catalog"
	kill "$pid"
	wait_until "$WAIT_SECS" not proc_alive "$pid" ||
		die "the BigQuery emulator (pid $pid) did not stop within ${WAIT_SECS}s"
	BQ_ACTION=" (restarted: it had run for ${age}s)"
}

setup_bigquery() {
	BQ_ACTION=""
	bq_stop_stale
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
	trim_log "$BQ_LOG"
	# setsid: it outlives this script; the lock's descriptor is closed.
	setsid "$BQ_BIN" --project="$BQ_PROJECT" --dataset="$BQ_DATASET" --host=127.0.0.1 \
		--port="$BQ_PORT" --grpc-port="$BQ_GRPC_PORT" </dev/null >>"$BQ_LOG" 2>&1 9>&- &
	echo $! >"$BQ_PIDFILE" # setsid execs the emulator: $! is its pid
	wait_started $! "$WAIT_SECS" bq_ping || {
		tail -n 20 "$BQ_LOG" >&2 2>/dev/null || true
		die "the BigQuery emulator did not answer $BQ_API within ${WAIT_SECS}s (log: $BQ_LOG)"
	}
	echo "bigquery ok (emulator $BQ_VERSION on 127.0.0.1:$BQ_PORT, project $BQ_PROJECT)$BQ_ACTION (started)"
}

stop_bigquery() { # only the emulator started for this directory (a second set shares it)
	local pid
	pid=$(bq_pid) || { echo "bigquery stopped (none running that was started for $DIR)"; return 0; }
	kill "$pid"
	wait_until "$WAIT_SECS" not proc_alive "$pid" ||
		die "the BigQuery emulator (pid $pid) did not stop within ${WAIT_SECS}s"
	echo "bigquery stopped"
}

status_bigquery() {
	local pid
	if pid=$(bq_pid); then
		echo "bigquery running (127.0.0.1:$BQ_PORT, pid $pid)"
	elif bq_ping; then
		echo "bigquery running (127.0.0.1:$BQ_PORT, started for another directory or by hand)"
	else
		echo "bigquery not running$([ -x "$BQ_BIN" ] || echo " (no binary at $BQ_BIN)")"
	fi
}

###############################################################################
# SQS (fauxqs, from npm)
###############################################################################
SQS_DIR=/var/cache/weir/fauxqs                              # node_modules, reused across runs
SQS_LOG=$LOG_DIR/fauxqs.log
SQS_PIDFILE=$DIR/fauxqs.pid
SQS_API=http://127.0.0.1:$SQS_PORT

# sqs_ping — a JSON-protocol call, as aws-sdk-go-v2 makes it.
sqs_ping() {
	curl -sf --max-time 5 -X POST "$SQS_API/" -H 'Content-Type: application/x-amz-json-1.0' \
		-H 'X-Amz-Target: AmazonSQS.ListQueues' -d '{}' >/dev/null
}

sqs_pid() {
	local pid
	pid=$(cat "$SQS_PIDFILE" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = node ] && proc_alive "$pid" && echo "$pid"
}

# sqs_install — npm ci from the lock file when the cached install is not
# that lock's (the lock pins every package and its checksum).
sqs_install() {
	command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
	mkdir -p "$SQS_DIR"
	cp -f "$SQS_SRC/serve.mjs" "$SQS_DIR/serve.mjs"
	if [ -d "$SQS_DIR/node_modules/fauxqs" ] && cmp -s "$SQS_SRC/package-lock.json" "$SQS_DIR/package-lock.json"; then
		return 0
	fi
	cp -f "$SQS_SRC/package.json" "$SQS_SRC/package-lock.json" "$SQS_DIR/"
	note "installing fauxqs into $SQS_DIR (npm ci)"
	(cd "$SQS_DIR" && npm ci --no-audit --no-fund --loglevel=error) </dev/null >>"$LOG_DIR/npm.log" 2>&1 9>&- ||
		{ tail -n 20 "$LOG_DIR/npm.log" >&2; die "npm ci in $SQS_DIR failed (log: $LOG_DIR/npm.log)"; }
	SQS_ACTION=" (installed)"
}

setup_sqs() {
	SQS_ACTION=""
	sqs_install
	if sqs_ping; then
		echo "sqs ok (fauxqs on 127.0.0.1:$SQS_PORT)$SQS_ACTION"
		return
	fi
	(: </dev/tcp/127.0.0.1/"$SQS_PORT") 2>/dev/null && die "127.0.0.1:$SQS_PORT is taken by a program that does not answer SQS calls"
	trim_log "$SQS_LOG"
	# setsid: it outlives this script; the lock's descriptor is closed.
	FAUXQS_PORT=$SQS_PORT setsid node "$SQS_DIR/serve.mjs" </dev/null >>"$SQS_LOG" 2>&1 9>&- &
	echo $! >"$SQS_PIDFILE"
	wait_started $! "$WAIT_SECS" sqs_ping || {
		tail -n 20 "$SQS_LOG" >&2 2>/dev/null || true
		die "fauxqs did not answer $SQS_API within ${WAIT_SECS}s (log: $SQS_LOG)"
	}
	echo "sqs ok (fauxqs on 127.0.0.1:$SQS_PORT)$SQS_ACTION (started)"
}

stop_sqs() {
	local pid
	pid=$(sqs_pid) || { echo "sqs stopped (was not running)"; return 0; }
	kill "$pid"
	wait_until "$WAIT_SECS" not proc_alive "$pid" || die "fauxqs (pid $pid) did not stop within ${WAIT_SECS}s"
	echo "sqs stopped"
}

status_sqs() {
	local pid
	if pid=$(sqs_pid); then
		echo "sqs running (fauxqs on 127.0.0.1:$SQS_PORT, pid $pid)"
	else
		echo "sqs not running"
	fi
}

###############################################################################
# etcd (Debian's etcd-server 3.4)
###############################################################################
ETCD_BIN=/usr/bin/etcd
ETCD_DIR=$DIR/etcd
ETCD_PIDFILE=$ETCD_DIR/etcd.pid # written by the shell that execs etcd
ETCD_LOG=$ETCD_DIR/etcd.log
ETCD_API=http://127.0.0.1:$ETCD_PORT
# One member on loopback. It never grows: history older than an hour is
# compacted, the database is capped at 256 MB (past it etcd refuses writes
# with "mvcc: database space exceeded" rather than filling the disk), 5 WAL
# and snapshot files are kept, and the tests delete their keys.
ETCD_ARGS=(--name weir-test --data-dir "$ETCD_DIR/data"
	--listen-client-urls "$ETCD_API" --advertise-client-urls "$ETCD_API"
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT"
	--initial-cluster "weir-test=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
	--auto-compaction-mode periodic --auto-compaction-retention 1h
	--quota-backend-bytes 268435456 --max-wals 5 --max-snapshots 5
	--logger zap --log-outputs stderr --log-level warn)

etcd_ping() { curl -sf --max-time 5 "$ETCD_API/health" | grep -q '"health":"true"'; }
etcd_running() { pid_alive "$ETCD_PIDFILE" etcd; }

# etcd_args_ok — the running etcd was started with ETCD_ARGS (its settings
# are flags: a different command line means a setting not in effect).
etcd_args_ok() {
	local pid want got
	pid=$(grep -o -m1 '[0-9][0-9]*' "$ETCD_PIDFILE" 2>/dev/null) || return 1
	want=$(printf '%s\n' "$ETCD_BIN" "${ETCD_ARGS[@]}")
	got=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[ "$got" = "$want" ]
}

etcd_start() {
	trim_log "$ETCD_LOG"
	# setsid: its own session, so it outlives this script; the lock's descriptor
	# is closed. The shell writes its pid and execs etcd (runuser forks).
	setsid runuser -u etcd -- sh -c 'echo $$ >"$0"; exec "$@"' "$ETCD_PIDFILE" "$ETCD_BIN" "${ETCD_ARGS[@]}" \
		</dev/null >>"$ETCD_LOG" 2>&1 9>&- &
	wait_started $! "$WAIT_SECS" etcd_ping || {
		tail -n 20 "$ETCD_LOG" >&2 2>/dev/null || true
		die "etcd did not answer $ETCD_API/health within ${WAIT_SECS}s (log: $ETCD_LOG)"
	}
}

etcd_ok_line() {
	echo "etcd ok ($("$ETCD_BIN" --version 2>/dev/null | sed -n 's/^etcd Version: //p') on 127.0.0.1:$ETCD_PORT, peer :$ETCD_PEER_PORT, data $ETCD_DIR/data)$1"
}

setup_etcd() {
	local action=""
	getent passwd etcd >/dev/null || die "user etcd missing (it comes with the etcd-server package)"
	install -d -o etcd -g etcd -m 0755 "$ETCD_DIR"
	# Fast path: running with our flags and healthy.
	if etcd_running && etcd_args_ok && etcd_ping; then
		etcd_ok_line ""
		return
	fi
	if etcd_running; then
		note "restarting the etcd instance to apply its flags"
		stop_pid etcd "$ETCD_PIDFILE" etcd >/dev/null
		action=" (restarted)"
	else
		(: </dev/tcp/127.0.0.1/"$ETCD_PORT") 2>/dev/null && die "127.0.0.1:$ETCD_PORT is taken by a program that is not this directory's etcd"
		action=" (started)"
	fi
	[ -d "$ETCD_DIR/data" ] || action=" (created)"
	etcd_start
	etcd_ok_line "$action"
}

status_etcd() {
	if etcd_running; then
		echo "etcd running (127.0.0.1:$ETCD_PORT, pid $(grep -o -m1 '[0-9][0-9]*' "$ETCD_PIDFILE"), data $ETCD_DIR/data)"
	else
		echo "etcd not running (data $ETCD_DIR/data$([ -d "$ETCD_DIR/data" ] || echo ': not created'))"
	fi
}

###############################################################################
# Packages
###############################################################################
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
	apt-get install -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=300 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"$@" </dev/null >>"$log" 2>&1 9>&- ||
		{ tail -n 30 "$log" >&2; die "apt-get install $* failed (full log: $log)"; }
}

# install_packages — the Debian packages of the servers, those missing, in one
# apt-get run. Installing a server package may create its config in /etc and
# start the system's own instance: those are then the system's, never touched.
install_packages() {
	local pkgs=() t0=$SECONDS
	compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && command -v psql >/dev/null ||
		pkgs+=(postgresql postgresql-client)
	[ -x /usr/sbin/mariadbd ] && command -v mariadb >/dev/null && command -v mariadb-install-db >/dev/null ||
		pkgs+=(mariadb-server mariadb-client)
	[ -x "$CH_BIN" ] && command -v clickhouse-client >/dev/null || pkgs+=(clickhouse-server clickhouse-client)
	command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm) # the SQS server (fauxqs)
	[ -x "$ETCD_BIN" ] || pkgs+=(etcd-server)
	[ "${#pkgs[@]}" -gt 0 ] || return 0
	note "installing ${pkgs[*]} from Debian"
	apt_install "${pkgs[@]}"
	note "installed ${pkgs[*]} in $((SECONDS - t0))s"
}

###############################################################################
# main
###############################################################################
if [ "$CMD" = status ]; then
	status_postgres
	status_mariadb
	status_clickhouse
	status_bigquery
	status_sqs
	status_etcd
	[ -f "$DIR/ready" ] && echo "ready ($DIR/ready; URLs in $DIR/env.sh)" || echo "not ready (no $DIR/ready)"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "must run as root (it runs each server as its own system user)"
install -d -m 0755 "$DIR" "$LOG_DIR"

# One run at a time: developers' and CI's test runs may start this concurrently.
# Every command that may leave a daemon behind closes the lock's descriptor
# (9>&-), so no server holds the lock for its lifetime.
exec 9>"$DIR/services.lock"
flock -w 900 9 || die "another services.sh has held $DIR/services.lock for 15 minutes"

if [ "$CMD" = stop ]; then
	rm -f "$DIR/ready"
	stop_postgres
	stop_mariadb
	stop_pid clickhouse "$CH_STATUS" clickhouse-serv
	stop_bigquery
	stop_sqs
	stop_pid etcd "$ETCD_PIDFILE" etcd
	exit 0
fi

install_packages
[ "$CMD" = install ] && exit 0
for u in postgres mysql clickhouse etcd; do # each server must reach its directory
	runuser -u "$u" -- test -x "$DIR" || die "$DIR is not reachable by user $u: choose a WEIR_TEST_DIR whose parents are world-executable"
done

setup_postgres
setup_mariadb
setup_clickhouse
setup_bigquery
setup_sqs
setup_etcd

# What the tests connect to (scripts/env.sh holds the same defaults): plain
# exports, so that sourcing this file after an older env.sh points there.
write_if_changed "$DIR/env.sh" "# weir scripts/services.sh: the test instances' URLs (source this file).
export WEIR_TEST_PG='postgres://root@127.0.0.1:$PG_PORT/test?sslmode=disable'
export WEIR_TEST_MYSQL='mysql://root@127.0.0.1:$MY_PORT/test'
export WEIR_TEST_CLICKHOUSE='clickhouse://default@127.0.0.1:$CH_TCP_PORT/default'
export WEIR_TEST_CLICKHOUSE_HTTP='clickhouse+http://default@127.0.0.1:$CH_HTTP_PORT/default'
export WEIR_TEST_BIGQUERY='bigquery://test-project/weir_test?endpoint=http://127.0.0.1:$BQ_PORT&swap=dml'
export WEIR_TEST_SQS='http://127.0.0.1:$SQS_PORT'
export WEIR_TEST_ETCD='etcd://127.0.0.1:$ETCD_PORT'" || true
[ -f "$DIR/ready" ] || : >"$DIR/ready"
