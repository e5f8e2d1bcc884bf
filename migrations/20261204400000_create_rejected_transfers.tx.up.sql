-- A pair of transactions a person said is not a transfer: unpaired, or
-- a suggested pair turned down. Suggestions and the "mark as transfer"
-- rule's search for an existing other side skip these pairs, so a person
-- says it once.
CREATE TABLE rejected_transfers (
    family_id              {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    inflow_transaction_id  {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    outflow_transaction_id {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    created_at             {{.Time}} NOT NULL,
    PRIMARY KEY (inflow_transaction_id, outflow_transaction_id)
);

--bun:split

CREATE INDEX rejected_transfers_family_idx ON rejected_transfers (family_id);
