-- File imports (issue 15 part 5): an upload of CSV, OFX/QFX or QIF into one
-- account, its settings (the reference app's column labels and formats), its
-- parsed rows, and its progress. The rows are written to the ledger by the
-- import:publish job in batches, each batch in one transaction with the rows'
-- statuses, so a worker that dies loses nothing and doubles nothing.
-- Transactions remember the import that made them, so that a revert removes
-- exactly those.

CREATE TABLE imports (
    id                    {{.UUID}} PRIMARY KEY,
    family_id             {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    account_id            {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type                  varchar(32) NOT NULL CHECK (type IN ('TransactionImport', 'OfxImport', 'QifImport')),
    status                varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'importing', 'complete', 'failed', 'reverting', 'revert_failed')),
    filename              varchar(255),
    raw_file              text NOT NULL,
    col_sep               varchar(1) NOT NULL DEFAULT ',',
    date_col_label        varchar(255),
    amount_col_label      varchar(255),
    name_col_label        varchar(255),
    category_col_label    varchar(255),
    tags_col_label        varchar(255),
    notes_col_label       varchar(255),
    account_col_label     varchar(255),
    external_id_col_label varchar(255),
    date_format           varchar(32) NOT NULL,
    number_format         varchar(16) NOT NULL,
    signage_convention    varchar(32) NOT NULL,
    rows_count            integer NOT NULL DEFAULT 0,
    invalid_rows_count    integer NOT NULL DEFAULT 0,
    processed_rows_count  integer NOT NULL DEFAULT 0,
    imported_rows_count   integer NOT NULL DEFAULT 0,
    duplicate_rows_count  integer NOT NULL DEFAULT 0,
    error                 text,
    published_at          {{.Time}},
    completed_at          {{.Time}},
    created_at            {{.Time}} NOT NULL,
    updated_at            {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX imports_family_order_idx ON imports (family_id, created_at DESC, id DESC);

--bun:split

-- One parsed line (or OFX/QIF record) of an import, as read and as
-- understood: amount in the ledger's sign (positive is money out), NULL
-- date and amount when the row is invalid (problems says why). status is
-- pending until the job decides: imported (transaction_id is the new row),
-- duplicate (transaction_id is the row already there) or invalid.
CREATE TABLE import_rows (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    import_id      {{.UUID}} NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
    position       integer NOT NULL,
    raw_date       text NOT NULL,
    raw_amount     text NOT NULL,
    name           varchar(255) NOT NULL,
    category       varchar(255) NOT NULL,
    tags           text NOT NULL,
    notes          text NOT NULL,
    external_id    varchar(255) NOT NULL,
    date           {{.Date}},
    amount         bigint,
    problems       text NOT NULL,
    status         varchar(16) NOT NULL CHECK (status IN ('pending', 'imported', 'duplicate', 'invalid')),
    transaction_id {{.UUID}}
);

--bun:split

CREATE UNIQUE INDEX import_rows_import_position_key ON import_rows (import_id, position);

--bun:split

ALTER TABLE transactions ADD COLUMN import_id {{.UUID}} REFERENCES imports (id) ON DELETE SET NULL;

--bun:split

CREATE INDEX transactions_import_idx ON transactions (import_id) WHERE import_id IS NOT NULL;

--bun:split

-- Saved column mappings: what a family set for a file layout, offered again
-- for the next file of the same account and type.
CREATE TABLE import_mappings (
    id                    {{.UUID}} PRIMARY KEY,
    family_id             {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name                  varchar(255) NOT NULL,
    col_sep               varchar(1) NOT NULL,
    date_col_label        varchar(255),
    amount_col_label      varchar(255),
    name_col_label        varchar(255),
    category_col_label    varchar(255),
    tags_col_label        varchar(255),
    notes_col_label       varchar(255),
    external_id_col_label varchar(255),
    date_format           varchar(32) NOT NULL,
    number_format         varchar(16) NOT NULL,
    signage_convention    varchar(32) NOT NULL,
    created_at            {{.Time}} NOT NULL,
    updated_at            {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX import_mappings_family_name_key ON import_mappings (family_id, lower(name));
