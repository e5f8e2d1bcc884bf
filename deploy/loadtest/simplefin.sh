#!/usr/bin/env bash
# SimpleFIN import benchmark (spec/aggregator.md §14.4): `coffer web` and
# `coffer worker` run as their own processes pinned to two cores
# (GOMAXPROCS=2, taskset -c 0,1) on PostgreSQL and Redis; 100,000
# transactions across 20 accounts go from POST /provider_connections on a
# fake Bridge to the completed sync; then a full re-sync must write
# nothing. Prints both durations, rows/s and the worker's peak RSS; exits
# non-zero if the bar is missed. Creates and drops its own database. Then
# the same in the embedded mode, with one `coffer dev` process.
#   bash deploy/loadtest/simplefin.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
: "${COFFER_TEST_REDIS_URL:=redis://127.0.0.1:6379}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/coffer" .
go test -c -o "$tmp/worker.test" ./worker/
run() { COFFER_TEST_REDIS_URL=$COFFER_TEST_REDIS_URL COFFER_BENCH_BIN=$tmp/coffer \
  "$tmp/worker.test" -test.run '^TestSimplefinBulkImport$' -test.count=1 -test.v; }
echo "== server mode (PostgreSQL + Redis; coffer web and coffer worker)"
run
echo "== embedded mode (SQLite + in-process Redis; one coffer dev process)"
COFFER_TEST_STORAGE=embedded run
