-- An account's register reads its newest rows in the list's order (date,
-- created_at, id, newest first) and stops at the page's LIMIT. With the
-- account's index ending at the day, the rows came from the family's
-- order index filtered by account: cheap for the account that holds most
-- of a family's rows, a walk of the family's whole history for one that
-- holds few (SQLite) or a sort of all of the account's rows. The same
-- index, carrying the order's last two columns, gives the register its
-- rows in order and still serves the balance walk, the refresh's range
-- sums and the lookups by account and day; a plain insert maintains as
-- many indexes as before.
DROP INDEX transactions_account_balance_idx;

--bun:split

CREATE INDEX transactions_account_balance_idx ON transactions
{{if .Postgres}}(account_id, date, created_at, id) INCLUDE (family_id, currency, amount, excluded, deleted_at){{else}}(account_id, date, created_at, id, family_id, currency, amount, excluded, deleted_at){{end}};
