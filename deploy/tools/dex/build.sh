#!/usr/bin/env bash
# Builds the Dex identity provider (v2.45.1) that the SSO tests start on
# loopback, once, into a cache, and prints the binary's path. Quick when the
# binary is already there. `go install` cannot build Dex (its go.mod has a
# replace directive), so it is built from the tools module beside this script.
#
# The binary goes to $COFFER_DEX_BIN if set, else to
# ${XDG_CACHE_HOME:-$HOME/.cache}/coffer/dex-v2.45.1 (where sso/ssotest looks).
set -euo pipefail

version=v2.45.1
out=${COFFER_DEX_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/coffer/dex-$version}

if [ ! -x "$out" ]; then
  dir=$(cd "$(dirname "$0")" && pwd)
  mkdir -p "$(dirname "$out")"
  tmp="$out.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  echo "dex: building $version into $out (first time only, a few minutes)" >&2
  # Memory storage only, so no cgo: faster to build, and no C toolchain needed.
  (cd "$dir" && GOWORK=off CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=$version" \
    -o "$tmp" github.com/dexidp/dex/cmd/dex)
  # A rename is atomic, so a concurrent build or reader never sees half a file.
  mv -f "$tmp" "$out"
fi
echo "$out"
