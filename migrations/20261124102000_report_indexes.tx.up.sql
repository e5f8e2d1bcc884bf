-- Indexes for the household screens and reports (issue 12), each measured
-- with 100,000 transactions in a family beside another of the same size
-- (BenchmarkReports in models/).
--
-- transactions_family_order_idx gains deleted_at (an INCLUDE column on
-- PostgreSQL, a last key column on SQLite, which has no INCLUDE). Every
-- list leaves tombstones out, so without the column the total count of a
-- transactions page read every row of the table; with it the count is an
-- index-only scan. The index stays total rather than partial, so deleting
-- a family still finds all its rows through it.
DROP INDEX transactions_family_order_idx;

--bun:split

CREATE INDEX transactions_family_order_idx ON transactions
{{if .Postgres}}(family_id, date DESC, created_at DESC, id DESC) INCLUDE (deleted_at){{else}}(family_id, date DESC, created_at DESC, id DESC, deleted_at){{end}};

--bun:split

-- transactions_report_idx holds, for the rows that count in balances and
-- reports (not deleted, not excluded), every column the report queries
-- read: income, spending and cash flow over a period, the net worth and
-- balance series, the balance history and the register's total are then
-- index-only scans over a date range instead of reads of the table's rows.
-- On PostgreSQL the columns after the date are INCLUDE columns, so the
-- index is ordered (and maintained) by family and date alone.
CREATE INDEX transactions_report_idx ON transactions
{{if .Postgres}}(family_id, date) INCLUDE (account_id, currency, category_id, amount, id){{else}}(family_id, date, account_id, currency, category_id, amount, id){{end}}
WHERE deleted_at IS NULL AND NOT excluded;
