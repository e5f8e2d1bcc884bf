package models

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"coffer/models/civil"
)

// transaction_sums holds the daily and monthly sums of the counted
// transactions (not deleted, not excluded) as deltas appended by the
// triggers of migration 20261208300000_transaction_sums, and apart (grains
// x and y, 20261210200000_excluded_sums) those of the excluded ones, split
// parents aside: the reports and
// the balance series read them instead of the rows. A reader always sums
// every row of a key, so compaction (merging a key's deltas into one row)
// never changes what it reads. transaction_sums_fresh is the same sums
// straight from the rows: the definition that the check and the repair
// compare with.

// sumsKeyCols are the columns that name a sum; the rest add up.
const sumsKeyCols = `grain, day, account_id, currency, category_id, transfer, income`

// sumsDriftSQL lists the keys of family ?0 where the kept sums and a fresh
// sum over the rows differ, with both figures (a key missing on one side
// counts as zero there).
const sumsDriftSQL = `
SELECT ` + sumsKeyCols + `, CAST(SUM(kept) AS bigint) AS kept, CAST(SUM(fresh) AS bigint) AS fresh,
       CAST(SUM(kept_n) AS bigint) AS kept_n, CAST(SUM(fresh_n) AS bigint) AS fresh_n
FROM (
    SELECT ` + sumsKeyCols + `, amount AS kept, 0 AS fresh, n AS kept_n, 0 AS fresh_n
    FROM transaction_sums WHERE family_id = ?0
    UNION ALL
    SELECT ` + sumsKeyCols + `, 0, amount, 0, n
    FROM transaction_sums_fresh WHERE family_id = ?0
) both_sides
GROUP BY ` + sumsKeyCols + `
HAVING SUM(kept) <> SUM(fresh) OR SUM(kept_n) <> SUM(fresh_n)
ORDER BY grain, day, account_id, currency, category_id, transfer, income`

// SumsDrift is one key whose kept sum differs from the rows' sum.
type SumsDrift struct {
	Grain      string     `bun:"grain"`
	Day        civil.Date `bun:"day"`
	AccountID  uuid.UUID  `bun:"account_id"`
	Currency   string     `bun:"currency"`
	CategoryID *uuid.UUID `bun:"category_id"`
	Transfer   bool       `bun:"transfer"`
	Income     bool       `bun:"income"`
	Kept       int64      `bun:"kept"`
	Fresh      int64      `bun:"fresh"`
	KeptN      int64      `bun:"kept_n"`
	FreshN     int64      `bun:"fresh_n"`
}

// String says which key drifted and by how much.
func (d SumsDrift) String() string {
	return fmt.Sprintf("%s %s account %s %s category %v transfer %v income %v: kept %d (%d rows), rows %d (%d rows)",
		d.Grain, d.Day, d.AccountID, d.Currency, d.CategoryID, d.Transfer, d.Income, d.Kept, d.KeptN, d.Fresh, d.FreshN)
}

// CheckTransactionSums compares the family's kept sums with a fresh sum
// over its rows and returns every key that differs (none: they agree).
func (s *Store) CheckTransactionSums(ctx context.Context, familyID uuid.UUID) ([]SumsDrift, error) {
	var drift []SumsDrift
	if err := s.db.NewRaw(sumsDriftSQL, familyID).Scan(ctx, &drift); err != nil {
		return nil, dbErr("check transaction sums", err)
	}
	return drift, nil
}

// rebuildSumsSQL replaces family ?0's kept sums by the rows' sums. On
// PostgreSQL it is one statement, so one snapshot: a write that commits
// before it is both deleted (its deltas) and read (its rows), one that
// commits after is neither, and its deltas stay. SQLite runs the two
// parts in one database transaction (one writer at a time).
const (
	rebuildSumsDeleteSQL = `DELETE FROM transaction_sums WHERE family_id = ?0`
	rebuildSumsInsertSQL = `INSERT INTO transaction_sums (family_id, ` + sumsKeyCols + `, amount, n, merged)
SELECT family_id, ` + sumsKeyCols + `, amount, n, true FROM transaction_sums_fresh WHERE family_id = ?0`
	rebuildSumsPostgresSQL = `WITH gone AS (` + rebuildSumsDeleteSQL + ` RETURNING 1) ` + rebuildSumsInsertSQL
)

// RebuildTransactionSums replaces the family's kept sums by a fresh sum
// over its rows: the repair after a drift (see CheckTransactionSums).
func (s *Store) RebuildTransactionSums(ctx context.Context, familyID uuid.UUID) error {
	if s.Postgres() {
		_, err := s.db.NewRaw(rebuildSumsPostgresSQL, familyID).Exec(ctx)
		return dbErr("rebuild transaction sums", err)
	}
	return s.RunInTx(ctx, func(tx *Store) error {
		if _, err := tx.db.NewRaw(rebuildSumsDeleteSQL, familyID).Exec(ctx); err != nil {
			return dbErr("rebuild transaction sums", err)
		}
		_, err := tx.db.NewRaw(rebuildSumsInsertSQL, familyID).Exec(ctx)
		return dbErr("rebuild transaction sums", err)
	})
}

// sumsCompactAt is how many unmerged deltas a family gathers before a
// reader compacts them (maybeCompactSums), and sumsCompactBatch how many
// one compaction takes at most: a reader pays for a bounded merge, never
// for a family's whole backlog after a big import (the next readers take
// the rest, and read the same meanwhile).
const (
	sumsCompactAt    = 512
	sumsCompactBatch = 4096
)

// compactSumsPostgresSQL merges, in one statement, the keys of family ?0
// of the first ?1 deltas not merged yet: each key's rows are deleted and
// their sum inserted as one merged row (none when it is zero). A delta
// that a write commits meanwhile is not in this statement's snapshot, so
// it is neither deleted nor summed: it stays, and readers still add it.
const compactSumsPostgresSQL = `
WITH keys AS (
    SELECT DISTINCT ` + sumsKeyCols + ` FROM (
        SELECT ` + sumsKeyCols + ` FROM transaction_sums WHERE family_id = ?0 AND NOT merged LIMIT ?1) u
), gone AS (
    DELETE FROM transaction_sums s USING keys k
    WHERE s.family_id = ?0 AND s.grain = k.grain AND s.day = k.day AND s.account_id = k.account_id
      AND s.currency = k.currency AND s.category_id IS NOT DISTINCT FROM k.category_id
      AND s.transfer = k.transfer AND s.income = k.income
    RETURNING s.*
), merged AS (
    INSERT INTO transaction_sums (family_id, ` + sumsKeyCols + `, amount, n, merged)
    SELECT family_id, ` + sumsKeyCols + `, SUM(amount), SUM(n), true FROM gone
    GROUP BY family_id, ` + sumsKeyCols + `
    HAVING SUM(amount) <> 0 OR SUM(n) <> 0
)
SELECT COUNT(*) FROM gone`

// SQLite has no DELETE in a WITH: in one database transaction (SQLite
// has one writer at a time), the merged rows of the keys of the first ?2
// unmerged deltas (by rowid) are inserted, then the rows they replace
// (rowid up to ?1, the last before) are deleted.
const (
	compactSumsKeysSQLite = `(SELECT DISTINCT ` + sumsKeyCols + ` FROM transaction_sums
    WHERE family_id = ?0 AND NOT merged AND rowid <= ?2) k
JOIN transaction_sums s ON s.family_id = ?0 AND s.grain = k.grain AND s.day = k.day AND s.account_id = k.account_id
    AND s.currency = k.currency AND s.category_id IS k.category_id AND s.transfer = k.transfer AND s.income = k.income
    AND s.rowid <= ?1`
	compactSumsInsertSQLite = `
INSERT INTO transaction_sums (family_id, ` + sumsKeyCols + `, amount, n, merged)
SELECT s.family_id, s.grain, s.day, s.account_id, s.currency, s.category_id, s.transfer, s.income, SUM(s.amount), SUM(s.n), true
FROM ` + compactSumsKeysSQLite + `
GROUP BY s.family_id, s.grain, s.day, s.account_id, s.currency, s.category_id, s.transfer, s.income
HAVING SUM(s.amount) <> 0 OR SUM(s.n) <> 0`
	compactSumsDeleteSQLite = `
DELETE FROM transaction_sums WHERE rowid IN (SELECT s.rowid FROM ` + compactSumsKeysSQLite + `)`
)

// CompactTransactionSums merges all of the family's deltas into one row
// per key, a batch at a time. Readers sum whatever rows there are, so
// they read the same before, during and after; it only makes them read
// fewer rows.
func (s *Store) CompactTransactionSums(ctx context.Context, familyID uuid.UUID) error {
	for {
		n, err := s.compactSums(ctx, familyID, sumsCompactBatch)
		if err != nil || n == 0 {
			return err
		}
	}
}

// compactSums merges the keys of at most batch of the family's unmerged
// deltas and returns how many rows it took (0: nothing was left).
func (s *Store) compactSums(ctx context.Context, familyID uuid.UUID, batch int) (int64, error) {
	if s.Postgres() {
		var n int64
		err := s.db.NewRaw(compactSumsPostgresSQL, familyID, batch).Scan(ctx, &n)
		return n, dbErr("compact transaction sums", err)
	}
	var n int64
	err := s.RunInTx(ctx, func(tx *Store) error {
		var last, upTo int64
		if err := tx.db.NewRaw(`SELECT COALESCE(MAX(rowid), 0) FROM transaction_sums`).Scan(ctx, &last); err != nil {
			return dbErr("compact transaction sums", err)
		}
		// The rowid of the batch-th unmerged delta, or of the last.
		if err := tx.db.NewRaw(`SELECT COALESCE(MAX(rowid), 0) FROM (SELECT rowid FROM transaction_sums
			WHERE family_id = ? AND NOT merged ORDER BY rowid LIMIT ?) b`, familyID, batch).Scan(ctx, &upTo); err != nil {
			return dbErr("compact transaction sums", err)
		}
		if upTo == 0 {
			return nil
		}
		if _, err := tx.db.NewRaw(compactSumsInsertSQLite, familyID, last, upTo).Exec(ctx); err != nil {
			return dbErr("compact transaction sums", err)
		}
		res, err := tx.db.NewRaw(compactSumsDeleteSQLite, familyID, last, upTo).Exec(ctx)
		if err != nil {
			return dbErr("compact transaction sums", err)
		}
		n, err = res.RowsAffected()
		return dbErr("compact transaction sums", err)
	})
	return n, err
}

// FamiliesWithUnmergedSums lists the families, of every family, that
// have gathered more than sumsCompactAt unmerged deltas: for the periodic
// compaction, which keeps the sums of a family that writes much and reads
// little (a bank sync's family nobody looks at for a month) from growing
// a row per write until a reader comes. Ids only.
func (s *Store) FamiliesWithUnmergedSums(ctx context.Context) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.NewRaw(`SELECT family_id FROM transaction_sums WHERE NOT merged GROUP BY family_id HAVING COUNT(*) > ?`,
		sumsCompactAt).Scan(ctx, &ids)
	return ids, dbErr("families with unmerged sums", err)
}

// maybeCompactSums compacts a batch of the family's sums when it has
// gathered sumsCompactAt unmerged deltas, so that the readers, which call
// it, keep reading about a row per key without a job of their own. It
// looks at most at sumsCompactAt+1 entries of a partial index.
func (s *Store) maybeCompactSums(ctx context.Context, familyID uuid.UUID) error {
	var fresh int
	err := s.db.NewRaw(`SELECT COUNT(*) FROM (SELECT 1 FROM transaction_sums WHERE family_id = ? AND NOT merged LIMIT ?) f`,
		familyID, sumsCompactAt+1).Scan(ctx, &fresh)
	if err != nil {
		return dbErr("transaction sums", err)
	}
	if fresh <= sumsCompactAt {
		return nil
	}
	_, err = s.compactSums(ctx, familyID, sumsCompactBatch)
	return err
}
