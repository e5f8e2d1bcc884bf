-- The ledger a family keeps: families and their users, API keys, accounts,
-- categories, merchants, tags, transactions with their tags and transfers,
-- and assistant chats. Money is a bigint count of ten-thousandths of the
-- currency unit (exact on both dialects). Ids are UUIDv7 made in Go.

CREATE TABLE families (
    id         {{.UUID}} PRIMARY KEY,
    name       varchar(255) NOT NULL,
    currency   char(3) NOT NULL,
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL
);

--bun:split

CREATE TABLE users (
    id            {{.UUID}} PRIMARY KEY,
    family_id     {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    email         varchar(320) NOT NULL,
    password_hash text,
    role          varchar(16) NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'admin', 'super_admin')),
    status        varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    first_name    varchar(255),
    last_name     varchar(255),
    suspended_at  {{.Time}},
    last_login_at {{.Time}},
    created_at    {{.Time}} NOT NULL,
    updated_at    {{.Time}} NOT NULL
);

--bun:split

-- Emails are unique whatever their case; lookups use lower(email) too.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

--bun:split

CREATE INDEX users_family_id_idx ON users (family_id);

--bun:split

-- Only the SHA-256 of a key is stored; display_prefix is what a user sees
-- in lists to tell keys apart.
CREATE TABLE api_keys (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id        {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name           varchar(255) NOT NULL,
    scope          varchar(16) NOT NULL CHECK (scope IN ('read', 'read_write')),
    key_hash       char(64) NOT NULL,
    display_prefix varchar(16) NOT NULL,
    expires_at     {{.Time}},
    revoked_at     {{.Time}},
    last_used_at   {{.Time}},
    created_at     {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);

--bun:split

CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);

--bun:split

-- balance is derived (opening_balance and the account's transactions) and
-- rewritten by the account:balance job; opening_balance is what the user set.
CREATE TABLE accounts (
    id                 {{.UUID}} PRIMARY KEY,
    family_id          {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name               varchar(255) NOT NULL,
    account_type       varchar(32) NOT NULL CHECK (account_type IN ('depository', 'investment', 'crypto', 'property', 'vehicle', 'other_asset', 'credit_card', 'loan', 'other_liability')),
    subtype            varchar(64),
    currency           char(3) NOT NULL,
    status             varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled', 'pending_deletion')),
    opening_balance    bigint NOT NULL DEFAULT 0,
    balance            bigint NOT NULL DEFAULT 0,
    cash_balance       bigint NOT NULL DEFAULT 0,
    institution_name   varchar(255),
    institution_domain varchar(255),
    balance_updated_at {{.Time}},
    created_at         {{.Time}} NOT NULL,
    updated_at         {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX accounts_family_id_idx ON accounts (family_id, created_at, id);

--bun:split

CREATE TABLE categories (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    parent_id      {{.UUID}} REFERENCES categories (id) ON DELETE SET NULL,
    name           varchar(255) NOT NULL,
    color          varchar(7) NOT NULL,
    icon           varchar(64) NOT NULL,
    classification varchar(16) NOT NULL DEFAULT 'expense' CHECK (classification IN ('income', 'expense')),
    created_at     {{.Time}} NOT NULL,
    updated_at     {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX categories_family_name_key ON categories (family_id, lower(name));

--bun:split

CREATE INDEX categories_parent_id_idx ON categories (parent_id);

--bun:split

CREATE TABLE merchants (
    id         {{.UUID}} PRIMARY KEY,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name       varchar(255) NOT NULL,
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX merchants_family_name_key ON merchants (family_id, lower(name));

--bun:split

CREATE TABLE tags (
    id         {{.UUID}} PRIMARY KEY,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name       varchar(255) NOT NULL,
    color      varchar(7) NOT NULL,
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX tags_family_name_key ON tags (family_id, lower(name));

--bun:split

-- Stored sign: positive is money out (expense), negative is money in, as the
-- reference implementation stores it.
CREATE TABLE transactions (
    id          {{.UUID}} PRIMARY KEY,
    family_id   {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    account_id  {{.UUID}} NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    date        {{.Date}} NOT NULL,
    amount      bigint NOT NULL,
    currency    char(3) NOT NULL,
    name        varchar(255) NOT NULL,
    notes       text,
    external_id varchar(255),
    source      varchar(255),
    pending     {{.Bool}} NOT NULL DEFAULT false,
    category_id {{.UUID}} REFERENCES categories (id) ON DELETE SET NULL,
    merchant_id {{.UUID}} REFERENCES merchants (id) ON DELETE SET NULL,
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL
);

--bun:split

-- The idempotency key of POST /transactions: INSERT ... ON CONFLICT targets it.
CREATE UNIQUE INDEX transactions_external_key ON transactions (account_id, source, external_id) WHERE external_id IS NOT NULL;

--bun:split

-- The list order of GET /transactions.
CREATE INDEX transactions_family_order_idx ON transactions (family_id, date DESC, created_at DESC, id DESC);

--bun:split

CREATE INDEX transactions_account_date_idx ON transactions (account_id, date);

--bun:split

CREATE INDEX transactions_category_id_idx ON transactions (category_id);

--bun:split

CREATE INDEX transactions_merchant_id_idx ON transactions (merchant_id);

--bun:split

CREATE TABLE transaction_tags (
    transaction_id {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    tag_id         {{.UUID}} NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    PRIMARY KEY (transaction_id, tag_id)
);

--bun:split

CREATE INDEX transaction_tags_tag_id_idx ON transaction_tags (tag_id);

--bun:split

-- A transfer links the outflow on one account to the inflow on another.
CREATE TABLE transfers (
    id                     {{.UUID}} PRIMARY KEY,
    family_id              {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    inflow_transaction_id  {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    outflow_transaction_id {{.UUID}} NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    status                 varchar(16) NOT NULL DEFAULT 'confirmed' CHECK (status IN ('pending', 'confirmed')),
    notes                  text,
    created_at             {{.Time}} NOT NULL,
    updated_at             {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX transfers_inflow_key ON transfers (inflow_transaction_id);

--bun:split

CREATE UNIQUE INDEX transfers_outflow_key ON transfers (outflow_transaction_id);

--bun:split

CREATE INDEX transfers_family_idx ON transfers (family_id, created_at DESC, id DESC);

--bun:split

-- message_count and last_message_at are kept with each message insert, in
-- the same transaction, so that listing chats needs no aggregate.
CREATE TABLE chats (
    id              {{.UUID}} PRIMARY KEY,
    family_id       {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    user_id         {{.UUID}} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title           varchar(255) NOT NULL,
    error           text,
    message_count   integer NOT NULL DEFAULT 0,
    last_message_at {{.Time}},
    created_at      {{.Time}} NOT NULL,
    updated_at      {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX chats_user_order_idx ON chats (user_id, created_at DESC, id DESC);

--bun:split

CREATE TABLE messages (
    id         {{.UUID}} PRIMARY KEY,
    family_id  {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    chat_id    {{.UUID}} NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    type       varchar(32) NOT NULL CHECK (type IN ('user_message', 'assistant_message')),
    content    text NOT NULL,
    model      varchar(255),
    created_at {{.Time}} NOT NULL,
    updated_at {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX messages_chat_order_idx ON messages (chat_id, created_at, id);
