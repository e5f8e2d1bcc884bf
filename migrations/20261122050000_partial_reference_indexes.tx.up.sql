-- Most transactions have no category or merchant yet (API and bank imports
-- set them later); indexing only the rows that have one keeps every insert
-- from maintaining two more index entries, and is all that ON DELETE SET
-- NULL on categories and merchants needs.
DROP INDEX transactions_category_id_idx;

--bun:split

DROP INDEX transactions_merchant_id_idx;

--bun:split

CREATE INDEX transactions_category_id_idx ON transactions (category_id) WHERE category_id IS NOT NULL;

--bun:split

CREATE INDEX transactions_merchant_id_idx ON transactions (merchant_id) WHERE merchant_id IS NOT NULL;
