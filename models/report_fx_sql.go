package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun/schema"
)

// The rows in other currencies are converted in SQL where SQL gets the
// very answer Go would (report_fx.go): each row at the rate of its day,
// a × num / den rounded once, half away from zero, in 64-bit integers.
// Go reads the family's rates (RateSeries: its own before the instance's,
// the inverse derived exactly) and hands SQL a table of one rate per
// currency and day, as a fraction in lowest terms, with lim, the largest
// |a| whose |a| × num fits 64 bits. A row converts in SQL when its day
// is in the table and |a| ≤ lim; within those bounds the integer
// arithmetic below is money.Convert's exactly (TestConvertInSQL checks
// it over random rows and rates, ties and negative amounts included).
// Every other foreign row (a currency or a day without a rate, an
// amount too large) is listed for Go, which converts it or leaves it out
// and names it, as before. Reading tens of thousands of amounts back to
// convert them one by one was most of a year's income statement.

// maxDayRates bounds the table: past it (a period of decades) the rows
// go to Go, as before, rather than into a query of that many rows.
const maxDayRates = 20_000

// rateTableNone is a table of no rows: a family without other
// currencies; %s is the date type.
const rateTableNone = "SELECT CAST(NULL AS %s), CAST(NULL AS %s), 0, 1, -1 WHERE 1 = 0"

// Fragments of the queries that convert in SQL, over a transaction t
// LEFT JOINed to the rates r of its currency and day (fxJoinSQL), with
// ?10 the rates table (withRates) and ?11 the family's currency: every
// such query numbers its arguments around these two.
const (
	fxRatesSQL = `rates(currency, day, num, den, lim) AS (?10)`
	fxJoinSQL  = `
LEFT JOIN rates r ON r.currency = t.currency AND r.day = t.date`
	// fxFastSQL is true for a row counted as it is (the family's
	// currency) or converted in SQL, NULL otherwise (never use NOT).
	fxFastSQL = `(t.currency = ?11 OR r.lim >= abs(t.amount))`
	// fxValueSQL is the row's amount in the family's currency, NULL for a
	// row Go converts: |a| × num / den, plus one when the remainder is at
	// least half of den (half away from zero), with a's sign.
	fxValueSQL = `CASE WHEN t.currency = ?11 THEN t.amount
    WHEN r.lim >= abs(t.amount) THEN CASE WHEN t.amount < 0 THEN -1 ELSE 1 END * (abs(t.amount) * r.num / r.den
        + CASE WHEN abs(t.amount) * r.num % r.den >= r.den - abs(t.amount) * r.num % r.den THEN 1 ELSE 0 END)
    END`
	// fxCountedSQL chooses the rows of family ?0 that income and spending
	// count, in any currency (countedWhereSQL without the currency, and
	// without joins: see foreignWhereSQL).
	fxCountedSQL = `t.family_id = ?0
  AND t.deleted_at IS NULL AND NOT t.excluded
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL
)

// slowRowsSQL lists, by currency, day and category (foreignRowsSQL's
// groups), the amounts of family ?0's counted rows from ?1 to ?2 that
// SQL does not convert, for Go (?3: amountsOf), reading the rows in
// other currencies alone (fxForeignRowsSQL): budgets ask every time.
const slowRowsSQL = slowRowsSelectSQL + slowRowsGroupSQL

// slowSpendingRowsSQL is slowRowsSQL of the categorised spending alone,
// the rows a budget counts.
const slowSpendingRowsSQL = slowRowsSelectSQL + ` AND t.amount > 0 AND t.category_id IS NOT NULL` + slowRowsGroupSQL

const (
	slowRowsSelectSQL = `WITH ` + fxRatesSQL + `, foreign_rows AS (` + fxForeignRowsSQL + `)
SELECT t.currency, t.date, t.category_id, ?3 AS amounts
FROM foreign_rows t` + fxJoinSQL + `
WHERE t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')` + notTransferSQL + `
  AND (r.lim IS NULL OR r.lim < abs(t.amount))`
	slowRowsGroupSQL = `
GROUP BY t.date, t.category_id, t.currency`
)

// statement returns the cells of a period's income and spending in the
// family's currency, by month when byMonth, else all in one cell per
// direction and category with no month: the family's own rows summed in
// SQL, and the rows in other currencies each converted at its day's
// rate (convertedFlows) added to them.
func (s *Store) statement(ctx context.Context, familyID uuid.UUID, p Period, byMonth bool) ([]StatementCell, error) {
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	cells, foreign, err := s.sumsCells(ctx, fam.Currency, familyID, p, byMonth)
	if err != nil {
		return nil, err
	}
	var flows []flowRow
	if foreign {
		if flows, err = s.convertedFlows(ctx, familyID, fam.Currency, p, byMonth); err != nil {
			return nil, err
		}
	}
	return s.addFlows(ctx, familyID, cells, flows, byMonth)
}

// fxArgs is the arguments of a query that converts in SQL: args from ?0
// on, then the rates as ?10 and the family's currency as ?11.
func fxArgs(rates schema.QueryWithArgs, currency string, args ...any) []any {
	out := make([]any, 12)
	copy(out, args)
	out[10], out[11] = rates, currency
	return out
}
