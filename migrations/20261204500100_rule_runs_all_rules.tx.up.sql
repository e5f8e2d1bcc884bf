-- A run of every active rule in their order ("Apply all"), which has no
-- one rule to name.
ALTER TABLE rule_runs ADD COLUMN all_rules boolean NOT NULL DEFAULT false;
