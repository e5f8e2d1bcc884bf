-- Daily and monthly sums of the transactions (issue 30, point 4): the
-- reports and the balance series read these instead of summing every row
-- of their period each time they are drawn, so they stay flat as a
-- family's history grows.
--
-- The table holds deltas and is only ever appended to by the triggers:
-- each statement on transactions or transfers appends one row per group
-- it changed (grain, day, account, currency, category, transfer leg or
-- not, income or not), never updates a row, so thirty-two creates on one
-- account never wait on one another. A reader sums whatever rows a key
-- has; CompactTransactionSums (models/transaction_sums.go) replaces a
-- key's rows by one (merged), which no reader can tell from the deltas.
-- Only counted rows are summed: not deleted, not excluded (split parents
-- are excluded); pending rows count as the reports count them.
--
-- grain 'd' is a day; grain 'm' is a month (day = its first day), which a
-- report of whole months reads: at most a row per account, category and
-- direction a month, however many transactions it had. Grain 'a' is an
-- account's day, all categories, directions and transfers together (no
-- category, transfer and income false): what the balance series read, at
-- most a row per account a day.
--
-- transaction_sums_fresh is the definition: the same sums straight from
-- the rows. The backfill below, and the repair and check of the store,
-- read it, and a test compares it with what the triggers kept.
CREATE TABLE transaction_sums (
    family_id   {{.UUID}} NOT NULL, -- no foreign key: its check would cost every write (see families_sums_delete)
    grain       char(1) NOT NULL,
    day         {{.Date}} NOT NULL,
    account_id  {{.UUID}} NOT NULL,
    currency    char(3) NOT NULL,
    category_id {{.UUID}},
    transfer    {{.Bool}} NOT NULL,
    income      {{.Bool}} NOT NULL,
    amount      {{if .Postgres}}numeric{{else}}bigint{{end}} NOT NULL,
    n           bigint NOT NULL,
    merged      {{.Bool}} NOT NULL DEFAULT false
);

{{if .Postgres}}
--bun:split

CREATE FUNCTION coffer_families_sums_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM transaction_sums WHERE family_id = OLD.id;
    RETURN NULL;
END $$;
{{end}}
--bun:split

-- A family's sums go with it. A foreign key would do the same, but checks
-- every appended row against families: a sixth of what a create's
-- trigger costs. The triggers append nothing for a family that is gone.
CREATE TRIGGER families_sums_delete AFTER DELETE ON families
{{- if .Postgres}}
FOR EACH ROW EXECUTE FUNCTION coffer_families_sums_delete();
{{- else}}
BEGIN
    DELETE FROM transaction_sums WHERE family_id = OLD.id;
END;
{{- end}}

--bun:split

-- What every reader reads: a family's grain over a range of days.
CREATE INDEX transaction_sums_day_idx ON transaction_sums (family_id, grain, day);

--bun:split

-- What compaction looks for: the deltas not merged yet.
CREATE INDEX transaction_sums_fresh_idx ON transaction_sums (family_id) WHERE NOT merged;

--bun:split

CREATE VIEW transaction_sums_fresh AS
SELECT t.family_id, g.grain,
       CASE WHEN g.grain <> 'm' THEN t.date ELSE {{if .Postgres}}CAST(date_trunc('month', CAST(t.date AS timestamp)) AS date){{else}}date(t.date, 'start of month'){{end}} END AS day,
       t.account_id, t.currency, CASE WHEN g.grain = 'a' THEN NULL ELSE t.category_id END AS category_id,
       g.grain <> 'a' AND (EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = t.family_id AND tr.inflow_transaction_id = t.id)
        OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = t.family_id AND tr.outflow_transaction_id = t.id)) AS transfer,
       g.grain <> 'a' AND t.amount < 0 AS income, SUM(t.amount) AS amount, COUNT(*) AS n
FROM transactions t CROSS JOIN (SELECT 'd' AS grain UNION ALL SELECT 'm' UNION ALL SELECT 'a') g
WHERE t.deleted_at IS NULL AND NOT t.excluded
GROUP BY t.family_id, g.grain, 3, t.account_id, t.currency, 6, 7, 8;

--bun:split

INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n, merged)
SELECT family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n, true FROM transaction_sums_fresh;
{{if .Postgres}}
--bun:split

-- Appends what a statement on transactions moved, per group. A new row is
-- no transfer leg yet (a transfer names rows that exist); a deleted one is
-- none any more (transactions_sums_unlink took its transfer away first).
-- An edit of other columns nets to nothing and appends nothing. A family
-- being deleted (its row gone) gets nothing: its sums go with it.
CREATE FUNCTION coffer_transactions_sums() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain <> 'm' THEN date ELSE CAST(date_trunc('month', CAST(date AS timestamp)) AS date) END,
               account_id, currency, CASE WHEN g.grain = 'a' THEN NULL ELSE category_id END, false,
               g.grain <> 'a' AND amount < 0, SUM(amount), COUNT(*)
        FROM new_rows CROSS JOIN (VALUES ('d'), ('m'), ('a')) g (grain)
        WHERE deleted_at IS NULL AND NOT excluded
        GROUP BY 1, 2, 3, 4, 5, 6, 8;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain <> 'm' THEN date ELSE CAST(date_trunc('month', CAST(date AS timestamp)) AS date) END,
               account_id, currency, CASE WHEN g.grain = 'a' THEN NULL ELSE category_id END, false,
               g.grain <> 'a' AND amount < 0, -SUM(amount), -COUNT(*)
        FROM old_rows CROSS JOIN (VALUES ('d'), ('m'), ('a')) g (grain)
        WHERE deleted_at IS NULL AND NOT excluded AND family_id IN (SELECT f.id FROM families f)
        GROUP BY 1, 2, 3, 4, 5, 6, 8;
    ELSE
        INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
        SELECT family_id, g.grain,
               CASE WHEN g.grain <> 'm' THEN date ELSE CAST(date_trunc('month', CAST(date AS timestamp)) AS date) END,
               account_id, currency, CASE WHEN g.grain = 'a' THEN NULL ELSE category_id END,
               g.grain <> 'a' AND transfer, g.grain <> 'a' AND income, SUM(amount), SUM(n)
        FROM (
            SELECT id, family_id, date, account_id, currency, category_id, amount < 0 AS income, -amount AS amount, -1 AS n
            FROM old_rows WHERE deleted_at IS NULL AND NOT excluded
            UNION ALL
            SELECT id, family_id, date, account_id, currency, category_id, amount < 0, amount, 1
            FROM new_rows WHERE deleted_at IS NULL AND NOT excluded
        ) m
        CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = m.family_id AND tr.inflow_transaction_id = m.id)
                                OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = m.family_id AND tr.outflow_transaction_id = m.id) AS transfer) l
        CROSS JOIN (VALUES ('d'), ('m'), ('a')) g (grain)
        WHERE family_id IN (SELECT f.id FROM families f)
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
        HAVING SUM(amount) <> 0 OR SUM(n) <> 0;
    END IF;
    RETURN NULL;
END $$;

--bun:split

CREATE TRIGGER transactions_sums_insert AFTER INSERT ON transactions
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_sums();

--bun:split

CREATE TRIGGER transactions_sums_update AFTER UPDATE ON transactions
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_sums();

--bun:split

CREATE TRIGGER transactions_sums_delete AFTER DELETE ON transactions
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_sums();

--bun:split

-- A transaction's transfer goes before the transaction does, while the
-- legs can still be read, so that its legs' sums move back out of the
-- transfer side (what the foreign key's cascade would do only after the
-- row is gone, too late to know what it summed).
CREATE FUNCTION coffer_transactions_sums_unlink() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = OLD.family_id
               AND (tr.inflow_transaction_id = OLD.id OR tr.outflow_transaction_id = OLD.id)) THEN
        DELETE FROM transfers tr WHERE tr.family_id = OLD.family_id
          AND (tr.inflow_transaction_id = OLD.id OR tr.outflow_transaction_id = OLD.id);
    END IF;
    RETURN OLD;
END $$;

--bun:split

CREATE TRIGGER transactions_sums_unlink BEFORE DELETE ON transactions
FOR EACH ROW EXECUTE FUNCTION coffer_transactions_sums_unlink();

--bun:split

-- Linking two rows as a transfer moves their sums to the transfer side;
-- unlinking moves them back.
CREATE FUNCTION coffer_transfers_sums() RETURNS trigger
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
    JOIN transactions t ON t.family_id = l.family_id AND t.id = l.id
    CROSS JOIN (VALUES (true), (false)) s (transfer)
    CROSS JOIN (VALUES ('d'), ('m')) g (grain)
    WHERE t.deleted_at IS NULL AND NOT t.excluded AND t.family_id IN (SELECT f.id FROM families f)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END) <> 0
        OR SUM(CASE WHEN s.transfer THEN l.sign ELSE -l.sign END * t.amount) <> 0;
    RETURN NULL;
END $$;

--bun:split

CREATE TRIGGER transfers_sums_insert AFTER INSERT ON transfers
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transfers_sums();

--bun:split

CREATE TRIGGER transfers_sums_update AFTER UPDATE ON transfers
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transfers_sums();

--bun:split

CREATE TRIGGER transfers_sums_delete AFTER DELETE ON transfers
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transfers_sums();
{{else}}
--bun:split

-- SQLite has no statement triggers: one row's move at a time, the same
-- rules as the PostgreSQL functions above (see there).
CREATE TRIGGER transactions_sums_insert AFTER INSERT ON transactions
WHEN NEW.deleted_at IS NULL AND NOT NEW.excluded
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    VALUES (NEW.family_id, 'd', NEW.date, NEW.account_id, NEW.currency, NEW.category_id, 0, NEW.amount < 0, NEW.amount, 1),
           (NEW.family_id, 'm', date(NEW.date, 'start of month'), NEW.account_id, NEW.currency, NEW.category_id, 0, NEW.amount < 0, NEW.amount, 1),
           (NEW.family_id, 'a', NEW.date, NEW.account_id, NEW.currency, NULL, 0, 0, NEW.amount, 1);
END;

--bun:split

CREATE TRIGGER transactions_sums_update AFTER UPDATE ON transactions
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.family_id IS NOT NEW.family_id OR OLD.date IS NOT NEW.date
  OR OLD.amount IS NOT NEW.amount OR OLD.currency IS NOT NEW.currency OR OLD.excluded IS NOT NEW.excluded
  OR OLD.category_id IS NOT NEW.category_id OR (OLD.deleted_at IS NULL) IS NOT (NEW.deleted_at IS NULL)
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT OLD.family_id, g.grain, CASE WHEN g.grain <> 'm' THEN OLD.date ELSE date(OLD.date, 'start of month') END,
           OLD.account_id, OLD.currency, CASE WHEN g.grain = 'a' THEN NULL ELSE OLD.category_id END,
           g.grain <> 'a' AND (EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = OLD.family_id AND tr.inflow_transaction_id = OLD.id)
           OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = OLD.family_id AND tr.outflow_transaction_id = OLD.id)),
           g.grain <> 'a' AND OLD.amount < 0, -OLD.amount, -1
    FROM (SELECT 'd' AS grain UNION ALL SELECT 'm' UNION ALL SELECT 'a') g
    WHERE OLD.deleted_at IS NULL AND NOT OLD.excluded AND EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT NEW.family_id, g.grain, CASE WHEN g.grain <> 'm' THEN NEW.date ELSE date(NEW.date, 'start of month') END,
           NEW.account_id, NEW.currency, CASE WHEN g.grain = 'a' THEN NULL ELSE NEW.category_id END,
           g.grain <> 'a' AND (EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = NEW.family_id AND tr.inflow_transaction_id = NEW.id)
           OR EXISTS (SELECT 1 FROM transfers tr WHERE tr.family_id = NEW.family_id AND tr.outflow_transaction_id = NEW.id)),
           g.grain <> 'a' AND NEW.amount < 0, NEW.amount, 1
    FROM (SELECT 'd' AS grain UNION ALL SELECT 'm' UNION ALL SELECT 'a') g
    WHERE NEW.deleted_at IS NULL AND NOT NEW.excluded AND EXISTS (SELECT 1 FROM families f WHERE f.id = NEW.family_id);
END;

--bun:split

CREATE TRIGGER transactions_sums_unlink BEFORE DELETE ON transactions
BEGIN
    DELETE FROM transfers WHERE family_id = OLD.family_id
      AND (inflow_transaction_id = OLD.id OR outflow_transaction_id = OLD.id);
END;

--bun:split

CREATE TRIGGER transactions_sums_delete AFTER DELETE ON transactions
WHEN OLD.deleted_at IS NULL AND NOT OLD.excluded
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT OLD.family_id, g.grain, CASE WHEN g.grain <> 'm' THEN OLD.date ELSE date(OLD.date, 'start of month') END,
           OLD.account_id, OLD.currency, CASE WHEN g.grain = 'a' THEN NULL ELSE OLD.category_id END, 0,
           g.grain <> 'a' AND OLD.amount < 0, -OLD.amount, -1
    FROM (SELECT 'd' AS grain UNION ALL SELECT 'm' UNION ALL SELECT 'a') g
    WHERE EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
END;

--bun:split

CREATE TRIGGER transfers_sums_insert AFTER INSERT ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'd' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, t.category_id, s.transfer, t.amount < 0,
           CASE WHEN s.transfer THEN t.amount ELSE -t.amount END, CASE WHEN s.transfer THEN 1 ELSE -1 END
    FROM transactions t, (SELECT 'd' AS grain UNION ALL SELECT 'm') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = NEW.family_id AND t.id IN (NEW.inflow_transaction_id, NEW.outflow_transaction_id)
      AND t.deleted_at IS NULL AND NOT t.excluded;
END;

--bun:split

CREATE TRIGGER transfers_sums_delete AFTER DELETE ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'd' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, t.category_id, s.transfer, t.amount < 0,
           CASE WHEN s.transfer THEN -t.amount ELSE t.amount END, CASE WHEN s.transfer THEN -1 ELSE 1 END
    FROM transactions t, (SELECT 'd' AS grain UNION ALL SELECT 'm') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = OLD.family_id AND t.id IN (OLD.inflow_transaction_id, OLD.outflow_transaction_id)
      AND t.deleted_at IS NULL AND NOT t.excluded AND EXISTS (SELECT 1 FROM families f WHERE f.id = OLD.family_id);
END;

--bun:split

CREATE TRIGGER transfers_sums_update AFTER UPDATE OF inflow_transaction_id, outflow_transaction_id, family_id ON transfers
BEGIN
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'd' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, t.category_id, s.transfer, t.amount < 0,
           CASE WHEN s.transfer THEN -t.amount ELSE t.amount END, CASE WHEN s.transfer THEN -1 ELSE 1 END
    FROM transactions t, (SELECT 'd' AS grain UNION ALL SELECT 'm') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = OLD.family_id AND t.id IN (OLD.inflow_transaction_id, OLD.outflow_transaction_id)
      AND t.deleted_at IS NULL AND NOT t.excluded;
    INSERT INTO transaction_sums (family_id, grain, day, account_id, currency, category_id, transfer, income, amount, n)
    SELECT t.family_id, g.grain, CASE WHEN g.grain = 'd' THEN t.date ELSE date(t.date, 'start of month') END,
           t.account_id, t.currency, t.category_id, s.transfer, t.amount < 0,
           CASE WHEN s.transfer THEN t.amount ELSE -t.amount END, CASE WHEN s.transfer THEN 1 ELSE -1 END
    FROM transactions t, (SELECT 'd' AS grain UNION ALL SELECT 'm') g, (SELECT 1 AS transfer UNION ALL SELECT 0) s
    WHERE t.family_id = NEW.family_id AND t.id IN (NEW.inflow_transaction_id, NEW.outflow_transaction_id)
      AND t.deleted_at IS NULL AND NOT t.excluded;
END;
{{end}}
