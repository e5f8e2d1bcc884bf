-- How many rows a rule run left alone because a finished reconciliation
-- locked them (issue 26 item 3): shown beside the rows it changed, so that
-- a person knows why a matching row kept its values.
ALTER TABLE rule_runs ADD COLUMN transactions_reconciled integer NOT NULL DEFAULT 0;
