-- The assistant answers each user message once: reply_to names the user
-- message an assistant message answers, and its unique index makes a second
-- reply to one message (an asynq retry, a retry request racing a running
-- job) a conflict instead of a duplicate. tool_calls keeps the tools the
-- model called with their arguments (JSON); the token counts are what the
-- provider reported for the whole reply, for the admins' usage figures.
ALTER TABLE messages ADD COLUMN reply_to {{.UUID}} REFERENCES messages (id) ON DELETE CASCADE;

--bun:split

ALTER TABLE messages ADD COLUMN tool_calls {{.JSON}};

--bun:split

ALTER TABLE messages ADD COLUMN prompt_tokens integer NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE messages ADD COLUMN completion_tokens integer NOT NULL DEFAULT 0;

--bun:split

CREATE UNIQUE INDEX messages_reply_to_idx ON messages (reply_to);

--bun:split

-- Whether the assistant may change this user's data (update transactions,
-- create categories and tags): off until the user turns it on.
ALTER TABLE users ADD COLUMN assistant_may_write {{.Bool}} NOT NULL DEFAULT false;
