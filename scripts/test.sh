#!/usr/bin/env bash
# scripts/test.sh — the one test command (locally and in CI via .ci/run).
#
#   scripts/test.sh                      services, build, vet, gofmt, go test ./...
#   scripts/test.sh -run X ./routes/...  the same, but go test gets these args
#                                        instead of ./...
#
# Brings the project's own test servers up (scripts/services.sh: PostgreSQL,
# MariaDB, ClickHouse in /var/tmp/weir-test on ports of their own, the BigQuery
# emulator — built on a machine's first run, ~20 minutes — an SQS server,
# fauxqs from npm, and an etcd), exports where the
# tests find them (scripts/env.sh), then checks. The machine's own servers are
# fingerprinted before and compared after (scripts/system-servers.sh): a run that
# changed them fails.
# With CI=true a test whose server is missing fails instead of skipping.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

# The machine's own servers must come out of the run as they went in (issue 21):
# fingerprinted now, compared when this script exits, whatever the outcome.
# Installing missing server packages comes first: a package's install may create
# its config in /etc and start the system's instance, which is then the system's.
step "server packages"
bash scripts/services.sh install
step "system servers: fingerprint (compared at the end)"
system_before=$(mktemp)
bash scripts/system-servers.sh >"$system_before"
echo "$(wc -l <"$system_before") facts about the machine's own PostgreSQL, MariaDB, ClickHouse"
compare_system() {
	local rc=$?
	step "system servers: unchanged?"
	bash scripts/system-servers.sh compare "$system_before" || rc=1
	rm -f "$system_before"
	exit "$rc"
}
trap compare_system EXIT

step "services"
bash scripts/services.sh

# shellcheck source=scripts/env.sh
source scripts/env.sh
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
export CGO_ENABLED="${CGO_ENABLED:-1}" # DuckDB needs cgo

step "go build ./...  (GOFLAGS=${GOFLAGS:-})"
go build ./...

step "go build ./cmd/weir with -tags=duckdb_arrow (the old tag must still build) and without cgo (transfers only; models say how to build)"
GOFLAGS=-tags=duckdb_arrow go build -o /dev/null ./cmd/weir
CGO_ENABLED=0 go build -o /dev/null ./cmd/weir

step "go vet ./..."
go vet ./...

step "Argo v4 lint of the generated Argo files (generate/argolint: argo lint --offline --strict)"
# Its own module, so weir never links Kubernetes; the first build downloads
# and compiles Argo and client-go (minutes). One run per golden folder: the
# offline client refuses two templates of the same name.
argolint="$(mktemp -d)/argolint"
(cd generate/argolint && GOFLAGS= go build -o "$argolint" .)
for dir in generate/testdata/golden/*/; do
	manifests=("$dir"*.yaml)
	[ -e "${manifests[0]}" ] || continue
	"$argolint" "${manifests[@]}"
done

step "gofmt -l ."
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	printf 'gofmt: these files need formatting (run gofmt -w):\n%s\n' "$unformatted" >&2
	exit 1
fi

[ "$#" -gt 0 ] || set -- ./...
step "go test -count=1 -timeout 60m $*"
go test -count=1 -timeout 60m "$@" # (no exec: the EXIT trap compares the system servers)
