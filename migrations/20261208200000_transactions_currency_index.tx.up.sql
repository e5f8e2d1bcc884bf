-- Issue 27: every total converts the rows in other currencies in SQL,
-- and the income statement reads them apart from the family's own rows
-- (fxFlowsSQL: two ranges of currency code either side of the family's).
-- transactions_currency_idx holds those rows ordered by family, currency
-- and day, with what the conversion reads, so that part is an index-only
-- scan of the foreign rows alone instead of a scan of every row of the
-- period (the family's own part is read from its own sums). Live,
-- counted rows only, as transactions_report_idx.
CREATE INDEX transactions_currency_idx ON transactions
{{if .Postgres}}(family_id, currency, date) INCLUDE (account_id, category_id, amount, id){{else}}(family_id, currency, date, account_id, category_id, amount, id){{end}}
WHERE deleted_at IS NULL AND NOT excluded;
