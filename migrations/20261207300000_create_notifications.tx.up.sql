-- Email notifications (issue 29, item 4). Each person chooses what they
-- are told about; a row is written only once they save the form, so no
-- one gets mail they did not ask for. Amounts are money units (ten
-- thousandths), as everywhere.
CREATE TABLE notification_preferences (
    family_id            {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id              {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    bill_due             boolean NOT NULL DEFAULT false,
    bill_due_days        integer NOT NULL DEFAULT 3 CHECK (bill_due_days BETWEEN 1 AND 30),
    bill_missed          boolean NOT NULL DEFAULT false,
    large_transaction    boolean NOT NULL DEFAULT false,
    large_amount         bigint NOT NULL DEFAULT 0 CHECK (large_amount >= 0),
    budget_exceeded      boolean NOT NULL DEFAULT false,
    connection_attention boolean NOT NULL DEFAULT false,
    weekly_digest        boolean NOT NULL DEFAULT false,
    updated_at           {{.Time}} NOT NULL,
    PRIMARY KEY (family_id, user_id)
);

--bun:split

-- The outbox: one row per email decided, written by the scan (or the
-- transaction) that decides it. The unique key makes deciding twice a
-- no-op, so a rescan or a retried task writes nothing new; the send task
-- claims a row (status sending, lease_until), sends, then marks it sent.
-- data is the kind's facts as JSON; the text is made when it is sent.
CREATE TABLE notification_outbox (
    id           {{.UUID}} PRIMARY KEY,
    family_id    {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id      {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         varchar(32) NOT NULL,
    subject_key  varchar(255) NOT NULL,
    data         text NOT NULL DEFAULT '{}',
    status       varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'dropped')),
    attempts     integer NOT NULL DEFAULT 0,
    lease_until  {{.Time}},
    last_error   varchar(500),
    sent_at      {{.Time}},
    created_at   {{.Time}} NOT NULL,
    updated_at   {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX notification_outbox_subject_key ON notification_outbox (family_id, user_id, kind, subject_key);

--bun:split

-- The sweep's read: rows not sent yet, oldest first.
CREATE INDEX notification_outbox_unsent_idx ON notification_outbox (status, created_at);
