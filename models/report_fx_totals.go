package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
)

// fxTotalsSQL adds up the rows ?0 (a query of t.currency, t.date and
// t.amount, family ?1's rows that count) by direction in the family's
// currency ?11, each row in another currency converted at its day's rate
// in SQL (report_fx_sql.go, with the rates ?10); slow counts the rows
// SQL leaves to Go (fxSlowRowsSQL).
const fxTotalsSQL = `WITH ` + fxRatesSQL + `
SELECT CAST(COALESCE(SUM(CASE WHEN t.amount < 0 THEN -(` + fxValueSQL + `) END), 0) AS bigint) AS income,
       CAST(COALESCE(SUM(CASE WHEN t.amount >= 0 THEN ` + fxValueSQL + ` END), 0) AS bigint) AS spending,
       COUNT(CASE WHEN t.amount < 0 AND ` + fxFastSQL + ` THEN 1 END) AS income_count,
       COUNT(CASE WHEN t.amount >= 0 AND ` + fxFastSQL + ` THEN 1 END) AS spending_count,
       COUNT(CASE WHEN ` + fxFastSQL + ` THEN NULL ELSE 1 END) AS slow
FROM (?0) t` + fxJoinSQL

// fxSlowRowsSQL lists the rows of ?0 that fxTotalsSQL leaves to Go, by
// currency and day (foreignRowsSQL's groups, without categories; ?1:
// amountsOf).
const fxSlowRowsSQL = `WITH ` + fxRatesSQL + `
SELECT t.currency, t.date, NULL AS category_id, ?1 AS amounts
FROM (?0) t` + fxJoinSQL + `
WHERE t.currency <> ?11 AND (r.lim IS NULL OR r.lim < abs(t.amount))
GROUP BY t.date, t.currency`

// fxTotals adds up rows (see fxTotalsSQL) of family's period p into
// Totals in the family's currency cur: in SQL, and in Go for the few
// rows SQL cannot convert exactly, which Go converts or leaves out (a
// currency without any rate on or before their day), as the reports do.
// p bounds the rates table; rows outside it go to Go.
func (s *Store) fxTotals(ctx context.Context, familyID uuid.UUID, cur string, p Period, rows func(tx *Store) schema.QueryAppender) (*Totals, error) {
	t := &Totals{Currency: cur}
	err := s.withRates(ctx, familyID, cur, p, func(tx *Store, rates schema.QueryWithArgs) error {
		src := rows(tx)
		var slow int
		if err := tx.db.NewRaw(fxTotalsSQL, fxArgs(rates, cur, src)...).
			Scan(ctx, &t.Income, &t.Spending, &t.IncomeCount, &t.SpendingCount, &slow); err != nil {
			return dbErr("totals", err)
		}
		if slow == 0 {
			return nil
		}
		groups, err := scanFlows(tx.db.QueryContext(ctx, fxSlowRowsSQL, fxArgs(rates, cur, src, tx.amountsOf())...))
		if err != nil {
			return err
		}
		flows, _, err := tx.convertFlows(ctx, familyID, groups)
		addFlowsToTotals(t, flows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// firstRateSQL is the first day with any rate between the family's
// currency ?1 and another that family ?0 sees (firstRatesSQL's earliest).
const firstRateSQL = `SELECT MIN(x.first) FROM (` + firstRatesSQL + `) x`

// ratesPeriod is the period the rates table of a total over from..to
// needs, either end open (""): from the first day any rate of the
// family's currency cur exists (a row before it has none) to today when
// open. A row dated after it is left to Go, which converts it all the
// same. ok is false when the family sees no rate of cur at all.
func (s *Store) ratesPeriod(ctx context.Context, familyID uuid.UUID, cur string, from, to civil.Date) (p Period, ok bool, err error) {
	var first *civil.Date
	if err := s.db.NewRaw(firstRateSQL, familyID, cur).Scan(ctx, &first); err != nil {
		return Period{}, false, dbErr("first rate", err)
	}
	if first == nil || *first == "" {
		return Period{}, false, nil
	}
	p = Period{From: max(from, *first), To: to}
	if p.To == "" {
		p.To = max(civil.DateOf(s.now()), p.From)
	}
	return p, p.From <= p.To, nil
}
