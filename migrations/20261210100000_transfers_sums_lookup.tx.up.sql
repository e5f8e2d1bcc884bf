-- Linking rows as a transfer looks each leg up by its key. The join of the
-- legs to transactions was left to the planner, which without statistics
-- (a restore, a server with autovacuum off) hashed the family's whole
-- history for each link: a seed of 1,000,000 rows stalled at 250,000, one
-- insert of transfers taking 18 s. A LATERAL lookup that the planner cannot
-- flatten (its LIMIT) is an index probe per leg whatever it knows. SQLite's
-- row triggers look each leg up by its key already.
{{if .Postgres}}
CREATE OR REPLACE FUNCTION coffer_transfers_sums() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fams uuid[] := '{}';
    ids uuid[] := '{}';
    signs int[] := '{}';
BEGIN
    -- The legs the statement linked (+1) and unlinked (-1); a transition
    -- table exists only for the events that have it.
    IF TG_OP <> 'DELETE' THEN
        SELECT fams || array_agg(family_id) || array_agg(family_id),
               ids || array_agg(inflow_transaction_id) || array_agg(outflow_transaction_id),
               signs || array_agg(1) || array_agg(1)
        INTO fams, ids, signs FROM new_rows;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        SELECT fams || array_agg(family_id) || array_agg(family_id),
               ids || array_agg(inflow_transaction_id) || array_agg(outflow_transaction_id),
               signs || array_agg(-1) || array_agg(-1)
        INTO fams, ids, signs FROM old_rows;
    END IF;
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain,
           CASE WHEN g.grain = 'd' THEN t.date ELSE CAST(date_trunc('month', CAST(t.date AS timestamp)) AS date) END,
           t.account_id, t.currency, t.category_id, s.transfer, t.amount < 0,
           SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END * t.amount),
           SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END)
    FROM unnest(fams, ids, signs) AS l (family_id, id, sign)
    CROSS JOIN LATERAL (
        SELECT t.family_id, t.date, t.account_id, t.currency, t.category_id, t.amount
        FROM transactions t
        WHERE t.id = l.id AND t.family_id = l.family_id AND t.deleted_at IS NULL AND NOT t.excluded
        LIMIT 1) t
    CROSS JOIN (VALUES (true), (false)) s (transfer)
    CROSS JOIN (VALUES ('d'), ('m')) g (grain)
    WHERE t.family_id IN (SELECT f.id FROM families f)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END) <> 0
        OR SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END * t.amount) <> 0;
    RETURN NULL;
END $$;
{{else}}
SELECT 1;
{{end}}
