-- Monthly budgets (issue 12): one budget per family and calendar month,
-- and inside it a planned amount per expense category. Money is a bigint
-- count of ten-thousandths, as everywhere. budgeted_spending and
-- expected_income stay NULL until the family sets the month up (what the
-- reference API calls "initialized"). A category row with rollover_enabled
-- carries what is left of it (or what was overspent) into the next month;
-- that carry is derived from the ledger when read, never stored, so an
-- edited transaction can never leave a stale carry behind.
CREATE TABLE budgets (
    id                {{.UUID}} PRIMARY KEY,
    family_id         {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    start_date        {{.Date}} NOT NULL,
    end_date          {{.Date}} NOT NULL,
    currency          char(3) NOT NULL,
    budgeted_spending bigint CHECK (budgeted_spending >= 0),
    expected_income   bigint CHECK (expected_income >= 0),
    created_at        {{.Time}} NOT NULL,
    updated_at        {{.Time}} NOT NULL,
    CHECK (end_date >= start_date)
);

--bun:split

-- One budget per month: creating the month twice (two tabs, two requests)
-- meets this index and joins the existing row.
CREATE UNIQUE INDEX budgets_family_month_key ON budgets (family_id, start_date);

--bun:split

CREATE TABLE budget_categories (
    id                {{.UUID}} PRIMARY KEY,
    family_id         {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    budget_id         {{.UUID}} NOT NULL REFERENCES budgets (id) ON DELETE CASCADE,
    category_id       {{.UUID}} NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    budgeted_spending bigint NOT NULL DEFAULT 0 CHECK (budgeted_spending >= 0),
    rollover_enabled  {{.Bool}} NOT NULL DEFAULT false,
    currency          char(3) NOT NULL,
    created_at        {{.Time}} NOT NULL,
    updated_at        {{.Time}} NOT NULL
);

--bun:split

CREATE UNIQUE INDEX budget_categories_budget_category_key ON budget_categories (budget_id, category_id);

--bun:split

-- Deleting or merging a category finds its budget rows through this index.
CREATE INDEX budget_categories_category_idx ON budget_categories (category_id);
