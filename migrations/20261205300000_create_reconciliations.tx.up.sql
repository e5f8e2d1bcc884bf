-- Reconciliation against the bank statement (issue 26 item 3): a person
-- enters the statement's date and ending balance, ticks the rows the bank
-- shows (cleared) until the ledger agrees, and finishes. A finished
-- reconciliation is kept as a record (who, when, what balance), and the
-- rows it included are locked: edits, rules, bank syncs and imports leave
-- them alone until a person unlocks one.
CREATE TABLE reconciliations (
    id                {{.UUID}} PRIMARY KEY,
    family_id         {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    account_id        {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    statement_date    {{.Date}} NOT NULL,
    -- ten-thousandths of the account's currency, the ledger's way: what
    -- the account holds for an asset, what is owed for a liability
    statement_balance bigint NOT NULL,
    cleared_balance   bigint,
    user_id           {{.UUID}} REFERENCES users (id) ON DELETE SET NULL,
    status            varchar(16) NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'finished')),
    created_at        {{.Time}} NOT NULL,
    finished_at       {{.Time}},
    updated_at        {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX reconciliations_account_idx ON reconciliations (family_id, account_id, created_at);

--bun:split

-- At most one reconciliation in progress per account.
CREATE UNIQUE INDEX reconciliations_in_progress_key ON reconciliations (account_id) WHERE status = 'in_progress';

--bun:split

-- cleared: the bank shows the row (ticked by a person). reconciliation_id:
-- the finished reconciliation that included it; set, the row is locked.
ALTER TABLE transactions ADD COLUMN cleared {{.Bool}} NOT NULL DEFAULT false;

--bun:split

ALTER TABLE transactions ADD COLUMN reconciliation_id {{.UUID}} REFERENCES reconciliations (id) ON DELETE SET NULL;

--bun:split

CREATE INDEX transactions_reconciliation_idx ON transactions (reconciliation_id) WHERE reconciliation_id IS NOT NULL;
