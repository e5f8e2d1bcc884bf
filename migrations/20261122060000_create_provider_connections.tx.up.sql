-- SimpleFIN Bridge connections (spec/aggregator.md §3). The setup token and
-- the access URL are stored sealed (AES-256-GCM, "enc:v1:..."), never in
-- clear; a connection belongs to a family like every other record.

CREATE TABLE provider_connections (
    id                      {{.UUID}} PRIMARY KEY,
    family_id               {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    provider                varchar(32) NOT NULL DEFAULT 'simplefin' CHECK (provider IN ('simplefin')),
    name                    varchar(255) NOT NULL,
    status                  varchar(32) NOT NULL CHECK (status IN ('claiming', 'claim_failed', 'active', 'requires_reconnect',
        'payment_required', 'rate_limited', 'disconnected')),
    status_message          text,
    prev_status             varchar(32),
    access_url_enc          text,
    setup_token_enc         text,
    claim_seq               integer NOT NULL DEFAULT 1,
    claim_sent_at           {{.Time}},
    claim_retryable         {{.Bool}} NOT NULL DEFAULT false,
    include_pending         {{.Bool}} NOT NULL DEFAULT true,
    lookback_days           integer,
    retry_after             {{.Time}},
    consecutive_rate_limits integer NOT NULL DEFAULT 0,
    server_versions         {{.JSON}},
    provider_errors         {{.JSON}},
    last_synced_at          {{.Time}},
    created_by              {{.UUID}},
    created_at              {{.Time}} NOT NULL,
    updated_at              {{.Time}} NOT NULL,
    disconnected_at         {{.Time}}
);

--bun:split

CREATE INDEX provider_connections_family_idx ON provider_connections (family_id, created_at, id);

--bun:split

-- The scheduler and the sweeper look connections up by state.
CREATE INDEX provider_connections_status_idx ON provider_connections (status, retry_after);
