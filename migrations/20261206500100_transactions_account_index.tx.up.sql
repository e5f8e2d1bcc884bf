-- Issue 30 item 1: fewer indexes for a plain insert to maintain. Two indexes
-- led with (account_id, date): transactions_account_date_idx (every row)
-- and transactions_account_balance_idx (live rows, with what the balance
-- walk reads). One index over every row, with deleted_at among the columns
-- it carries, serves both: the balance walk, the refresh's range sum, the
-- register's and reconciliation's live rows of an account by day (still
-- index-only where they were, the tombstones filtered from the index), the
-- rows of an account including tombstones, and the lookup of an account's
-- rows when it is deleted (EXPLAIN ANALYZE on PostgreSQL with 300,000 rows,
-- 100,000 on one account: the same plans or better, see the branch's
-- report). Kept beside it: transactions_account_live_idx, whose
-- deduplicated keys count an account's live rows three times faster than
-- this wider index does.
DROP INDEX transactions_account_date_idx;

--bun:split

DROP INDEX transactions_account_balance_idx;

--bun:split

CREATE INDEX transactions_account_balance_idx ON transactions
{{if .Postgres}}(account_id, date) INCLUDE (family_id, currency, amount, excluded, deleted_at){{else}}(account_id, date, family_id, currency, amount, excluded, deleted_at){{end}};
