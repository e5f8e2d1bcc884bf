-- A ledger account that a SimpleFIN connection creates has no type until
-- the user picks one (spec/aggregator.md §8: account_type null); the
-- balance rules count an untyped account as an asset.
--
-- SQLite cannot alter a column, and the usual rebuild (create, copy,
-- DROP, rename) would cascade the DROP into every transaction while
-- foreign keys are on, which they are inside this transaction. Removing a
-- NOT NULL leaves every stored row valid, so SQLite's documented shortcut
-- applies instead: edit the stored CREATE TABLE text, then rebuild an
-- index so the schema cookie changes and every open connection rereads
-- the schema, and reload it on this one.
{{if .Postgres}}
ALTER TABLE accounts ALTER COLUMN account_type DROP NOT NULL;
{{else}}
PRAGMA writable_schema = ON;

--bun:split

UPDATE sqlite_master SET sql = replace(sql, 'account_type       varchar(32) NOT NULL CHECK', 'account_type       varchar(32) CHECK')
WHERE type = 'table' AND name = 'accounts';

--bun:split

DROP INDEX accounts_family_id_idx;

--bun:split

CREATE INDEX accounts_family_id_idx ON accounts (family_id, created_at, id);

--bun:split

PRAGMA writable_schema = RESET;
{{end}}
