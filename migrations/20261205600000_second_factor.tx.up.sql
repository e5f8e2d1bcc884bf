-- A second factor at sign-in (issue 28): a person's TOTP secret, sealed
-- (models/secret) and written only once a first code confirmed it, with
-- the last time step a code was accepted at, so that a code cannot be
-- used twice within its window.
CREATE TABLE user_totps (
    user_id    {{.UUID}} PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    secret_enc text NOT NULL,
    last_step  bigint NOT NULL DEFAULT 0,
    created_at {{.Time}} NOT NULL
);

--bun:split

-- The ten one-time recovery codes given at enrolment, as keyed hashes;
-- used_at is set by the sign-in that spent one.
CREATE TABLE user_recovery_codes (
    id         {{.UUID}} PRIMARY KEY,
    user_id    {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    code_hash  char(64) NOT NULL,
    used_at    {{.Time}},
    created_at {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX user_recovery_codes_user_hash_key ON user_recovery_codes (user_id, code_hash);

--bun:split

-- An admin may require every local-password member of the family to have
-- a second factor; such a member enrols right after the password step.
ALTER TABLE families ADD COLUMN require_second_factor boolean NOT NULL DEFAULT false;

--bun:split

-- The audit log names the second factor's events.
{{if .Postgres}}
ALTER TABLE sso_audit_logs DROP CONSTRAINT sso_audit_logs_event_type_check;

--bun:split

ALTER TABLE sso_audit_logs ADD CONSTRAINT sso_audit_logs_event_type_check CHECK (event_type IN ('login', 'login_failed',
    'logout', 'logout_idp', 'link', 'unlink', 'jit_account_created', 'provider_created', 'provider_updated',
    'provider_deleted', 'role_changed', 'user_suspended', 'user_reactivated', 'user_deleted',
    'second_factor_enabled', 'second_factor_removed', 'recovery_code_used', 'second_factor_failed'));
{{else}}
CREATE TABLE sso_audit_logs_next (
    id         {{.UUID}} PRIMARY KEY,
    event_type varchar(32) NOT NULL CHECK (event_type IN ('login', 'login_failed', 'logout', 'logout_idp', 'link', 'unlink',
        'jit_account_created', 'provider_created', 'provider_updated', 'provider_deleted', 'role_changed',
        'user_suspended', 'user_reactivated', 'user_deleted',
        'second_factor_enabled', 'second_factor_removed', 'recovery_code_used', 'second_factor_failed')),
    user_id    {{.UUID}},
    provider   varchar(255),
    ip         varchar(64),
    user_agent varchar(512),
    metadata   {{.JSON}} NOT NULL DEFAULT '{}',
    created_at {{.Time}} NOT NULL
);

--bun:split

INSERT INTO sso_audit_logs_next SELECT id, event_type, user_id, provider, ip, user_agent, metadata, created_at FROM sso_audit_logs;

--bun:split

DROP TABLE sso_audit_logs;

--bun:split

ALTER TABLE sso_audit_logs_next RENAME TO sso_audit_logs;

--bun:split

CREATE INDEX sso_audit_logs_created_idx ON sso_audit_logs (created_at DESC, id DESC);

--bun:split

CREATE INDEX sso_audit_logs_type_created_idx ON sso_audit_logs (event_type, created_at DESC, id DESC);

--bun:split

CREATE INDEX sso_audit_logs_user_created_idx ON sso_audit_logs (user_id, created_at);
{{end}}
