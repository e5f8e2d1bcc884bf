-- Every row has a fingerprint (the column's backfill left none out, but a
-- transfer recorded since under a name of the person's own did): what
-- arrived is what it is now.
UPDATE transactions SET fingerprint =
    {{if .Postgres}}date::text{{else}}date{{end}} || '|' || CAST(amount AS text) || '|' || name
WHERE fingerprint IS NULL;

--bun:split

-- A keyed row an API client sends is matched against the account's rows of
-- a person, a file or a bank sync in its days (models.arrivalCandidates):
-- this index holds only those, so that an account fed by the API alone
-- answers the check from an empty range, however many rows it has.
CREATE INDEX transactions_arrival_idx ON transactions (account_id, fingerprint)
    WHERE external_id IS NULL OR source IN ('file_import', 'simplefin');
