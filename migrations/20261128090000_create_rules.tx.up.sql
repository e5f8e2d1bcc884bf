-- Rules that file transactions (issue 15): a family's ordered rules, their
-- conditions (a compound condition holds sub-conditions through parent_id)
-- and actions, the runs that apply a rule to existing transactions, and on
-- each transaction the rule that last changed it. Condition and action
-- values are text, as the API sends them; ids they name are checked on save
-- and again when the rules are loaded, never by a foreign key, so deleting a
-- category leaves the rule in place, inert.

CREATE TABLE rules (
    id              {{.UUID}} PRIMARY KEY,
    family_id       {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    name            varchar(255),
    resource_type   varchar(32) NOT NULL DEFAULT 'transaction' CHECK (resource_type IN ('transaction')),
    active          {{.Bool}} NOT NULL DEFAULT true,
    effective_date  {{.Date}},
    position        integer NOT NULL DEFAULT 0,
    stop_processing {{.Bool}} NOT NULL DEFAULT false,
    created_at      {{.Time}} NOT NULL,
    updated_at      {{.Time}} NOT NULL
);

--bun:split

-- Rules run in this order; ties by creation.
CREATE INDEX rules_family_order_idx ON rules (family_id, position, created_at, id);

--bun:split

CREATE TABLE rule_conditions (
    id             {{.UUID}} PRIMARY KEY,
    family_id      {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    rule_id        {{.UUID}} NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
    parent_id      {{.UUID}} REFERENCES rule_conditions (id) ON DELETE CASCADE,
    condition_type varchar(64) NOT NULL,
    operator       varchar(32) NOT NULL,
    value          text,
    position       integer NOT NULL DEFAULT 0,
    created_at     {{.Time}} NOT NULL,
    updated_at     {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX rule_conditions_rule_idx ON rule_conditions (rule_id, position);

--bun:split

CREATE TABLE rule_actions (
    id          {{.UUID}} PRIMARY KEY,
    family_id   {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    rule_id     {{.UUID}} NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
    action_type varchar(64) NOT NULL,
    value       text,
    position    integer NOT NULL DEFAULT 0,
    created_at  {{.Time}} NOT NULL,
    updated_at  {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX rule_actions_rule_idx ON rule_actions (rule_id, position);

--bun:split

-- One application of a rule to the family's existing transactions. The job
-- walks the transactions in id order; progress_cursor is the last id whose batch has
-- committed, written in that batch's transaction, so a run picked up again
-- after a worker died starts right after it: nothing done twice, nothing
-- skipped. rule_id survives the rule's deletion as NULL, with its name kept.
CREATE TABLE rule_runs (
    id                     {{.UUID}} PRIMARY KEY,
    family_id              {{.UUID}} NOT NULL REFERENCES families (id) ON DELETE CASCADE,
    rule_id                {{.UUID}} REFERENCES rules (id) ON DELETE SET NULL,
    rule_name              varchar(255),
    execution_type         varchar(16) NOT NULL DEFAULT 'manual' CHECK (execution_type IN ('manual', 'scheduled')),
    status                 varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'success', 'failed')),
    transactions_queued    integer NOT NULL DEFAULT 0,
    transactions_processed integer NOT NULL DEFAULT 0,
    transactions_modified  integer NOT NULL DEFAULT 0,
    pending_jobs_count     integer NOT NULL DEFAULT 0,
    progress_cursor        {{.UUID}},
    error_message          text,
    executed_at            {{.Time}} NOT NULL,
    created_at             {{.Time}} NOT NULL,
    updated_at             {{.Time}} NOT NULL
);

--bun:split

CREATE INDEX rule_runs_family_order_idx ON rule_runs (family_id, executed_at DESC, id DESC);

--bun:split

-- The rule that last changed the transaction; NULL once that rule is gone.
ALTER TABLE transactions ADD COLUMN rule_id {{.UUID}} REFERENCES rules (id) ON DELETE SET NULL;

--bun:split

CREATE INDEX transactions_rule_id_idx ON transactions (rule_id) WHERE rule_id IS NOT NULL;
