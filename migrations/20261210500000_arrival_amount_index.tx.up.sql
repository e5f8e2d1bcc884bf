-- Issue 30: a keyed create in a dense account. An arriving keyed row can
-- only be the same movement as a row of its own amount (models.rowMatcher:
-- the same day and amount, or a row coffer made of that amount within a
-- few days), but the arrival check read every candidate of its days: 250
-- rows at 100,000 transactions, 2,500 at a million in one account. The
-- amount at arrival is the fingerprint's second field; this index puts it
-- between the account and the fingerprint, so that the check and the
-- matcher read that amount's rows of those days and nothing else. It
-- replaces transactions_arrival_idx, whose only readers they were, so an
-- insert maintains no more indexes than before. The expression is
-- models.arrivalAmount's, which a query must repeat as it is for the
-- planner to use the index.
{{if .Postgres}}
CREATE INDEX transactions_arrival_amount_idx ON transactions (account_id, split_part(fingerprint, '|', 2), fingerprint)
    WHERE external_id IS NULL OR source IN ('file_import', 'simplefin');
{{else}}
CREATE INDEX transactions_arrival_amount_idx ON transactions (account_id, substr(fingerprint, 12, instr(substr(fingerprint, 12), '|') - 1), fingerprint)
    WHERE external_id IS NULL OR source IN ('file_import', 'simplefin');
{{end}}

--bun:split

DROP INDEX transactions_arrival_idx;
