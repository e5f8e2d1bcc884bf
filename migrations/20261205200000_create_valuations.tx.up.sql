-- Valuations (issues 25 and 26): "this account was worth amount at the end
-- of day date", for what moves without transactions (a house, a loan's
-- principal) and to make a ledger agree with the bank. An account's balance
-- on a day is its latest valuation on or before it plus the transactions
-- after it (see models/balance_walk.go).
--
-- Every account has one valuation of kind 'opening': its opening balance.
-- Its date is NULL until a person sets one, meaning "the day before the
-- first transaction", so that every transaction counts from it, as before.
-- adjustment is derived (rewritten with the account's balance): what the
-- valuation moved the balance by, which the reports add on its day as
-- they add transactions; it is never income or spending.
CREATE TABLE valuations (
    id         {{.UUID}} PRIMARY KEY,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    account_id {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date       {{.Date}},
    amount     bigint NOT NULL,
    kind       varchar(16) NOT NULL CHECK (kind IN ('opening', 'reconciliation', 'manual')),
    notes      text,
    adjustment bigint NOT NULL DEFAULT 0,
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL,
    CHECK (date IS NOT NULL OR kind = 'opening')
);

--bun:split

-- One valuation per account and day; the reports and the register read
-- an account's valuations in date order through it.
CREATE UNIQUE INDEX valuations_account_date_key ON valuations (account_id, date);

--bun:split

CREATE UNIQUE INDEX valuations_opening_key ON valuations (account_id) WHERE kind = 'opening';

--bun:split

-- The net worth series reads a family's valuations over a period.
CREATE INDEX valuations_family_date_idx ON valuations (family_id, date);

--bun:split

-- Each existing account's opening balance becomes its opening valuation,
-- undated, so no balance changes. The account's id serves as the
-- valuation's (ids are unique per table), which needs no id generator on
-- either dialect.
INSERT INTO valuations (id, family_id, account_id, date, amount, kind, notes, adjustment, created_at, updated_at)
SELECT id, family_id, id, NULL, opening_balance, 'opening', NULL, 0, created_at, updated_at FROM accounts;
