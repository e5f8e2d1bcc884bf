-- An alias may now tie a keyed row of one door (a bank sync, an API
-- client's bank id) to the transaction another door wrote for the same
-- movement: reason 'matched' (see models.AliasMatched).
{{if .Postgres}}
ALTER TABLE provider_transaction_aliases DROP CONSTRAINT provider_transaction_aliases_reason_check;

--bun:split

ALTER TABLE provider_transaction_aliases ADD CONSTRAINT provider_transaction_aliases_reason_check
    CHECK (reason IN ('pending_posted', 'reissued', 'matched'));
{{else}}
CREATE TABLE provider_transaction_aliases_next (
    account_id     {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    source         varchar(32) NOT NULL,
    external_id    varchar(255) NOT NULL,
    transaction_id {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    reason         varchar(16) NOT NULL CHECK (reason IN ('pending_posted', 'reissued', 'matched')),
    created_at     {{.Time}} NOT NULL,
    PRIMARY KEY (account_id, source, external_id)
);

--bun:split

INSERT INTO provider_transaction_aliases_next SELECT account_id, family_id, source, external_id, transaction_id, reason, created_at
FROM provider_transaction_aliases;

--bun:split

DROP TABLE provider_transaction_aliases;

--bun:split

ALTER TABLE provider_transaction_aliases_next RENAME TO provider_transaction_aliases;

--bun:split

CREATE INDEX provider_transaction_aliases_tx_idx ON provider_transaction_aliases (transaction_id);
{{end}}
