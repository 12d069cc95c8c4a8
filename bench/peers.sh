#!/usr/bin/env bash
# Builds the peer tools the route benches compare weir with — Sling and
# ingestr, other projects' command-line programs — from the Go module proxy
# into a cache outside the repository, at pinned versions. They are run as
# external commands by the bench scripts (bench/lib.sh's peer_bin); nothing
# of theirs is linked into weir or kept in this repository.
#   bench/peers.sh
# Each peer is given by its module path and version (the projects' own
# module paths, as their go.mod files name them):
#   SLING_MODULE, SLING_VERSION       Sling's command module, e.g. <path>/cmd/sling
#   INGESTR_MODULE, INGESTR_VERSION   ingestr's command module
# Unset, a peer is skipped. A peer that cannot be fetched or built is
# reported and skipped; the bench scripts then print no column for it.
# Binaries go to $PEERS (default /var/cache/weir/peers), named
# <tool>-<version>; bench/lib.sh finds them there.
source "$(dirname "$0")/lib.sh"

build_peer() { # NAME MODULE VERSION
	local name=$1 mod=$2 ver=$3
	if [ -z "$mod" ] || [ -z "$ver" ]; then
		echo "$name: ${name^^}_MODULE and ${name^^}_VERSION not set, skipped" >&2
		return 0
	fi
	local out="$PEERS/$name-$ver"
	if [ -x "$out" ]; then echo "$name: $out (cached)"; return 0; fi
	local tmp; tmp=$(mktemp -d)
	# go install names the binary after the module's last element.
	if ! GOBIN="$tmp" GOFLAGS=-mod=mod timeout 1800 go install "$mod@$ver" >"$tmp/log" 2>&1; then
		echo "$name: go install $mod@$ver failed:" >&2
		tail -5 "$tmp/log" >&2
		rm -rf "$tmp"
		return 0
	fi
	mkdir -p "$PEERS"
	mv "$(find "$tmp" -maxdepth 1 -type f -perm -u+x | head -1)" "$out"
	rm -rf "$tmp"
	echo "$name: $out"
}

build_peer sling "${SLING_MODULE:-}" "${SLING_VERSION:-}"
build_peer ingestr "${INGESTR_MODULE:-}" "${INGESTR_VERSION:-}"
