package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// countedRowsSQL is the rows of family ?0 from ?1 to ?2 on the accounts
// ?3 that income and spending count, in any currency, for fxTotalsSQL.
const countedRowsSQL = `SELECT t.currency, t.date, t.amount FROM transactions t
WHERE t.date >= ?1 AND t.date <= ?2 AND t.account_id IN (?3) AND ` + fxCountedSQL

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
	return s.fxTotals(ctx, familyID, f.Currency, p, func(*Store) schema.QueryAppender {
		return bun.SafeQuery(countedRowsSQL, familyID, p.From, p.To, bun.List(accountIDs))
	})
}
