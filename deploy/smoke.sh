#!/usr/bin/env bash
# End-to-end check of README's first command and the CLI, in the embedded
# mode: build, start `coffer dev` in an empty directory, create a user and a
# key beside it, and use the API until the balance job has run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
port=${SMOKE_PORT:-3917}
export EXCHANGE_RATES_URL=off # manual rates only: a test reaches nothing beyond loopback
cleanup() { [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "smoke: $*" >&2; echo "--- coffer dev log:" >&2; cat "$work/dev.log" >&2; exit 1; }

(cd "$root" && CGO_ENABLED=0 go build -o "$work/coffer" .)
cd "$work"

# A bad configuration stops the process before anything starts, naming
# every bad variable at once.
if out=$(PORT=abc AUTH_JIT_MODE=sometimes LOG_LEVEL=loud ./coffer migrate 2>&1); then
  echo "smoke: a bad configuration was accepted" >&2; exit 1
fi
for v in PORT AUTH_JIT_MODE LOG_LEVEL; do
  grep -q "$v" <<<"$out" || { echo "smoke: the config error does not name $v: $out" >&2; exit 1; }
done
if env -u DATABASE_URL -u REDIS_URL ./coffer web >/dev/null 2>&1; then
  echo "smoke: coffer web started without a server-mode database" >&2; exit 1
fi
# --help answers and does nothing else: no database file appears.
for cmd in dev web worker scheduler migrate "users create" "audit archive" "secrets backfill" users apikeys; do
  # shellcheck disable=SC2086
  env -u DATABASE_URL -u REDIS_URL ./coffer $cmd --help >help.out 2>&1 || { cat help.out; echo "smoke: coffer $cmd --help failed" >&2; exit 1; }
  grep -q "coffer ${cmd%% *}" help.out || { echo "smoke: coffer $cmd --help printed: $(cat help.out)" >&2; exit 1; }
done
[ ! -e data/coffer.db ] || { echo "smoke: --help touched the database" >&2; exit 1; }
env -u DATABASE_URL -u REDIS_URL PORT=$port ./coffer dev >dev.log 2>&1 &
pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 100); do curl -fs "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$base/readyz" >/dev/null || fail "not ready"

./coffer users create --email smoke@example.com --password 'correct horse battery' --role super_admin >/dev/null
key=$(./coffer apikeys create --email smoke@example.com --name smoke | tail -1)
[[ $key == cof_* ]] || fail "apikeys create printed $key"
./coffer users create --email smoke@example.com --password 'correct horse battery' --family other >/dev/null 2>&1 && fail "duplicate user accepted"
# A second family of the same name is refused; families list names the id to join it by.
./coffer users create --email spouse@example.com --password 'correct horse battery' --family smoke >/dev/null 2>&1 && fail "second family named smoke"
fam=$(./coffer families list | awk -F'\t' '$2 == "smoke" {print $1}')
[ -n "$fam" ] || fail "families list: $(./coffer families list)"
./coffer users create --email spouse@example.com --password 'correct horse battery' --family-id "$fam" >/dev/null || fail "join by --family-id"
./coffer families list | grep -q "smoke	2 members" || fail "families list after joining: $(./coffer families list)"

api() { curl -fsS -H "X-Api-Key: $key" -H 'Content-Type: application/json' "$@"; }
acct=$(api -X POST "$base/api/v1/accounts" -d '{"account":{"name":"Checking","account_type":"depository","balance":"100"}}' |
  sed -n 's/^{"id":"\([^"]*\)".*/\1/p')
[ -n "$acct" ] || fail "account not created"
api -X POST "$base/api/v1/transactions" -d '{"transaction":{"account_id":"'"$acct"'","date":"2024-01-02","amount":"30.25","name":"Groceries","nature":"expense"}}' >/dev/null
recalculated=
for _ in $(seq 1 200); do
  api "$base/api/v1/accounts/$acct" | grep -q '"balance":"\$69.75"' && { recalculated=1; break; }
  sleep 0.1
done
[ -n "$recalculated" ] || fail "balance never became \$69.75: $(api "$base/api/v1/accounts/$acct")"
echo "smoke: ok (balance recalculated by the worker)"

# The provider file mode: providers come from a file at start, an IdP that
# cannot be reached only warns, and the login page offers the button.
kill "$pid"; wait "$pid" 2>/dev/null || true
cat >providers.yml <<'YAML'
providers:
  - id: 0f8e2c8e-5d7e-4b8e-9a53-2d5f0b6f4a11
    name: corp
    strategy: openid_connect
    label: Sign in with Corp
    issuer: http://127.0.0.1:9/unreachable
    client_id: coffer
    client_secret_env: SMOKE_CORP_SECRET
YAML
env -u DATABASE_URL -u REDIS_URL PORT=$port AUTH_PROVIDERS_SOURCE=yaml AUTH_PROVIDERS_FILE=providers.yml \
  SMOKE_CORP_SECRET=s3cret ./coffer dev >dev.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do curl -fs "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$base/sessions/new" | grep -q "Sign in with Corp" || fail "the provider from the file is not on the login page"
grep -q "discovery check failed" dev.log || fail "no warning about the unreachable discovery document"
./coffer secrets backfill | grep -q "already current 1" || fail "the file's client secret is not sealed"
echo "smoke: ok (providers from a file)"
