-- Issue 30: a keyed create among 1,000 families. Every query of an account's
-- rows also names its family (each query is scoped by family), and when
-- PostgreSQL costs an index it takes the two conditions as independent
-- (extended statistics do not reach an index's cost in PostgreSQL 15):
-- with 6,000 accounts and 1,000 families in one database it expected a
-- third of a row from transactions_account_live_idx (account, family). That
-- index then tied with transactions_arrival_idx (account, fingerprint) for
-- the arrival check, and won: the check read the account's whole history
-- instead of its days (BenchmarkScale/1000x2k/Create: 467 shared blocks for
-- the arrival matcher's statement against 35 with one family in the
-- database; see TestArrivalCheckReadsItsDays). The index served the
-- register's count of an account's rows, which now stops at the screen's
-- 250 (or the page's end) and reads them index-only from
-- transactions_account_balance_idx; and it was one more index for every
-- insert to maintain. SQLite keeps it: its file holds one family.
{{if .Postgres}}
DROP INDEX transactions_account_live_idx;
{{else}}
SELECT 1;
{{end}}
