-- Single sign-on: the identity providers an administrator manages, the
-- identities that link users to them, and what a session needs for
-- federated logout. Secrets are sealed by the application (enc:v1:…).

CREATE TABLE sso_providers (
    id                  {{.UUID}} PRIMARY KEY,
    name                varchar(40) NOT NULL,
    strategy            varchar(16) NOT NULL CHECK (strategy IN ('openid_connect', 'oauth2', 'saml')),
    label               varchar(60) NOT NULL,
    enabled             {{.Bool}} NOT NULL DEFAULT TRUE,
    source              varchar(8) NOT NULL DEFAULT 'db' CHECK (source IN ('db', 'yaml')),
    issuer              text,
    client_id           text,
    client_secret_enc   text,
    scopes              text,
    prompt              varchar(16),
    authorization_url   text,
    token_url           text,
    userinfo_url        text,
    token_auth_method   varchar(24) CHECK (token_auth_method IN ('client_secret_post', 'client_secret_basic')),
    idp_metadata_url    text,
    idp_entity_id       text,
    idp_sso_url         text,
    idp_slo_url         text,
    idp_certificates    text,
    name_id_format      varchar(16) CHECK (name_id_format IN ('email', 'persistent', 'transient', 'unspecified')),
    subject_source      varchar(16) CHECK (subject_source IN ('name_id', 'email_attribute')),
    email_attribute     text,
    group_attribute     text,
    sign_requests       {{.Bool}} NOT NULL DEFAULT FALSE,
    sp_private_key_enc  text,
    sp_certificate      text,
    allow_idp_initiated {{.Bool}} NOT NULL DEFAULT FALSE,
    default_role        varchar(16) NOT NULL DEFAULT 'member' CHECK (default_role IN ('member', 'admin', 'super_admin')),
    group_mappings      {{.JSON}} NOT NULL DEFAULT '[]',
    rules               {{.JSON}},
    created_by          {{.UUID}},
    updated_by          {{.UUID}},
    created_at          {{.Time}} NOT NULL,
    updated_at          {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX sso_providers_name_key ON sso_providers (name);

--bun:split

CREATE TABLE sso_identities (
    id             {{.UUID}} PRIMARY KEY,
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

CREATE UNIQUE INDEX sso_identities_provider_subject_key ON sso_identities (provider_id, subject);

--bun:split

CREATE UNIQUE INDEX sso_identities_user_provider_key ON sso_identities (user_id, provider_id);

--bun:split

ALTER TABLE sessions ADD COLUMN id_token_enc text;

--bun:split

ALTER TABLE sessions ADD COLUMN saml_name_id text;

--bun:split

ALTER TABLE sessions ADD COLUMN saml_session_index text;
