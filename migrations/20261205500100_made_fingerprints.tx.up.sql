-- A transfer's side that coffer wrote (recorded by a person, or mirrored
-- into the other account by a rule) carries no bank text: its fingerprint
-- is "YYYY-MM-DD|amount|", so the bank's own row of that movement, when a
-- file or a sync brings it, matches it by amount within a few days instead
-- of doubling it (see models.madeFingerprint). Such sides written before
-- are known by the names coffer gives them.
UPDATE transactions SET fingerprint =
    {{if .Postgres}}date::text{{else}}date{{end}} || '|' || CAST(amount AS text) || '|'
WHERE source IS NULL AND external_id IS NULL
  AND (name LIKE 'Transfer to %' OR name LIKE 'Transfer from %')
  AND (id IN (SELECT inflow_transaction_id FROM transfers) OR id IN (SELECT outflow_transaction_id FROM transfers));
