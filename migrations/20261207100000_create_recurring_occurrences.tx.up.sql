-- Occurrences of recurring transactions (issue 29 item 1): each date a
-- bill, subscription or income was due, and what became of it. 'paid' is
-- written by the ingestion pipeline, in the transaction that writes the
-- row that paid it (transaction_id); 'missed' by the recurring:missed job
-- once the date and its grace passed with nothing seen. A due date is
-- recorded once per item, so a rerun of either writes nothing.
--
-- A deleted transaction leaves its occurrence paid: transaction_id becomes
-- NULL (ON DELETE SET NULL) and the payment stays in the history, as a
-- bill paid and then tidied away was still paid.

CREATE TABLE recurring_occurrences (
    id                       {{.UUID}} PRIMARY KEY,
    family_id                {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    recurring_transaction_id {{.UUID}} NOT NULL REFERENCES recurring_transactions (id) ON DELETE CASCADE,
    due_date                 {{.Date}} NOT NULL,
    amount                   bigint NOT NULL,
    currency                 char(3) NOT NULL,
    status                   varchar(16) NOT NULL CHECK (status IN ('paid', 'missed')),
    transaction_id           {{.UUID}} REFERENCES transactions (id) ON DELETE SET NULL,
    paid_amount              bigint,
    paid_date                {{.Date}},
    created_at               {{.Time}} NOT NULL,
    updated_at               {{.Time}} NOT NULL
);

--bun:split

-- One record per item and due date: the pipeline and the job both insert
-- with ON CONFLICT DO NOTHING on it.
CREATE UNIQUE INDEX recurring_occurrences_due_key ON recurring_occurrences (family_id, recurring_transaction_id, due_date);

--bun:split

-- /upcoming's "missed last month" and the webhook scan's bill.missed.
CREATE INDEX recurring_occurrences_family_status_idx ON recurring_occurrences (family_id, status, due_date);

--bun:split

-- The foreign key's lookup when a transaction is deleted.
CREATE INDEX recurring_occurrences_transaction_idx ON recurring_occurrences (transaction_id) WHERE transaction_id IS NOT NULL;
