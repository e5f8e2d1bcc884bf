-- Duplicates are recognised by what a row was when it first arrived, not by
-- what a person made of it since (issue 25 item 2): the day, the amount and
-- the bank's own text, as "YYYY-MM-DD|amount in ten-thousandths|text". A
-- renamed or re-categorised row keeps its fingerprint, so an overlapping file
-- imported again, or a file of another format for the same account, skips it.
ALTER TABLE transactions ADD COLUMN fingerprint text;

--bun:split

-- Backfill: a row a file import wrote has the id of its import row, which
-- holds the file's text; any other row gives what it has, its current name.
UPDATE transactions SET fingerprint =
    {{if .Postgres}}date::text{{else}}date{{end}} || '|' || CAST(amount AS text) || '|' ||
    COALESCE((SELECT ir.name FROM import_rows ir WHERE ir.id = transactions.id AND ir.family_id = transactions.family_id), name);

--bun:split

-- The duplicate check reads an account's fingerprints over the days of a file.
CREATE INDEX transactions_account_fingerprint_idx ON transactions (account_id, fingerprint);
