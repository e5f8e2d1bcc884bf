-- SimpleFIN sync bookkeeping and import (spec/aggregator.md §3, §6, §8, §9):
-- remote accounts, the sync tree (a connection-level parent and one child
-- per account step), the fetched payloads the children import from, and
-- re-issued/pending id aliases. The ledger transactions gain the columns the
-- importer needs: a tombstone, fields the user locked, the provider's view of
-- the row and an exclusion flag for stale pending rows.

ALTER TABLE transactions ADD COLUMN provider_connection_id {{.UUID}};

--bun:split

ALTER TABLE transactions ADD COLUMN excluded {{.Bool}} NOT NULL DEFAULT false;

--bun:split

ALTER TABLE transactions ADD COLUMN excluded_reason varchar(32);

--bun:split

-- A JSON array of field names the user edited; the importer never writes them.
ALTER TABLE transactions ADD COLUMN locked_fields {{.JSON}};

--bun:split

-- Deleting an imported row leaves this tombstone so that it never comes back.
ALTER TABLE transactions ADD COLUMN deleted_at {{.Time}};

--bun:split

-- Hex SHA-256 of (account, date, amount, description, remote fingerprint):
-- what the re-issued id guard compares.
ALTER TABLE transactions ADD COLUMN content_key varchar(64);

--bun:split

ALTER TABLE transactions ADD COLUMN provider_meta {{.JSON}};

--bun:split

CREATE INDEX transactions_content_key_idx ON transactions (account_id, content_key) WHERE source = 'simplefin' AND NOT pending;

--bun:split

CREATE INDEX transactions_pending_idx ON transactions (account_id) WHERE pending AND NOT excluded;

--bun:split

CREATE INDEX transactions_connection_idx ON transactions (provider_connection_id) WHERE provider_connection_id IS NOT NULL;

--bun:split

ALTER TABLE provider_connections ADD COLUMN last_success_sync_id {{.UUID}};

--bun:split

CREATE TABLE provider_accounts (
    id                {{.UUID}} PRIMARY KEY,
    family_id         {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    connection_id     {{.UUID}} NOT NULL REFERENCES provider_connections (id) ON DELETE CASCADE,
    remote_id         varchar(255) NOT NULL,
    account_id        {{.UUID}} REFERENCES accounts (id) ON DELETE SET NULL,
    import_enabled    {{.Bool}} NOT NULL DEFAULT true,
    name              varchar(255) NOT NULL,
    org_name          varchar(255),
    currency          char(3) NOT NULL,
    currency_raw      varchar(255),
    balance           bigint,
    available_balance bigint,
    balance_date      {{.Time}},
    attention         text,
    last_seen_at      {{.Time}},
    created_at        {{.Time}} NOT NULL,
    updated_at        {{.Time}} NOT NULL
);

--bun:split

-- An account id changes only when the user re-adds the bank at the Bridge.
CREATE UNIQUE INDEX provider_accounts_remote_key ON provider_accounts (connection_id, remote_id);

--bun:split

-- A ledger account is fed by at most one remote account.
CREATE UNIQUE INDEX provider_accounts_account_key ON provider_accounts (account_id) WHERE account_id IS NOT NULL;

--bun:split

CREATE TABLE syncs (
    id                     {{.UUID}} PRIMARY KEY,
    family_id              {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    connection_id          {{.UUID}} NOT NULL REFERENCES provider_connections (id) ON DELETE CASCADE,
    parent_id              {{.UUID}} REFERENCES syncs (id) ON DELETE CASCADE,
    provider_account_id    {{.UUID}} REFERENCES provider_accounts (id) ON DELETE CASCADE,
    kind                   varchar(16) NOT NULL CHECK (kind IN ('connection', 'account')),
    "trigger"              varchar(16) NOT NULL CHECK ("trigger" IN ('connect', 'manual', 'schedule')),
    "full"                 {{.Bool}} NOT NULL DEFAULT false,
    status                 varchar(16) NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    phase                  varchar(16) NOT NULL DEFAULT 'fetch' CHECK (phase IN ('fetch', 'import')),
    window_start           {{.Time}},
    window_end             {{.Time}},
    not_before             {{.Time}} NOT NULL,
    lease_until            {{.Time}},
    scheduled_for          {{.Date}},
    requests_used          integer NOT NULL DEFAULT 0,
    accounts_created       integer NOT NULL DEFAULT 0,
    accounts_updated       integer NOT NULL DEFAULT 0,
    accounts_skipped       integer NOT NULL DEFAULT 0,
    transactions_created   integer NOT NULL DEFAULT 0,
    transactions_updated   integer NOT NULL DEFAULT 0,
    transactions_skipped   integer NOT NULL DEFAULT 0,
    transactions_rejected  integer NOT NULL DEFAULT 0,
    pending_reconciled     integer NOT NULL DEFAULT 0,
    stale_pending_excluded integer NOT NULL DEFAULT 0,
    reissued_suppressed    integer NOT NULL DEFAULT 0,
    warnings               {{.JSON}},
    error                  text,
    created_at             {{.Time}} NOT NULL,
    started_at             {{.Time}},
    finished_at            {{.Time}}
);

--bun:split

-- At most one active sync per connection: Sync now, the schedule and the
-- sweeper all insert with ON CONFLICT DO NOTHING and join the active one.
CREATE UNIQUE INDEX syncs_active_key ON syncs (connection_id) WHERE kind = 'connection' AND status IN ('pending', 'running');

--bun:split

-- Two schedulers on the same tick make one scheduled sync.
CREATE UNIQUE INDEX syncs_scheduled_key ON syncs (connection_id, scheduled_for) WHERE "trigger" = 'schedule' AND kind = 'connection';

--bun:split

CREATE UNIQUE INDEX syncs_child_key ON syncs (parent_id, provider_account_id) WHERE parent_id IS NOT NULL;

--bun:split

CREATE INDEX syncs_family_idx ON syncs (family_id, created_at, id) WHERE kind = 'connection';

--bun:split

-- One fetched window of one remote account, gzip JSON; deleted when the parent finishes.
CREATE TABLE sync_payloads (
    sync_id      {{.UUID}} NOT NULL REFERENCES syncs (id) ON DELETE CASCADE,
    family_id    {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    chunk_index  integer NOT NULL,
    remote_id    varchar(255) NOT NULL,
    window_start {{.Time}} NOT NULL,
    window_end   {{.Time}} NOT NULL,
    body_gz      {{if .Postgres}}bytea{{else}}blob{{end}} NOT NULL,
    created_at   {{.Time}} NOT NULL,
    PRIMARY KEY (sync_id, chunk_index, remote_id)
);

--bun:split

CREATE TABLE provider_transaction_aliases (
    account_id     {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    source         varchar(32) NOT NULL,
    external_id    varchar(255) NOT NULL,
    transaction_id {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    reason         varchar(16) NOT NULL CHECK (reason IN ('pending_posted', 'reissued')),
    created_at     {{.Time}} NOT NULL,
    PRIMARY KEY (account_id, source, external_id)
);

--bun:split

CREATE INDEX provider_transaction_aliases_tx_idx ON provider_transaction_aliases (transaction_id);
