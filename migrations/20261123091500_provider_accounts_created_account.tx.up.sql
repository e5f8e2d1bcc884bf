-- A purge (spec §12) deletes only the ledger accounts a connection created
-- itself, never one the user already had and linked. created_account_id
-- records the account made on a remote account's first sight; it stays
-- set when the user re-links the remote account elsewhere, so the account
-- it made is still known. Rows from before this column stay NULL: which
-- of their accounts were made by the connection cannot be told safely,
-- and a purge that keeps one too many is better than one that deletes a
-- user's own account.
ALTER TABLE provider_accounts ADD COLUMN created_account_id {{.UUID}} REFERENCES accounts (id) ON DELETE SET NULL;
