-- Outgoing webhooks (issue 29): endpoints an admin registers, and each
-- delivery of an event to one, signed by the Standard Webhooks
-- specification. secret_enc is the signing secret, sealed (models/secret):
-- it must be read back to sign, so it cannot be hashed.
CREATE TABLE webhook_endpoints (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    url            varchar(2048) NOT NULL,
    description    varchar(255) NOT NULL DEFAULT '',
    events         {{.JSON}} NOT NULL DEFAULT '[]',
    secret_enc     text NOT NULL,
    enabled        boolean NOT NULL DEFAULT true,
    disabled_reason varchar(255),
    failing_since  {{.Time}},
    created_by     {{.UUID}},
    created_at     {{.Time}} NOT NULL,
    updated_at     {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX webhook_endpoints_family_idx ON webhook_endpoints (family_id, created_at);

--bun:split

-- A delivery is one event for one endpoint; its id is the webhook-id
-- header, the same on every attempt, so a receiver can drop a repeat.
-- event_key names the event's occurrence (a transaction's version, an
-- import's end): the unique index makes queuing an event twice a no-op.
CREATE TABLE webhook_deliveries (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    endpoint_id    {{.UUID}} NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_type     varchar(64) NOT NULL,
    event_key      varchar(255) NOT NULL,
    payload        text NOT NULL,
    status         varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts       integer NOT NULL DEFAULT 0,
    response_code  integer,
    last_error     varchar(500),
    duration_ms    integer,
    next_attempt_at {{.Time}},
    delivered_at   {{.Time}},
    created_at     {{.Time}} NOT NULL,
    updated_at     {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX webhook_deliveries_event_key ON webhook_deliveries (endpoint_id, event_key);

--bun:split

CREATE INDEX webhook_deliveries_family_idx ON webhook_deliveries (family_id, endpoint_id, created_at DESC);

--bun:split

-- Where each family's transaction feed was read up to, for the events of
-- transactions (created, updated, deleted) the worker derives from it.
CREATE TABLE webhook_cursors (
    family_id  {{.UUID}} PRIMARY KEY REFERENCES families (id) ON DELETE CASCADE,
    read_to    {{.Time}} NOT NULL
);

--bun:split

-- The feed's read: a family's rows changed since a time, in order.
CREATE INDEX transactions_family_updated_idx ON transactions (family_id, updated_at, id);

--bun:split

-- A transaction deleted for good (not tombstoned) leaves no row for the
-- feed to read; this trigger keeps its id for transaction.deleted, only
-- in families that have an endpoint. Every door that deletes (the API,
-- a revert, a split undone, a sync's purge) passes through it. deleted_us
-- is the time in microseconds since 1970, for ordering.
CREATE TABLE transaction_deletions (
    family_id      {{.UUID}} NOT NULL,
    transaction_id {{.UUID}} NOT NULL,
    account_id     {{.UUID}} NOT NULL,
    deleted_us     bigint NOT NULL,
    PRIMARY KEY (family_id, transaction_id)
);

--bun:split

CREATE INDEX transaction_deletions_time_idx ON transaction_deletions (family_id, deleted_us);

--bun:split

{{if .Postgres}}
CREATE FUNCTION transactions_deleted_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.family_id = OLD.family_id AND e.enabled) THEN
        INSERT INTO transaction_deletions (family_id, transaction_id, account_id, deleted_us)
        VALUES (OLD.family_id, OLD.id, OLD.account_id, CAST(extract(epoch FROM clock_timestamp()) * 1000000 AS bigint))
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;

--bun:split

CREATE TRIGGER transactions_deleted_webhooks AFTER DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION transactions_deleted_webhooks();
{{else}}
CREATE TRIGGER transactions_deleted_webhooks AFTER DELETE ON transactions
WHEN EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.family_id = OLD.family_id AND e.enabled)
BEGIN
    INSERT INTO transaction_deletions (family_id, transaction_id, account_id, deleted_us)
    VALUES (OLD.family_id, OLD.id, OLD.account_id, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER))
    ON CONFLICT DO NOTHING;
END;
{{end}}
