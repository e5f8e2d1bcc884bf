-- An account's live transactions in date order, with what its balance
-- reads (issue 26's benchmark: an account of 100,000 transactions and
-- 1,000 valuations, models/valuation_bench_test.go). Recalculating a
-- balance, BalanceOn and the valuations' adjustments sum the account's
-- counted rows by day, and the register counts its rows: with this index
-- each is an index-only scan of the account's entries instead of a read
-- of the family's rows (EXPLAIN: a parallel sequential scan of the table
-- before, 150 ms on PostgreSQL under load). On PostgreSQL the columns
-- after the date are INCLUDE columns; SQLite, which has none, keys them.
CREATE INDEX transactions_account_balance_idx ON transactions
{{if .Postgres}}(account_id, date) INCLUDE (family_id, currency, amount, excluded){{else}}(account_id, date, family_id, currency, amount, excluded){{end}}
WHERE deleted_at IS NULL;
