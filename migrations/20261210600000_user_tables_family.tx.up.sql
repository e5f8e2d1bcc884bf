-- Issue 30, "past one database": sessions and sso_identities belonged to a
-- user of one family but carried user_id only, the two tenant tables a
-- hosted coffer could not distribute by family. Each now carries its
-- user's family_id, filled from users here and by the insert that writes
-- a row (models: CreateSession, CreateIdentity, from the users row itself),
-- and every query of a user's sessions or identities names the family.
-- The lookups that find a family from what is presented (a cookie's token
-- hash, a provider's subject) stay doors, as users' email is.
{{if .Postgres}}
ALTER TABLE sessions ADD COLUMN family_id uuid REFERENCES families (id) ON DELETE CASCADE;

--bun:split

UPDATE sessions SET family_id = (SELECT u.family_id FROM users u WHERE u.id = sessions.user_id);

--bun:split

ALTER TABLE sessions ALTER COLUMN family_id SET NOT NULL;

--bun:split

ALTER TABLE sso_identities ADD COLUMN family_id uuid REFERENCES families (id) ON DELETE CASCADE;

--bun:split

UPDATE sso_identities SET family_id = (SELECT u.family_id FROM users u WHERE u.id = sso_identities.user_id);

--bun:split

ALTER TABLE sso_identities ALTER COLUMN family_id SET NOT NULL;
{{else}}
CREATE TABLE sessions_next (
    id                 {{.UUID}} PRIMARY KEY,
    token_hash         char(64) NOT NULL,
    family_id          {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id            {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    method             varchar(16) NOT NULL CHECK (method IN ('password', 'override', 'sso')),
    provider_id        {{.UUID}},
    ip                 varchar(64),
    user_agent         varchar(512),
    created_at         {{.Time}} NOT NULL,
    last_seen_at       {{.Time}} NOT NULL,
    expires_at         {{.Time}} NOT NULL,
    id_token_enc       text,
    saml_name_id       text,
    saml_session_index text
);

--bun:split

INSERT INTO sessions_next (id, token_hash, family_id, user_id, method, provider_id, ip, user_agent, created_at, last_seen_at,
    expires_at, id_token_enc, saml_name_id, saml_session_index)
SELECT s.id, s.token_hash, u.family_id, s.user_id, s.method, s.provider_id, s.ip, s.user_agent, s.created_at, s.last_seen_at,
    s.expires_at, s.id_token_enc, s.saml_name_id, s.saml_session_index
FROM sessions s JOIN users u ON u.id = s.user_id;

--bun:split

DROP TABLE sessions;

--bun:split

ALTER TABLE sessions_next RENAME TO sessions;

--bun:split

CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (token_hash);

--bun:split

CREATE INDEX sessions_user_id_idx ON sessions (user_id);

--bun:split

CREATE TABLE sso_identities_next (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id        {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider_id    {{.UUID}} NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
    subject        text NOT NULL,
    issuer         text,
    email          text,
    email_verified {{.Bool}} NOT NULL DEFAULT FALSE,
    first_name     text,
    last_name      text,
    claims         {{.JSON}} NOT NULL DEFAULT '{}',
    linked_at      {{.Time}} NOT NULL,
    last_used_at   {{.Time}}
);

--bun:split

INSERT INTO sso_identities_next (id, family_id, user_id, provider_id, subject, issuer, email, email_verified, first_name,
    last_name, claims, linked_at, last_used_at)
SELECT i.id, u.family_id, i.user_id, i.provider_id, i.subject, i.issuer, i.email, i.email_verified, i.first_name,
    i.last_name, i.claims, i.linked_at, i.last_used_at
FROM sso_identities i JOIN users u ON u.id = i.user_id;

--bun:split

DROP TABLE sso_identities;

--bun:split

ALTER TABLE sso_identities_next RENAME TO sso_identities;

--bun:split

CREATE UNIQUE INDEX sso_identities_provider_subject_key ON sso_identities (provider_id, subject);

--bun:split

CREATE UNIQUE INDEX sso_identities_user_provider_key ON sso_identities (user_id, provider_id);
{{end}}
