#!/usr/bin/env bash
# The audit view over 1,000,000 records: seeds a throwaway PostgreSQL
# database, then times the view's query (event type + 7 days, first page
# and page 20) and prints its plan. Bounded; drops nothing but its own
# database.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash deploy/test-services.sh >/dev/null
db=coffer_audit_load
psql() { command psql -q -X -h 127.0.0.1 -U postgres "$@"; }
psql -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" postgres
DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable" REDIS_URL=redis://127.0.0.1:6379/15 go run . migrate >/dev/null
psql "$db" <<'SQL'
INSERT INTO sso_audit_logs (id, event_type, user_id, ip, user_agent, metadata, created_at)
SELECT gen_random_uuid(),
       (ARRAY['login','login_failed','logout','role_changed','user_suspended'])[1 + (i % 5)],
       NULL, '10.0.0.1', 'load', '{"reason":"bad_credentials"}',
       now() - (i * interval '31.536 seconds')   -- one record every ~32 s: a year in 1,000,000 rows
FROM generate_series(1, 1000000) AS i;
VACUUM ANALYZE sso_audit_logs;
SQL
query="SELECT al.*, u.email AS user_email FROM sso_audit_logs AS al LEFT JOIN users AS u ON u.id = al.user_id
WHERE al.event_type = 'login_failed' AND al.created_at >= now() - interval '7 days'
ORDER BY al.created_at DESC, al.id DESC"
echo "rows: $(psql -At -c 'SELECT count(*) FROM sso_audit_logs' "$db")"
echo "--- first page (event_type=login_failed, range=7d):"
psql "$db" -c "EXPLAIN (ANALYZE, BUFFERS) $query LIMIT 51" | grep -E 'Limit|Index|Scan|Join|Execution|Planning'
echo "--- page 20:"
psql "$db" -c "EXPLAIN ANALYZE $query LIMIT 51 OFFSET 950" | grep -E 'Execution'
echo "--- all types, 7d, first page:"
psql "$db" -c "EXPLAIN ANALYZE SELECT al.*, u.email AS user_email FROM sso_audit_logs AS al LEFT JOIN users AS u ON u.id = al.user_id
WHERE al.created_at >= now() - interval '7 days' ORDER BY al.created_at DESC, al.id DESC LIMIT 51" | grep -E 'Execution'
psql -c "DROP DATABASE $db WITH (FORCE)" postgres
