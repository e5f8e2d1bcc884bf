#!/usr/bin/env bash
# Starts, or installs and starts, the PostgreSQL and Redis the test suites
# use on loopback. Reuses servers that already answer. Installing needs
# root and Debian's apt.
set -euo pipefail

PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
REDIS_PORT=${REDIS_PORT:-6379}

have() { command -v "$1" >/dev/null 2>&1; }

pg_up() { have pg_isready && pg_isready -h "$PGHOST" -p "$PGPORT" -q; }
redis_up() { have redis-cli && [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

install() {
  if [ "$(id -u)" != 0 ] || ! have apt-get; then
    echo "test-services: $* missing; install it (or run as root on Debian/Ubuntu)" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! pg_up; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    install postgresql
  fi
  version=$(ls /etc/postgresql | sort -n | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  pg_up || { echo "test-services: PostgreSQL did not start" >&2; exit 1; }
  # Tests connect as postgres over TCP without a password.
  hba=$(ls /etc/postgresql/"$version"/main/pg_hba.conf)
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  fi
fi
echo "test-services: PostgreSQL ready on $PGHOST:$PGPORT"

if ! redis_up; then
  have redis-server || install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
  redis_up || { echo "test-services: Redis did not start" >&2; exit 1; }
fi
echo "test-services: Redis ready on 127.0.0.1:$REDIS_PORT"

# The browser tests drive Debian's Chromium.
if ! have chromium; then
  install chromium
fi
echo "test-services: $(chromium --version 2>/dev/null || echo 'chromium missing')"

# The SSO tests sign in against a real Dex, built once into a cache.
dex=$(bash "$(dirname "$0")/tools/dex/build.sh")
echo "test-services: dex at $dex"
