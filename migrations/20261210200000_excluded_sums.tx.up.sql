-- The kept sums count the excluded rows too, apart: grain 'x' is an
-- account's excluded rows of a day, grain 'y' of a month (day = its first
-- day), each split by transfer leg or not, with no category and no
-- direction. A split parent (excluded_reason 'split') is in neither: its
-- parts count in its place. The left-out notice of the dashboard and the
-- reports ("n rows excluded") reads them instead of the excluded rows,
-- whose legs it had to look up one by one: 19 ms of the year's report at
-- 1,000,000 rows (3,000 excluded), 0.7 ms at 10,000.
--
-- The counted grains (d, m, a) are as before; every rule of
-- 20261208300000_transaction_sums holds for x and y: deltas appended by
-- the triggers, transaction_sums_fresh the definition.

-- transactions_excluded_idx (20261209300000) served that count alone.
DROP INDEX transactions_excluded_idx;

--bun:split

DROP VIEW transaction_sums_fresh;

--bun:split

CREATE VIEW transaction_sums_fresh AS
SELECT t.family_id, g.grain,
       CASE WHEN g.grain IN ('m', 'y') THEN {{if .Postgres}}CAST(date_trunc('month', CAST(t.date AS timestamp)) AS date){{else}}date(t.date, 'start of month'){{end}} ELSE t.date END AS day,
       t.account_id, t.currency, CASE WHEN g.grain IN ('d', 'm') THEN t.category_id END AS category_id,
       g.grain <> 'a' AND (EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = t.family_id AND tr.inflow_transaction_id = t.id)
        OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = t.family_id AND tr.outflow_transaction_id = t.id)) AS transfer,
       g.grain IN ('d', 'm') AND t.amount < 0 AS income, SUM(t.amount) AS amount, COUNT(*) AS n
FROM transactions t
JOIN (SELECT 'd' AS grain, false AS excluded UNION ALL SELECT 'm', false UNION ALL SELECT 'a', false
      UNION ALL SELECT 'x', true UNION ALL SELECT 'y', true) g ON g.excluded = t.excluded
WHERE t.deleted_at IS NULL AND (NOT t.excluded OR COALESCE(t.excluded_reason, '') <> 'split')
GROUP BY t.family_id, g.grain, 3, t.account_id, t.currency, 6, 7, 8;

--bun:split

INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n, merged)
SELECT family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n, true
FROM transaction_sums_fresh WHERE grain IN ('x', 'y');
{{if .Postgres}}
--bun:split

-- As before, with each row summed into the grains of its kind: d, m and a
-- for a counted row, x and y for an excluded one.
CREATE OR REPLACE FUNCTION coffer_transactions_sums() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain IN ('m', 'y') THEN CAST(date_trunc('month', CAST(date AS timestamp)) AS date) ELSE date END,
               account_id, currency, CASE WHEN g.grain IN ('d', 'm') THEN category_id END, false,
               g.grain IN ('d', 'm') AND amount < 0, SUM(amount), COUNT(*)
        FROM new_rows
        JOIN (VALUES ('d', false), ('m', false), ('a', false), ('x', true), ('y', true)) g (grain, excluded) ON g.excluded = new_rows.excluded
        WHERE deleted_at IS NULL AND (NOT new_rows.excluded OR COALESCE(excluded_reason, '') <> 'split')
        GROUP BY 1, 2, 3, 4, 5, 6, 8;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain IN ('m', 'y') THEN CAST(date_trunc('month', CAST(date AS timestamp)) AS date) ELSE date END,
               account_id, currency, CASE WHEN g.grain IN ('d', 'm') THEN category_id END, false,
               g.grain IN ('d', 'm') AND amount < 0, -SUM(amount), -COUNT(*)
        FROM old_rows
        JOIN (VALUES ('d', false), ('m', false), ('a', false), ('x', true), ('y', true)) g (grain, excluded) ON g.excluded = old_rows.excluded
        WHERE deleted_at IS NULL AND (NOT old_rows.excluded OR COALESCE(excluded_reason, '') <> 'split')
          AND family_id IN (SELECT f.id FROM families f)
        GROUP BY 1, 2, 3, 4, 5, 6, 8;
    ELSE
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain IN ('m', 'y') THEN CAST(date_trunc('month', CAST(date AS timestamp)) AS date) ELSE date END,
               account_id, currency, CASE WHEN g.grain IN ('d', 'm') THEN category_id END,
               g.grain <> 'a' AND transfer, g.grain IN ('d', 'm') AND income, SUM(amount), SUM(n)
        FROM (
            SELECT id, family_id, date, account_id, currency, category_id, excluded, amount < 0 AS income, -amount AS amount, -1 AS n
            FROM old_rows WHERE deleted_at IS NULL AND (NOT excluded OR COALESCE(excluded_reason, '') <> 'split')
            UNION ALL
            SELECT id, family_id, date, account_id, currency, category_id, excluded, amount < 0, amount, 1
            FROM new_rows WHERE deleted_at IS NULL AND (NOT excluded OR COALESCE(excluded_reason, '') <> 'split')
        ) m
        CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = m.family_id AND tr.inflow_transaction_id = m.id)
                                OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = m.family_id AND tr.outflow_transaction_id = m.id) AS transfer) l
        JOIN (VALUES ('d', false), ('m', false), ('a', false), ('x', true), ('y', true)) g (grain, excluded) ON g.excluded = m.excluded
        WHERE family_id IN (SELECT f.id FROM families f)
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
        HAVING SUM(amount) <> 0 OR SUM(n) <> 0;
    END IF;
    RETURN NULL;
END $$;

--bun:split

-- As before (each leg looked up by its key), a counted leg moving in d and
-- m, an excluded one in x and y.
CREATE OR REPLACE FUNCTION coffer_transfers_sums() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    fams uuid[] := '{}';
    ids uuid[] := '{}';
    signs int[] := '{}';
BEGIN
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
           CASE WHEN g.grain IN ('d', 'x') THEN t.date ELSE CAST(date_trunc('month', CAST(t.date AS timestamp)) AS date) END,
           t.account_id, t.currency, CASE WHEN g.grain IN ('d', 'm') THEN t.category_id END, s.transfer,
           g.grain IN ('d', 'm') AND t.amount < 0,
           SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END * t.amount),
           SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END)
    FROM unnest(fams, ids, signs) AS l (family_id, id, sign)
    CROSS JOIN LATERAL (
        SELECT t.family_id, t.date, t.account_id, t.currency, t.category_id, t.amount, t.excluded
        FROM transactions t
        WHERE t.id = l.id AND t.family_id = l.family_id AND t.deleted_at IS NULL
          AND (NOT t.excluded OR COALESCE(t.excluded_reason, '') <> 'split')
        LIMIT 1) t
    CROSS JOIN (VALUES (true), (false)) s (transfer)
    JOIN (VALUES ('d', false), ('m', false), ('x', true), ('y', true)) g (grain, excluded) ON g.excluded = t.excluded
    WHERE t.family_id IN (SELECT f.id FROM families f)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END) <> 0
        OR SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END * t.amount) <> 0;
    RETURN NULL;
END $$;
{{else}}
--bun:split

-- SQLite: triggers of their own for the excluded rows, beside the counted
-- rows' (20261208300000), so that a counted row's write costs them only
-- their WHEN.
CREATE TRIGGER transactions_excluded_sums_insert AFTER INSERT ON transactions
WHEN NEW.deleted_at IS NULL AND NEW.excluded AND COALESCE(NEW.excluded_reason, '') <> 'split'
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    VALUES (NEW.family_id, 'x', NEW.date, NEW.account_id, NEW.currency, NULL, 0, 0, NEW.amount, 1),
           (NEW.family_id, 'y', date(NEW.date, 'start of month'), NEW.account_id, NEW.currency, NULL, 0, 0, NEW.amount, 1);
END;

--bun:split

CREATE TRIGGER transactions_excluded_sums_update AFTER UPDATE ON transactions
WHEN (OLD.excluded OR NEW.excluded)
  AND (OLD.account_id IS NOT NEW.account_id OR OLD.family_id IS NOT NEW.family_id OR OLD.date IS NOT NEW.date
    OR OLD.amount IS NOT NEW.amount OR OLD.currency IS NOT NEW.currency OR OLD.excluded IS NOT NEW.excluded
    OR OLD.excluded_reason IS NOT NEW.excluded_reason OR (OLD.deleted_at IS NULL) IS NOT (NEW.deleted_at IS NULL))
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT OLD.family_id, g.grain, CASE WHEN g.grain = 'x' THEN OLD.date ELSE date(OLD.date, 'start of month') END,
           OLD.account_id, OLD.currency, NULL,
           EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = OLD.family_id AND tr.inflow_transaction_id = OLD.id)
           OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = OLD.family_id AND tr.outflow_transaction_id = OLD.id),
           0, -OLD.amount, -1
    FROM (SELECT 'x' AS grain UNION ALL SELECT 'y') g
    WHERE OLD.deleted_at IS NULL AND OLD.excluded AND COALESCE(OLD.excluded_reason, '') <> 'split'
      AND EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT NEW.family_id, g.grain, CASE WHEN g.grain = 'x' THEN NEW.date ELSE date(NEW.date, 'start of month') END,
           NEW.account_id, NEW.currency, NULL,
           EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = NEW.family_id AND tr.inflow_transaction_id = NEW.id)
           OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = NEW.family_id AND tr.outflow_transaction_id = NEW.id),
           0, NEW.amount, 1
    FROM (SELECT 'x' AS grain UNION ALL SELECT 'y') g
    WHERE NEW.deleted_at IS NULL AND NEW.excluded AND COALESCE(NEW.excluded_reason, '') <> 'split'
      AND EXISTS (SELECT 1 FROM families f WHERE f.id = NEW.family_id);
END;

--bun:split

-- transactions_sums_unlink (BEFORE DELETE) has taken the row's transfer
-- away already: a deleted row is no leg.
CREATE TRIGGER transactions_excluded_sums_delete AFTER DELETE ON transactions
WHEN OLD.deleted_at IS NULL AND OLD.excluded AND COALESCE(OLD.excluded_reason, '') <> 'split'
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT OLD.family_id, g.grain, CASE WHEN g.grain = 'x' THEN OLD.date ELSE date(OLD.date, 'start of month') END,
           OLD.account_id, OLD.currency, NULL, 0, 0, -OLD.amount, -1
    FROM (SELECT 'x' AS grain UNION ALL SELECT 'y') g
    WHERE EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
END;

--bun:split

CREATE TRIGGER transfers_excluded_sums_insert AFTER INSERT ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'x' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, NULL, s.transfer, 0,
           CASE WHEN s.transfer THEN t.amount ELSE -t.amount END, CASE WHEN s.transfer THEN 1 ELSE -1 END
    FROM transactions t, (SELECT 'x' AS grain UNION ALL SELECT 'y') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = NEW.family_id AND t.id IN (NEW.inflow_transaction_id, NEW.outflow_transaction_id)
      AND t.deleted_at IS NULL AND t.excluded AND COALESCE(t.excluded_reason, '') <> 'split';
END;

--bun:split

CREATE TRIGGER transfers_excluded_sums_delete AFTER DELETE ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'x' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, NULL, s.transfer, 0,
           CASE WHEN s.transfer THEN -t.amount ELSE t.amount END, CASE WHEN s.transfer THEN -1 ELSE 1 END
    FROM transactions t, (SELECT 'x' AS grain UNION ALL SELECT 'y') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = OLD.family_id AND t.id IN (OLD.inflow_transaction_id, OLD.outflow_transaction_id)
      AND t.deleted_at IS NULL AND t.excluded AND COALESCE(t.excluded_reason, '') <> 'split'
      AND EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
END;

--bun:split

CREATE TRIGGER transfers_excluded_sums_update AFTER UPDATE OF inflow_transaction_id, outflow_transaction_id, family_id ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'x' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, NULL, s.transfer, 0,
           CASE WHEN s.transfer THEN -t.amount ELSE t.amount END, CASE WHEN s.transfer THEN -1 ELSE 1 END
    FROM transactions t, (SELECT 'x' AS grain UNION ALL SELECT 'y') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = OLD.family_id AND t.id IN (OLD.inflow_transaction_id, OLD.outflow_transaction_id)
      AND t.deleted_at IS NULL AND t.excluded AND COALESCE(t.excluded_reason, '') <> 'split';
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'x' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, NULL, s.transfer, 0,
           CASE WHEN s.transfer THEN t.amount ELSE -t.amount END, CASE WHEN s.transfer THEN 1 ELSE -1 END
    FROM transactions t, (SELECT 'x' AS grain UNION ALL SELECT 'y') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = NEW.family_id AND t.id IN (NEW.inflow_transaction_id, NEW.outflow_transaction_id)
      AND t.deleted_at IS NULL AND t.excluded AND COALESCE(t.excluded_reason, '') <> 'split';
END;
{{end}}
