-- The OAuth 2.1 authorization server (issue 13): the apps people let into
-- their family (clients), and what fosite keeps between requests. No code
-- or token is stored in clear: the primary key of each is fosite's HMAC
-- signature of it, which cannot be turned back into the token. Every row
-- of a grant carries its request_id, so that a code used twice or a
-- refresh token replayed revokes the whole family of tokens at once, and
-- its user and family, so that deleting either takes the tokens with it.
CREATE TABLE oauth_clients (
    id            varchar(64) PRIMARY KEY,
    name          varchar(200) NOT NULL,
    redirect_uris {{.JSON}} NOT NULL,
    scope         varchar(64) NOT NULL,
    -- the server's own apps (the mobile app): no consent screen, no
    -- registration; made at start
    first_party   {{.Bool}} NOT NULL DEFAULT false,
    created_at    {{.Time}} NOT NULL
);

--bun:split

CREATE TABLE oauth_codes (
    signature  varchar(128) PRIMARY KEY,
    request_id varchar(64) NOT NULL,
    client_id  varchar(64) NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id    {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    request    {{.JSON}} NOT NULL,
    -- false once exchanged: a second exchange is refused and revokes the
    -- tokens the first one issued
    active     {{.Bool}} NOT NULL,
    expires_at {{.Time}} NOT NULL,
    created_at {{.Time}} NOT NULL
);

--bun:split

CREATE TABLE oauth_pkce (
    signature  varchar(128) PRIMARY KEY,
    client_id  varchar(64) NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id    {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    request    {{.JSON}} NOT NULL,
    expires_at {{.Time}} NOT NULL,
    created_at {{.Time}} NOT NULL
);

--bun:split

CREATE TABLE oauth_tokens (
    signature    varchar(128) PRIMARY KEY,
    kind         varchar(8) NOT NULL CHECK (kind IN ('access', 'refresh')),
    request_id   varchar(64) NOT NULL,
    client_id    varchar(64) NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    family_id    {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id      {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scope        varchar(16) NOT NULL CHECK (scope IN ('read', 'read_write')),
    request      {{.JSON}} NOT NULL,
    -- a refresh token is kept inactive after its rotation, so that its
    -- reuse is recognised (and revokes the family) rather than unknown
    active       {{.Bool}} NOT NULL,
    expires_at   {{.Time}} NOT NULL,
    last_used_at {{.Time}},
    created_at   {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX oauth_tokens_request_idx ON oauth_tokens (request_id);

--bun:split

CREATE INDEX oauth_tokens_user_idx ON oauth_tokens (family_id, user_id, client_id);

--bun:split

CREATE INDEX oauth_codes_request_idx ON oauth_codes (request_id);
