-- Split transactions (issue 26 item 1): a part is an ordinary row of the
-- same account, day and currency that names the row it was split from. The
-- parent stays, marked excluded with excluded_reason 'split', so that every
-- sum already written as NOT t.excluded counts the parts and never both.
-- Deleting a parent deletes its parts.
ALTER TABLE transactions ADD COLUMN split_parent_id {{.UUID}} REFERENCES transactions (id) ON DELETE CASCADE;

--bun:split

-- A bank sync that changed a split parent's amount keeps the parts and
-- raises this until a person saves the split again.
ALTER TABLE transactions ADD COLUMN split_needs_review {{.Bool}} NOT NULL DEFAULT false;

--bun:split

-- The parts of a parent, read with every parent shown.
CREATE INDEX transactions_split_parent_idx ON transactions (split_parent_id) WHERE split_parent_id IS NOT NULL;
