-- An account's live transactions (issue 26's benchmark: an account of
-- 100,000 transactions and 1,000 valuations, models/valuation_bench_test.go).
--
-- transactions_account_live_idx serves the register's count of an
-- account's rows. Every key of an account is the same, so PostgreSQL keeps
-- it deduplicated, a few pages per account, and the count is an index-only
-- scan of them instead of a read of the account's rows in the table
-- (EXPLAIN before: a parallel sequential scan; the register page 80 -> 30
-- ms on PostgreSQL under load).
CREATE INDEX transactions_account_live_idx ON transactions (account_id, family_id) WHERE deleted_at IS NULL;

--bun:split

-- transactions_account_balance_idx holds what an account's balance reads,
-- by day: recalculating it, BalanceOn and the valuations' adjustments sum
-- the account's counted rows by day, an index-only scan in date order
-- (EXPLAIN ANALYZE on PostgreSQL: 28 ms instead of 95 ms for 100,000
-- rows). On PostgreSQL the columns after the date are INCLUDE columns;
-- SQLite, which has none, keys them.
CREATE INDEX transactions_account_balance_idx ON transactions
{{if .Postgres}}(account_id, date) INCLUDE (family_id, currency, amount, excluded){{else}}(account_id, date, family_id, currency, amount, excluded){{end}}
WHERE deleted_at IS NULL;
