-- A change the assistant proposes with a write tool (update_transaction,
-- create_category, create_tag) is kept here, with what it would change,
-- until the chat's owner confirms or rejects it: the assistant never
-- writes the ledger on its own (issue 24, fault 6). message_id is the
-- answer that carries it; arguments are the tool's, applied as they are on
-- confirmation; changes is the before/after shown to the person (JSON).
CREATE TABLE chat_proposals (
    id         {{.UUID}} PRIMARY KEY,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    chat_id    {{.UUID}} NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    message_id {{.UUID}} NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    tool       varchar(64) NOT NULL,
    arguments  text NOT NULL,
    summary    text NOT NULL,
    changes    text NOT NULL,
    status     varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed', 'rejected')),
    created_at {{.Time}} NOT NULL,
    decided_at {{.Time}}
);

--bun:split

CREATE INDEX chat_proposals_message_idx ON chat_proposals (message_id);
