-- Counts every change to a family's rules. A web process keeps the family's
-- compiled rules while the family it read with the request's API key or
-- token (whose cache every instance drops when rules change) still names
-- the same count, so a create does not read the rules again.
ALTER TABLE families ADD COLUMN rules_version bigint NOT NULL DEFAULT 0;
