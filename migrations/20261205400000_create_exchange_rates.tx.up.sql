-- Exchange rates (issue 27). A fetched rate is shared by the instance
-- (family_id NULL); a rate a family set by hand is that family's alone and
-- wins over a fetched one of its day. One row per (family or instance,
-- pair, day). The rate is its exact decimal text: SQLite's numeric is a
-- float, and a rate must convert the same on both databases.
CREATE TABLE exchange_rates (
    id            {{.UUID}} PRIMARY KEY,
    family_id     {{.UUID}} REFERENCES families (id) ON DELETE CASCADE,
    from_currency text NOT NULL,
    to_currency   text NOT NULL,
    date          {{.Date}} NOT NULL,
    rate          text NOT NULL,
    source        text NOT NULL,
    created_at    {{.Time}} NOT NULL,
    updated_at    {{.Time}} NOT NULL,
    CHECK (from_currency <> to_currency),
    CHECK ((source = 'fetched' AND family_id IS NULL) OR (source = 'manual' AND family_id IS NOT NULL))
);

--bun:split

-- NULLs are distinct in a unique index, so the instance's rows and the
-- families' rows each get their own. Each also serves the lookup of the
-- latest rate on or before a day.
CREATE UNIQUE INDEX exchange_rates_fetched_key ON exchange_rates (from_currency, to_currency, date) WHERE family_id IS NULL;

--bun:split

CREATE UNIQUE INDEX exchange_rates_family_key ON exchange_rates (family_id, from_currency, to_currency, date) WHERE family_id IS NOT NULL;

--bun:split

-- What the rates service last said about each pair fetched: the range of
-- days it has answered for (so that a backfill asks only for the days not
-- asked yet, one request per range), and the outcome of the last attempt,
-- for the rates screen.
CREATE TABLE exchange_rate_fetches (
    from_currency text NOT NULL,
    to_currency   text NOT NULL,
    covered_from  {{.Date}},
    covered_to    {{.Date}},
    attempted_at  {{.Time}} NOT NULL,
    succeeded_at  {{.Time}},
    error         text,
    PRIMARY KEY (from_currency, to_currency)
);
