-- Calendar feeds (issue 29 item 2): each user's secret address of an
-- RFC 5545 feed of the family's upcoming bills and income, for a phone's
-- calendar, which cannot sign in. Only the SHA-256 of the token is kept,
-- as for API keys; a new address replaces the row (the old one stops
-- working), turning it off deletes it. One per user.

CREATE TABLE calendar_feeds (
    user_id    {{.UUID}} PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    token_hash varchar(64) NOT NULL,
    created_at {{.Time}} NOT NULL
);

--bun:split

-- The door: GET /calendar/<token>.ics finds the feed by its hash.
CREATE UNIQUE INDEX calendar_feeds_token_hash_key ON calendar_feeds (token_hash);
