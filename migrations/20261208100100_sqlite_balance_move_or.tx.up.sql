-- SQLite's balance move (20261206500000_balance_moves) again, with the
-- account types spelled as comparisons: SQLite builds a temporary b-tree
-- for each "IN (list)" every time a trigger's statement runs, and the move
-- names the list a dozen times, so each inserted row paid for ten such
-- trees (0.6 ms, nearly all allocation and page faults): a bulk create of
-- 1,000 spent 0.60 s of processor time in it, 0.05 s now. PostgreSQL's
-- function keeps its IN, which builds nothing.
{{- /* Expressions of the SQLite move, for a statement on one accounts row
      (its columns unqualified) and the move NEW. */ -}}
{{define "m"}}(CASE WHEN (account_type = 'credit_card' OR account_type = 'loan' OR account_type = 'other_liability') THEN NEW.amount ELSE -NEW.amount END){{end}}
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
{{if not .Postgres}}
DROP TRIGGER balance_moves_apply;

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
        cash_balance = CASE WHEN (account_type = 'depository' OR account_type = 'credit_card') THEN balance + {{template "bd"}} ELSE 0 END
    WHERE {{template "counted"}} AND {{template "bd"}} <> 0;
END;
{{end}}
