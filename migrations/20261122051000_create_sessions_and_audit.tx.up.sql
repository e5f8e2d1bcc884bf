-- Browser sign-in: server-side sessions (only the SHA-256 of the cookie
-- token is stored), the audit log of sign-in and administrative events,
-- and the index of archive files the retention job writes.

ALTER TABLE users ADD COLUMN suspended_by {{.UUID}};

--bun:split

CREATE TABLE sessions (
    id           {{.UUID}} PRIMARY KEY,
    token_hash   char(64) NOT NULL,
    user_id      {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    method       varchar(16) NOT NULL CHECK (method IN ('password', 'override', 'sso')),
    provider_id  {{.UUID}},
    ip           varchar(64),
    user_agent   varchar(512),
    created_at   {{.Time}} NOT NULL,
    last_seen_at {{.Time}} NOT NULL,
    expires_at   {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash);

--bun:split

CREATE INDEX sessions_user_id_idx ON sessions (user_id);

--bun:split

-- user_id has no foreign key on purpose: the record outlives the user.
CREATE TABLE sso_audit_logs (
    id         {{.UUID}} PRIMARY KEY,
    event_type varchar(32) NOT NULL CHECK (event_type IN ('login', 'login_failed', 'logout', 'logout_idp', 'link', 'unlink',
        'jit_account_created', 'provider_created', 'provider_updated', 'provider_deleted', 'role_changed',
        'user_suspended', 'user_reactivated', 'user_deleted')),
    user_id    {{.UUID}},
    provider   varchar(255),
    ip         varchar(64),
    user_agent varchar(512),
    metadata   {{.JSON}} NOT NULL DEFAULT '{}',
    created_at {{.Time}} NOT NULL
);

--bun:split

-- The audit view pages newest first, optionally by type, over a recency window.
CREATE INDEX sso_audit_logs_created_idx ON sso_audit_logs (created_at DESC, id DESC);

--bun:split

CREATE INDEX sso_audit_logs_type_created_idx ON sso_audit_logs (event_type, created_at DESC, id DESC);

--bun:split

CREATE INDEX sso_audit_logs_user_created_idx ON sso_audit_logs (user_id, created_at);

--bun:split

CREATE TABLE audit_archives (
    id               {{.UUID}} PRIMARY KEY,
    file_name        varchar(255) NOT NULL,
    record_count     integer NOT NULL,
    first_created_at {{.Time}} NOT NULL,
    last_created_at  {{.Time}} NOT NULL,
    sha256           char(64) NOT NULL,
    written_at       {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX audit_archives_file_name_key ON audit_archives (file_name);
