-- An account's live transactions, for the register's count of its rows
-- (issue 26's benchmark: an account of 100,000 transactions and 1,000
-- valuations, models/valuation_bench_test.go). Every key of an account is
-- the same, so PostgreSQL keeps the index deduplicated, a few pages per
-- account, and the count is an index-only scan of them instead of a read
-- of the account's rows in the table (EXPLAIN before: a parallel
-- sequential scan, 30 to 60 ms on PostgreSQL under load).
CREATE INDEX transactions_account_live_idx ON transactions (account_id, family_id) WHERE deleted_at IS NULL;
