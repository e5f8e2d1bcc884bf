#!/usr/bin/env bash
# Load test of the hot endpoints against a real `coffer web` + `coffer
# worker` on PostgreSQL and Redis (loopback only, bounded, stops by itself).
# Prints idle RSS, then requests/s and p50/p99 for POST /transactions and
# GET /chats (1,000 chats) next to the bare SQL each request needs (the
# single INSERT; the page query and its count) sent straight through pgx,
# the processor time per request of web, worker, PostgreSQL and Redis
# (read from /proc before and after each run) next to the bare SQL's, and
# the web process's CPU profile under each.
#   bash deploy/loadtest/run.sh          (DURATION=10s by default)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash deploy/test-services.sh >/dev/null

db=coffer_load
port=${LOAD_PORT:-3931}
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
export REDIS_URL="redis://127.0.0.1:6379/14"
export PORT=$port API_RATE_LIMIT_PER_HOUR=100000000 LOG_LEVEL=warn
export EXCHANGE_RATES_URL=off # manual rates only: a test reaches nothing beyond loopback
psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" postgres
redis-cli -n 14 flushdb >/dev/null   # database 14 belongs to this script

CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/coffer .  # as make build and the Dockerfile
bin/coffer migrate >/dev/null
bin/coffer users create --email load@example.com --password 'load-test-password' >/dev/null
key=$(bin/coffer apikeys create --email load@example.com --name load | tail -1)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
PPROF_ADDR=127.0.0.1:6931 bin/coffer web & pids+=($!)
web=$!
bin/coffer worker & pids+=($!)
worker=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 100); do curl -fs "$base/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
sleep 4 # each process gives back what start-up touched 3 s after starting (worker.TrimWhenIdle)
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup"; }
memory() {
  local w k
  w=$(rss $web); k=$(rss $worker)
  echo "RSS web $((w / 1024)) MB + worker $((k / 1024)) MB = $(((w + k) / 1024)) MB" \
    "(PSS, the binary's shared pages counted once: $((($(pss $web) + $(pss $worker)) / 1024)) MB)"
}
echo "idle at start: $(memory)"

api() { curl -fsS -H "X-Api-Key: $key" -H 'Content-Type: application/json' "$@"; }
account=$(api -X POST "$base/api/v1/accounts" -d '{"account":{"name":"Load","account_type":"depository"}}' |
  sed -n 's/^{"id":"\([^"]*\)".*/\1/p')
for i in $(seq 1 1000); do echo "{\"title\":\"chat $i\",\"message\":\"hello $i\"}"; done |
  xargs -d '\n' -P 8 -I{} curl -fsS -o /dev/null -H "X-Api-Key: $key" -H 'Content-Type: application/json' -X POST "$base/api/v1/chats" -d {}

psql -q -h 127.0.0.1 -U postgres -c ANALYZE "$db"  # plans as a database in use would have them
sleep 2 # let the worker drain the chat replies, so the processes are idle
echo "after seeding 1,000 chats: $(memory)"

wrk=$(command -v wrk || true)
[ -n "$wrk" ] || echo "(wrk not found: the HTTP side uses Go's client; apt-get install wrk for lighter load generation)"
results=$root/deploy/loadtest/results
mkdir -p "$results"
COFFER_LOAD_PPROF=127.0.0.1:6931 COFFER_LOAD_RESULTS=$results \
COFFER_LOAD_WEB_PID=$web COFFER_LOAD_WORKER_PID=$worker COFFER_LOAD_DB=$db \
COFFER_LOAD_WRK=$wrk COFFER_LOAD_WRK_SCRIPT="$root/deploy/loadtest/create.lua" \
COFFER_LOAD_URL=$base COFFER_LOAD_KEY=$key COFFER_LOAD_ACCOUNT=$account COFFER_LOAD_DSN="$DATABASE_URL" \
  COFFER_LOAD_DURATION=${DURATION:-10s} go test -count=1 -run '^TestLoad$' ./models/ -v 2>&1 |
  grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS' -e '^ok '
echo "after the load: $(memory)"
sleep 65 # an idle process gives memory back after 30 s without work (worker.TrimWhenIdle)
echo "idle 65 s after the load: $(memory)"
for p in create chats; do
  [ -s "$results/$p.pprof" ] || continue
  echo; echo "web CPU profile under $p (top entries; deploy/loadtest/results/$p.pprof):"
  go tool pprof -top -nodecount=25 bin/coffer "$results/$p.pprof" 2>/dev/null | sed -n '4,32p'
done
