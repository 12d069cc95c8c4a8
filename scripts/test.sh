#!/usr/bin/env bash
# scripts/test.sh — the one test command (locally and in CI via .ci/run).
#
#   scripts/test.sh                      services, build, vet, gofmt, go test ./...
#   scripts/test.sh -run X ./routes/...  the same, but go test gets these args
#                                        instead of ./...
#
# Brings the local servers up (scripts/services.sh: PostgreSQL, MariaDB,
# ClickHouse, the BigQuery emulator — built on a machine's first run, ~20
# minutes), exports where the tests find them (scripts/env.sh), then checks.
# With CI=true a test whose server is missing fails instead of skipping.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

step "services"
bash scripts/services.sh

# shellcheck source=scripts/env.sh
source scripts/env.sh
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
export CGO_ENABLED="${CGO_ENABLED:-1}" # DuckDB needs cgo

step "go build ./...  (GOFLAGS=$GOFLAGS)"
go build ./...

step "go build ./cmd/weir without the duckdb_arrow tag (transfers only; models say how to build)"
GOFLAGS= go build -o /dev/null ./cmd/weir

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

if [ "$#" -gt 0 ]; then
	step "go test -count=1 -timeout 60m $*"
	exec go test -count=1 -timeout 60m "$@"
fi
step "go test -count=1 -timeout 60m ./..."
exec go test -count=1 -timeout 60m ./...
