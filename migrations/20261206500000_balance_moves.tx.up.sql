-- Balances kept incrementally (issue 30): every write of a transaction
-- moves its account's stored balance and its valuations' adjustments by
-- its own amount, in the write's own database transaction, instead of a
-- job summing the account's whole history after it. The full walk
-- (models/balance_walk.go, RecalculateBalance) stays the definition:
-- `coffer balances check` compares the two, and a valuation or a change
-- of an account's currency or type still rewrites the account from it.
--
-- A move of amount m (as stored) on day d of account a counts as the walk
-- counts rows: not deleted, not excluded, in the account's currency. With
-- flow = +1 for a debt and -1 for an asset, and D the day the stored
-- balance counts up to (balance_updated_at, UTC):
--   * the adjustment of the first valuation dated on or after d moves by
--     -flow*m, unless that valuation is the account's first one (the
--     history before it is counted back from it);
--   * the balance moves by flow*m when d <= D and no valuation is dated in
--     [d, D] (and one is before d, undated, or none at all), and by
--     -flow*m when d > D and every valuation is dated on or after d (the
--     history before the first valuation is counted back from it).
-- An account never counted (balance_updated_at NULL) or marked with a
-- balance error is left to the full walk; a move that would take the
-- balance or an adjustment out of range marks the account 'overflow' and
-- writes nothing else, as RecalculateBalance does.
{{- /* Expressions of the SQLite move, for a statement on one accounts row
      (its columns unqualified) and the move NEW. */ -}}
{{define "m"}}(CASE WHEN account_type IN ('credit_card', 'loan', 'other_liability') THEN NEW.amount ELSE -NEW.amount END){{end}}
{{- define "bd"}}((CASE
    WHEN NEW.day <= date(balance_updated_at) THEN
      CASE WHEN NOT EXISTS (SELECT 1 FROM valuations v WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id
                            AND v.date >= NEW.day AND v.date <= date(balance_updated_at))
            AND (EXISTS (SELECT 1 FROM valuations v WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id
                         AND (v.date IS NULL OR v.date < NEW.day))
                 OR NOT EXISTS (SELECT 1 FROM valuations v WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id))
           THEN 1 ELSE 0 END
    ELSE
      CASE WHEN NOT EXISTS (SELECT 1 FROM valuations v WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id
                            AND (v.date IS NULL OR v.date < NEW.day))
            AND EXISTS (SELECT 1 FROM valuations v WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id
                        AND v.date >= NEW.day)
           THEN -1 ELSE 0 END
  END) * {{template "m"}}){{end}}
{{- define "target"}}(SELECT v.id FROM valuations v
   WHERE v.family_id = NEW.family_id AND v.account_id = NEW.account_id AND v.date >= NEW.day
     AND EXISTS (SELECT 1 FROM valuations w WHERE w.family_id = NEW.family_id AND w.account_id = NEW.account_id
                 AND (w.date IS NULL OR w.date < NEW.day))
   ORDER BY v.date LIMIT 1){{end}}
{{- define "counted"}}family_id = NEW.family_id AND id = NEW.account_id AND currency = NEW.currency
      AND balance_error IS NULL AND balance_updated_at IS NOT NULL{{end}}
{{if .Postgres}}
CREATE FUNCTION coffer_balance_move(p_family uuid, p_account uuid, p_currency text, p_day date, p_amount numeric) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    a record;
    v_id uuid;
    v_adjustment bigint;
    m numeric;
    bd numeric := 0;
    adj numeric;
    asof date;
    maxv constant numeric := 9223372036854775807;
BEGIN
    SELECT acc.balance, acc.account_type, acc.balance_updated_at INTO a FROM accounts acc
    WHERE acc.family_id = p_family AND acc.id = p_account AND acc.currency = p_currency
      AND acc.balance_error IS NULL AND acc.balance_updated_at IS NOT NULL;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    m := CASE WHEN a.account_type IN ('credit_card', 'loan', 'other_liability') THEN p_amount ELSE -p_amount END;
    asof := CAST(timezone('UTC', a.balance_updated_at) AS date);

    SELECT val.id, val.adjustment INTO v_id, v_adjustment FROM valuations val
    WHERE val.family_id = p_family AND val.account_id = p_account AND val.date >= p_day
    ORDER BY val.date LIMIT 1;
    IF v_id IS NOT NULL AND EXISTS (SELECT 1 FROM valuations val WHERE val.family_id = p_family AND val.account_id = p_account
                         AND (val.date IS NULL OR val.date < p_day)) THEN
        adj := v_adjustment - m;
    END IF;

    IF p_day <= asof THEN
        IF NOT EXISTS (SELECT 1 FROM valuations val WHERE val.family_id = p_family AND val.account_id = p_account
                       AND val.date >= p_day AND val.date <= asof)
           AND (EXISTS (SELECT 1 FROM valuations val WHERE val.family_id = p_family AND val.account_id = p_account
                        AND (val.date IS NULL OR val.date < p_day))
                OR NOT EXISTS (SELECT 1 FROM valuations val WHERE val.family_id = p_family AND val.account_id = p_account)) THEN
            bd := m;
        END IF;
    ELSIF NOT EXISTS (SELECT 1 FROM valuations val WHERE val.family_id = p_family AND val.account_id = p_account
                      AND (val.date IS NULL OR val.date < p_day)) THEN
        -- Every valuation, if any, is dated on or after p_day.
        IF v_id IS NOT NULL THEN
            bd := -m;
        END IF;
    END IF;

    IF abs(a.balance + bd) > maxv OR abs(COALESCE(adj, 0)) > maxv THEN
        UPDATE accounts SET balance_error = 'overflow' WHERE family_id = p_family AND id = p_account;
        RETURN;
    END IF;
    IF adj IS NOT NULL AND adj <> v_adjustment THEN
        UPDATE valuations SET adjustment = adj WHERE family_id = p_family AND id = v_id;
    END IF;
    IF bd <> 0 THEN
        UPDATE accounts SET balance = balance + bd,
               cash_balance = CASE WHEN account_type IN ('depository', 'credit_card') THEN balance + bd ELSE 0 END
        WHERE family_id = p_family AND id = p_account;
    END IF;
END $$;

--bun:split

-- One call per account, currency and day a statement changed, with what
-- it moved there: a bulk insert or a family's deletion costs a move per
-- day, not per row. An edit of other columns nets to nothing. Accounts
-- are taken in id order, as lockActiveAccounts takes them, so that two
-- statements over the same accounts never wait on each other in a circle.
CREATE FUNCTION coffer_transactions_balance() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR r IN SELECT family_id, account_id, currency, date, SUM(amount::numeric) AS amount FROM new_rows
                 WHERE deleted_at IS NULL AND NOT excluded GROUP BY 1, 2, 3, 4 ORDER BY 2, 4 LOOP
            PERFORM coffer_balance_move(r.family_id, r.account_id, r.currency, r.date, r.amount);
        END LOOP;
    ELSIF TG_OP = 'DELETE' THEN
        FOR r IN SELECT family_id, account_id, currency, date, -SUM(amount::numeric) AS amount FROM old_rows
                 WHERE deleted_at IS NULL AND NOT excluded GROUP BY 1, 2, 3, 4 ORDER BY 2, 4 LOOP
            PERFORM coffer_balance_move(r.family_id, r.account_id, r.currency, r.date, r.amount);
        END LOOP;
    ELSE
        FOR r IN SELECT family_id, account_id, currency, date, SUM(amount) AS amount FROM (
                     SELECT family_id, account_id, currency, date, -(amount::numeric) AS amount FROM old_rows
                     WHERE deleted_at IS NULL AND NOT excluded
                     UNION ALL
                     SELECT family_id, account_id, currency, date, amount::numeric FROM new_rows
                     WHERE deleted_at IS NULL AND NOT excluded) moved
                 GROUP BY 1, 2, 3, 4 HAVING SUM(amount) <> 0 ORDER BY 2, 4 LOOP
            PERFORM coffer_balance_move(r.family_id, r.account_id, r.currency, r.date, r.amount);
        END LOOP;
    END IF;
    RETURN NULL;
END $$;

--bun:split

CREATE TRIGGER transactions_balance_insert AFTER INSERT ON transactions
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_balance();

--bun:split

CREATE TRIGGER transactions_balance_update AFTER UPDATE ON transactions
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_balance();

--bun:split

CREATE TRIGGER transactions_balance_delete AFTER DELETE ON transactions
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION coffer_transactions_balance();
{{else}}
-- SQLite has no functions of SQL and no statement triggers: each row's
-- move is an insert into this view, whose INSTEAD OF trigger holds the
-- rule once and applies it (nothing is stored).
CREATE VIEW balance_moves AS
SELECT family_id, id AS account_id, currency, '' AS day, 0 AS amount FROM accounts WHERE 0;

--bun:split

CREATE TRIGGER balance_moves_apply INSTEAD OF INSERT ON balance_moves
BEGIN
    -- A move out of range marks the account and writes nothing else.
    UPDATE accounts SET balance_error = 'overflow'
    WHERE {{template "counted"}}
      AND (CASE WHEN {{template "bd"}} > 0 THEN balance > 9223372036854775807 - {{template "bd"}}
                WHEN {{template "bd"}} < 0 THEN balance < -9223372036854775807 - {{template "bd"}}
                ELSE 0 END
           OR COALESCE(CASE WHEN {{template "m"}} > 0 THEN (SELECT adjustment FROM valuations WHERE id = {{template "target"}}) < -9223372036854775807 + {{template "m"}}
                            WHEN {{template "m"}} < 0 THEN (SELECT adjustment FROM valuations WHERE id = {{template "target"}}) > 9223372036854775807 + {{template "m"}}
                            ELSE 0 END, 0));

    UPDATE valuations
    SET adjustment = adjustment - (SELECT {{template "m"}} FROM accounts WHERE {{template "counted"}})
    WHERE family_id = NEW.family_id AND id = {{template "target"}}
      AND EXISTS (SELECT 1 FROM accounts WHERE {{template "counted"}});

    UPDATE accounts
    SET balance = balance + {{template "bd"}},
        cash_balance = CASE WHEN account_type IN ('depository', 'credit_card') THEN balance + {{template "bd"}} ELSE 0 END
    WHERE {{template "counted"}} AND {{template "bd"}} <> 0;
END;

--bun:split

CREATE TRIGGER transactions_balance_insert AFTER INSERT ON transactions
WHEN NEW.deleted_at IS NULL AND NOT NEW.excluded
BEGIN
    INSERT INTO balance_moves (family_id, account_id, currency, day, amount)
    VALUES (NEW.family_id, NEW.account_id, NEW.currency, NEW.date, NEW.amount);
END;

--bun:split

CREATE TRIGGER transactions_balance_update AFTER UPDATE ON transactions
WHEN OLD.account_id IS NOT NEW.account_id OR OLD.family_id IS NOT NEW.family_id OR OLD.date IS NOT NEW.date
  OR OLD.amount IS NOT NEW.amount OR OLD.currency IS NOT NEW.currency OR OLD.excluded IS NOT NEW.excluded
  OR (OLD.deleted_at IS NULL) IS NOT (NEW.deleted_at IS NULL)
BEGIN
    INSERT INTO balance_moves (family_id, account_id, currency, day, amount)
    SELECT OLD.family_id, OLD.account_id, OLD.currency, OLD.date, -OLD.amount WHERE OLD.deleted_at IS NULL AND NOT OLD.excluded;
    INSERT INTO balance_moves (family_id, account_id, currency, day, amount)
    SELECT NEW.family_id, NEW.account_id, NEW.currency, NEW.date, NEW.amount WHERE NEW.deleted_at IS NULL AND NOT NEW.excluded;
END;

--bun:split

CREATE TRIGGER transactions_balance_delete AFTER DELETE ON transactions
WHEN OLD.deleted_at IS NULL AND NOT OLD.excluded
BEGIN
    INSERT INTO balance_moves (family_id, account_id, currency, day, amount)
    VALUES (OLD.family_id, OLD.account_id, OLD.currency, OLD.date, -OLD.amount);
END;
{{end}}
