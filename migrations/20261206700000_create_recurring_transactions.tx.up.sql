-- Recurring transactions (issue 29 item 1): bills, subscriptions and income
-- that come back on a cadence, entered by hand (manual) or found by the
-- recurring:detect job in the family's own transactions.
--
-- status follows the reference app: 'suggested' is the detector's output a
-- person has not confirmed yet; 'active' a confirmed (or hand-made) series;
-- 'paused' parked by a person; 'inactive' gone stale; 'ended' finished,
-- cancelled or a dismissed suggestion. An ended row is a tombstone: the
-- detector sees it and never creates that series again.
--
-- match_key is what the detector groups by: 'm:<merchant id>' or
-- 'n:<normalised name>'; with cadence it names one detected series.

CREATE TABLE recurring_transactions (
    id                    {{.UUID}} PRIMARY KEY,
    family_id             {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    account_id            {{.UUID}} REFERENCES accounts (id) ON DELETE SET NULL,
    merchant_id           {{.UUID}} REFERENCES merchants (id) ON DELETE SET NULL,
    name                  varchar(255) NOT NULL,
    match_key             varchar(300) NOT NULL,
    amount                bigint NOT NULL,
    previous_amount       bigint,
    expected_amount_min   bigint,
    expected_amount_max   bigint,
    currency              char(3) NOT NULL,
    cadence               varchar(16) NOT NULL CHECK (cadence IN ('weekly', 'biweekly', 'monthly', 'quarterly', 'yearly')),
    expected_day_of_month integer NOT NULL CHECK (expected_day_of_month BETWEEN 1 AND 31),
    last_occurrence_date  {{.Date}},
    next_expected_date    {{.Date}} NOT NULL,
    occurrence_count      integer NOT NULL DEFAULT 0,
    status                varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('suggested', 'active', 'paused', 'inactive', 'ended')),
    manual                {{.Bool}} NOT NULL DEFAULT false,
    autopay               {{.Bool}} NOT NULL DEFAULT false,
    notes                 text,
    created_at            {{.Time}} NOT NULL,
    updated_at            {{.Time}} NOT NULL
);

--bun:split

-- The list order of GET /recurring_transactions.
CREATE INDEX recurring_transactions_family_order_idx ON recurring_transactions (family_id, status, next_expected_date, id);

--bun:split

-- The detector's upsert key; manual rows take part too, so a detected series
-- never doubles one a person made by hand with the same key.
CREATE INDEX recurring_transactions_family_match_idx ON recurring_transactions (family_id, match_key, cadence);
