package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// accountSumsSQL adds up, from the kept sums over the period's parts
// (sumsPeriodSQL, ?4 to ?9), the counted rows of family ?0 in its own
// currency ?3 on the accounts ?1 (active ones), transfer legs aside: the
// part of AccountTotals that needs no conversion. A sum that is not
// income is spending, as a row of amount zero or more is.
const accountSumsSQL = `
SELECT CAST(COALESCE(SUM(CASE WHEN t.income THEN -t.amount END), 0) AS bigint) AS income,
       CAST(COALESCE(SUM(CASE WHEN NOT t.income THEN t.amount END), 0) AS bigint) AS spending,
       CAST(COALESCE(SUM(CASE WHEN t.income THEN t.n END), 0) AS bigint) AS income_count,
       CAST(COALESCE(SUM(CASE WHEN NOT t.income THEN t.n END), 0) AS bigint) AS spending_count
FROM ` + sumsPeriodSQL + `
WHERE NOT t.transfer AND t.currency = ?3 AND t.account_id IN (?1)
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')`

// foreignAccountRowsOfSQL is the rows of family ?0 from ?1 to ?2 on the
// accounts ?3 that income and spending count, in currencies other than
// ?4, for fxTotalsSQL: read as the two ranges of currency codes either
// side of the family's, so that transactions_currency_idx reads them
// alone (see fxFlowsSQL).
const foreignAccountRowsOfSQL = `SELECT t.currency, t.date, t.amount FROM (
    SELECT t.id, t.account_id, t.currency, t.date, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency < ?4 AND t.date >= ?1 AND t.date <= ?2 AND t.deleted_at IS NULL AND NOT t.excluded
    UNION ALL
    SELECT t.id, t.account_id, t.currency, t.date, t.amount FROM transactions t
    WHERE t.family_id = ?0 AND t.currency > ?4 AND t.date >= ?1 AND t.date <= ?2 AND t.deleted_at IS NULL AND NOT t.excluded
) t
WHERE t.account_id IN (?3)
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL

// AccountTotals is PeriodTotals for some of the family's accounts only;
// with no accounts it is PeriodTotals. The family's own currency is read
// from the kept sums (transaction_sums.go), the rows in other currencies
// one by one, each converted at its day's rate (fxTotals).
func (s *Store) AccountTotals(ctx context.Context, familyID uuid.UUID, p Period, accountIDs []uuid.UUID) (*Totals, error) {
	if len(accountIDs) == 0 {
		return s.PeriodTotals(ctx, familyID, p)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	f, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, err
	}
	r, err := s.sumsRangesOf(ctx, familyID, p)
	if err != nil {
		return nil, err
	}
	own := &Totals{}
	if err := s.db.NewRaw(accountSumsSQL, familyID, bun.List(accountIDs), nil, f.Currency, r[0], r[1], r[2], r[3], r[4], r[5]).
		Scan(ctx, &own.Income, &own.Spending, &own.IncomeCount, &own.SpendingCount); err != nil {
		return nil, dbErr("account totals", err)
	}
	t, err := s.fxTotals(ctx, familyID, f.Currency, p, func(*Store) schema.QueryAppender {
		return bun.SafeQuery(foreignAccountRowsOfSQL, familyID, p.From, p.To, bun.List(accountIDs), f.Currency)
	})
	if err != nil {
		return nil, err
	}
	t.Income += own.Income
	t.Spending += own.Spending
	t.IncomeCount += own.IncomeCount
	t.SpendingCount += own.SpendingCount
	return t, nil
}
