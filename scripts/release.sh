#!/usr/bin/env bash
# scripts/release.sh — build release binaries of weir and print their sizes.
#
#   scripts/release.sh [VERSION] [GOOS/GOARCH ...]
#
# VERSION defaults to `git describe --tags --always --dirty`; the targets to the
# host's platform. Binaries go to dist/weir-VERSION-GOOS-GOARCH, stripped (-s -w),
# with the version stamped into `weir version` (-X main.version) and the DuckDB
# engine linked (cgo). DuckDB is a C++ library linked through
# cgo, so a target other than the host needs a C toolchain for it (CC=...);
# the simplest cross build is the Dockerfile on the target platform.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("$(go env GOOS)/$(go env GOARCH)")

mkdir -p dist
for target in "${targets[@]}"; do
	goos=${target%/*} goarch=${target#*/}
	out=dist/weir-$version-$goos-$goarch
	CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch GOFLAGS= \
		go build -trimpath -ldflags "-s -w -X main.version=$version -X main.commit=$(git rev-parse HEAD 2>/dev/null)" -o "$out" ./cmd/weir
	printf '%s\t%s MiB\n' "$out" "$(( $(stat -c %s "$out") / 1024 / 1024 ))"
done
