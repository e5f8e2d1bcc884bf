-- Invitations to join a family (issue 12). Only the SHA-256 of the
-- one-time token is stored, like API keys and sessions, so a copy of the
-- table lets nobody in. An invitation is open until it is accepted or
-- revoked, and usable until expires_at; accepting creates the user.
CREATE TABLE invitations (
    id               {{.UUID}} PRIMARY KEY,
    family_id        {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    inviter_id       {{.UUID}} REFERENCES users (id) ON DELETE SET NULL,
    email            varchar(320) NOT NULL,
    role             varchar(16) NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin')),
    token_hash       char(64) NOT NULL,
    expires_at       {{.Time}} NOT NULL,
    accepted_at      {{.Time}},
    accepted_user_id {{.UUID}} REFERENCES users (id) ON DELETE SET NULL,
    revoked_at       {{.Time}},
    created_at       {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (token_hash);

--bun:split

-- At most one open invitation per address in a family: inviting again
-- revokes the previous one in the same transaction.
CREATE UNIQUE INDEX invitations_open_key ON invitations (family_id, lower(email)) WHERE accepted_at IS NULL AND revoked_at IS NULL;

--bun:split

CREATE INDEX invitations_family_idx ON invitations (family_id, created_at DESC, id DESC);
