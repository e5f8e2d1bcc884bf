package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// accountTotalsSQL adds up the counted transactions (countedWhereSQL) of
// family ?0 from ?1 to ?2 on the accounts ?3, by direction.
const accountTotalsSQL = `
SELECT CAST(COALESCE(SUM(CASE WHEN t.amount < 0 THEN -t.amount ELSE 0 END), 0) AS bigint) AS income,
       CAST(COALESCE(SUM(CASE WHEN t.amount >= 0 THEN t.amount ELSE 0 END), 0) AS bigint) AS spending,
       COUNT(CASE WHEN t.amount < 0 THEN 1 END) AS income_count,
       COUNT(CASE WHEN t.amount >= 0 THEN 1 END) AS spending_count
FROM transactions t` + countedJoinsSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND t.account_id IN (?3) AND ` + countedWhereSQL

// AccountTotals is PeriodTotals for some of the family's accounts only;
// with no accounts it is PeriodTotals.
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
	t := &Totals{Currency: f.Currency}
	err = s.db.NewRaw(accountTotalsSQL, familyID, p.From, p.To, bun.List(accountIDs)).
		Scan(ctx, &t.Income, &t.Spending, &t.IncomeCount, &t.SpendingCount)
	if err != nil {
		return nil, dbErr("account totals", err)
	}
	flows, _, err := s.foreignFlows(ctx, familyID, p, accountIDs)
	if err != nil {
		return nil, err
	}
	addFlowsToTotals(t, flows)
	return t, nil
}
