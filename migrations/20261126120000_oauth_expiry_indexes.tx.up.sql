-- The hourly oauth:cleanup job (issue 13) deletes the codes, PKCE
-- challenges and tokens whose time is over; these indexes let it find
-- them without reading every row of tables that grow with every sign-in
-- and refresh.
CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at);
CREATE INDEX oauth_pkce_expires_idx ON oauth_pkce (expires_at);
CREATE INDEX oauth_tokens_expires_idx ON oauth_tokens (expires_at);
