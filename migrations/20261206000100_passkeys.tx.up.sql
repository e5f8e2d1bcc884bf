-- Passkeys (WebAuthn) as a second factor at sign-in (issue 28): each row is
-- one authenticator a person registered. credential is the library's own
-- record of it (public key, sign counter, flags) as JSON; nothing in it is
-- secret. credential_id is its id, base64url, unique across the instance
-- as the specification makes it.
CREATE TABLE user_passkeys (
    id            {{.UUID}} PRIMARY KEY,
    user_id       {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id     {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name          varchar(100) NOT NULL,
    credential_id varchar(1400) NOT NULL,
    credential    text NOT NULL,
    created_at    {{.Time}} NOT NULL,
    last_used_at  {{.Time}}
);

--bun:split

CREATE UNIQUE INDEX user_passkeys_credential_key ON user_passkeys (credential_id);

--bun:split

CREATE INDEX user_passkeys_user_idx ON user_passkeys (family_id, user_id);
