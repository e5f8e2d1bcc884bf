-- A balance that cannot be computed (the account's transactions add up to
-- more than a bigint holds) is recorded on the account, so that the API and
-- the screens say so, instead of the balance job failing again and again
-- behind a stale figure. NULL: the balance is current; 'overflow': it is the
-- last one that could be computed.
ALTER TABLE accounts ADD COLUMN balance_error varchar(32);
