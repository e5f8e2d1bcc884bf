-- The person turned the assistant on in the app (the reference's
-- users.ai_enabled), which unlocks the app's chat tab.
ALTER TABLE users ADD COLUMN ai_enabled boolean NOT NULL DEFAULT false;
