#!/usr/bin/env bash
# SimpleFIN import benchmark (spec/aggregator.md §14.4): 100,000
# transactions across 20 accounts from the fake Bridge, through a real
# worker on PostgreSQL and Redis, pinned to two cores; then a full re-sync
# that must write nothing. Prints both durations, rows/s and the peak RSS
# of the process (worker, fake Bridge and test together; VmHWM, and
# /usr/bin/time's maximum resident set when it is installed). Exits
# non-zero if the bar is missed. Creates and drops its own database.
#   bash deploy/loadtest/simplefin.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
: "${COFFER_TEST_REDIS_URL:=redis://127.0.0.1:6379}"
export COFFER_TEST_REDIS_URL COFFER_BENCH_SIMPLEFIN=1 GOMAXPROCS=2
bin=$(mktemp -d)/worker.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./worker/
run=("$bin" -test.run '^TestSimplefinBulkImport$' -test.count=1 -test.v)
if command -v taskset >/dev/null; then run=(taskset -c 0,1 "${run[@]}"); fi
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f 'peak RSS (time -v): %M kB, wall %e s' "${run[@]}" 2>&1 | grep -E 'simplefin bulk|peak RSS|PASS|FAIL|ok'
else
  "${run[@]}" | grep -E 'simplefin bulk|PASS|FAIL'
fi
