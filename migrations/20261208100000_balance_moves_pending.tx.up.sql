-- Balances kept incrementally without a hot row (issue 30). Since
-- 20261206500000_balance_moves every write moved its account's stored
-- balance in its own database transaction: it updated the accounts row and
-- held it until its commit was on disk, while every concurrent write of
-- the account held the same row FOR KEY SHARE (its foreign key check).
-- With 32 concurrent creates on one account PostgreSQL spent its time
-- building multixacts for that one row (wait event MultiXactMemberSLRU)
-- and managed 100 to 300 creates a second.
--
-- Now a write on PostgreSQL only appends its moves to
-- balance_moves_pending, and the account's refresh, which every write
-- already queues (models.Store.RefreshBalance: within a second or two;
-- at once for a person's write from a screen, jobs.SettleBalances),
-- applies what waits with the rule of 20261206500000 (coffer_balance_move)
-- against the valuations of that moment: the write no longer touches the
-- accounts row beyond its key check, and the refresh reads only the moves
-- since the last one, never the account's history.
--
-- Whoever applies moves holds the account FOR UPDATE (lockAccount), which
-- waits for the writes in flight and holds off new ones until it commits
-- (each write holds its accounts FOR KEY SHARE before it appends: an
-- insert by its foreign key check, an edit or a deletion by the trigger):
-- a walk that applies what waits and then reads the rows counts each move
-- once.
--
-- SQLite has one writer at a time, so no hot row: its triggers still apply
-- each move at once and never write this table, which exists there only so
-- that both schemas list the same tables.
CREATE TABLE balance_moves_pending (
    family_id  {{.UUID}} NOT NULL,
    account_id {{.UUID}} NOT NULL,
{{- if .Postgres}}
    seq        bigint GENERATED ALWAYS AS IDENTITY,
{{- else}}
    seq        integer NOT NULL,
{{- end}}
    currency   varchar(3) NOT NULL,
    day        date NOT NULL,
    amount     numeric NOT NULL,
    PRIMARY KEY (family_id, account_id, seq)
);
{{if .Postgres}}
--bun:split

-- coffer_balance_settle applies what waits for an account. The caller
-- holds the account row FOR UPDATE (lockAccount), so no one else settles
-- it meanwhile and no write commits a move until it is done.
CREATE FUNCTION coffer_balance_settle(p_family uuid, p_account uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN WITH gone AS (
                 DELETE FROM balance_moves_pending WHERE family_id = p_family AND account_id = p_account
                 RETURNING currency, day, amount)
             SELECT currency, day, SUM(amount) AS amount FROM gone GROUP BY 1, 2 HAVING SUM(amount) <> 0 ORDER BY 2, 1 LOOP
        PERFORM coffer_balance_move(p_family, p_account, r.currency, r.day, r.amount);
    END LOOP;
END $$;

--bun:split

-- What a statement moved, appended in one INSERT: one row per account,
-- currency and day (a bulk insert or a family's deletion appends a row per
-- day, not per transaction row); an edit of other columns nets to nothing.
--
-- An insert's foreign key check has already taken its accounts FOR KEY
-- SHARE, which holds off a walk until this write commits. An edit or a
-- deletion takes them here, in id order; an account deleted in this same
-- transaction (its deletion cascading to its transactions) is not found,
-- and its moves go with it. Nothing else touches the accounts row: a lock
-- of a row some other transaction holds as well goes through PostgreSQL's
-- multixacts, which 32 concurrent creates of one account made their
-- bottleneck (pgbench of a bare INSERT on 32 connections: 180 per second
-- with one more FOR KEY SHARE here, 520 without, 550 with no trigger).
CREATE OR REPLACE FUNCTION coffer_transactions_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO balance_moves_pending (family_id, account_id, currency, day, amount)
        SELECT family_id, account_id, currency, date, SUM(amount::numeric) FROM new_rows
        WHERE deleted_at IS NULL AND NOT excluded GROUP BY 1, 2, 3, 4 HAVING SUM(amount::numeric) <> 0;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM 1 FROM accounts a
        WHERE a.id IN (SELECT account_id FROM old_rows WHERE deleted_at IS NULL AND NOT excluded)
        ORDER BY a.id FOR KEY SHARE;
        INSERT INTO balance_moves_pending (family_id, account_id, currency, day, amount)
        SELECT o.family_id, o.account_id, o.currency, o.date, -SUM(o.amount::numeric) FROM old_rows o
        WHERE o.deleted_at IS NULL AND NOT o.excluded
          AND EXISTS (SELECT 1 FROM accounts a WHERE a.family_id = o.family_id AND a.id = o.account_id)
        GROUP BY 1, 2, 3, 4 HAVING SUM(o.amount::numeric) <> 0;
    ELSE
        PERFORM 1 FROM accounts a
        WHERE a.id IN (SELECT account_id FROM old_rows WHERE deleted_at IS NULL AND NOT excluded
                       UNION SELECT account_id FROM new_rows WHERE deleted_at IS NULL AND NOT excluded)
        ORDER BY a.id FOR KEY SHARE;
        INSERT INTO balance_moves_pending (family_id, account_id, currency, day, amount)
        SELECT m.family_id, m.account_id, m.currency, m.date, SUM(m.amount) FROM (
            SELECT family_id, account_id, currency, date, -(amount::numeric) AS amount FROM old_rows
            WHERE deleted_at IS NULL AND NOT excluded
            UNION ALL
            SELECT family_id, account_id, currency, date, amount::numeric FROM new_rows
            WHERE deleted_at IS NULL AND NOT excluded) m
        WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.family_id = m.family_id AND a.id = m.account_id)
        GROUP BY 1, 2, 3, 4 HAVING SUM(m.amount) <> 0;
    END IF;
    RETURN NULL;
END $$;

--bun:split

-- What waits for an account that is deleted goes with it (the table has
-- no foreign key: its check would lock the account row).
CREATE FUNCTION coffer_account_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM balance_moves_pending p USING old_rows o WHERE p.family_id = o.family_id AND p.account_id = o.id;
    RETURN NULL;
END $$;

--bun:split

CREATE TRIGGER accounts_balance_moves_gone AFTER DELETE ON accounts
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_account_gone();
{{end}}
