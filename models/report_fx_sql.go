package models

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"coffer/models/civil"
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

// noRates is a rates table of no rows.
func (s *Store) noRates() schema.QueryWithArgs {
	if s.Postgres() {
		return bun.SafeQuery(fmt.Sprintf(rateTableNone, "bpchar", "date"))
	}
	return bun.SafeQuery(fmt.Sprintf(rateTableNone, "text", "text"))
}

// dayRates is the table rates(currency, day, num, den, lim) of family's
// rates from its other currencies (those of its accounts) into cur for
// every day of p that has one, as the query of a WITH.
func (s *Store) dayRates(ctx context.Context, familyID uuid.UUID, cur string, p Period) (schema.QueryWithArgs, error) {
	none := s.noRates()
	if !s.Postgres() {
		// SQLite joins a table of values by scanning it for every row (no
		// hash join, no automatic index on it): 100,000 rows against a
		// year of rates took 1.6 s of processor time. Its rows in other
		// currencies stay with Go.
		return none, nil
	}
	currencies, err := s.ForeignCurrencies(ctx, familyID)
	if err != nil || len(currencies) == 0 {
		return none, err
	}
	var q strings.Builder
	var args []any
	start, end := p.From.Time(), p.To.Time()
	for _, c := range currencies {
		rs, err := s.RateSeries(ctx, familyID, strings.ToUpper(c), strings.ToUpper(cur), p.From, p.To)
		if err != nil {
			return none, err
		}
		for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
			day := civil.DateOf(d)
			quote, ok := rs.At(day)
			if !ok {
				continue
			}
			num, den, ok := quote.Rate.Ratio()
			if !ok {
				continue // Go converts these rows
			}
			if len(args) == 5*maxDayRates {
				return none, nil
			}
			switch {
			case len(args) > 0:
				q.WriteString(", (?, ?, ?, ?, ?)")
			case s.Postgres(): // the first row types the columns, the currency as the column's (no cast per row)
				q.WriteString("VALUES (CAST(? AS bpchar), CAST(? AS date), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint))")
			default:
				q.WriteString("VALUES (?, ?, ?, ?, ?)")
			}
			args = append(args, c, day, num, den, math.MaxInt64/num)
		}
	}
	if len(args) == 0 {
		return none, nil
	}
	return bun.SafeQuery(q.String(), args...), nil
}

// Fragments of the queries that convert in SQL, over a transaction t
// LEFT JOINed to the rates r of its currency and day (fxJoinSQL), with
// ?10 the rates table (dayRates) and ?11 the family's currency: every
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

// fxStatementSQL is family ?0's income and spending from ?1 to ?2 by
// month (?3, the month of t.date), direction and category, every row in
// the family's currency or converted in SQL added up in total and count;
// slow counts the rows of the cell that Go converts (slowRowsSQL), fx
// those converted here. Grouped by month straight from the rows, not by
// day first: a month is cheaper to work out per row than a table of a
// year's days and categories is to build.
const fxStatementSQL = `WITH ` + fxRatesSQL + `, cells AS (
SELECT ?3 AS month, t.category_id, t.amount < 0 AS income,
       SUM(` + fxValueSQL + `) AS amount,
       SUM(CASE WHEN ` + fxFastSQL + ` THEN 1 ELSE 0 END) AS n,
       SUM(CASE WHEN t.currency = ?11 THEN 0 WHEN ` + fxFastSQL + ` THEN 1 ELSE 0 END) AS fx,
       SUM(CASE WHEN ` + fxFastSQL + ` THEN 0 ELSE 1 END) AS slow
FROM transactions t` + fxJoinSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND ` + fxCountedSQL + `
GROUP BY 1, t.category_id, t.amount < 0)
SELECT d.month, CASE WHEN d.income THEN 'income' ELSE 'expense' END AS classification,
       c.id AS category_id, c.name, c.color, c.icon, c.parent_id, p.name AS parent_name,
       CAST(ABS(COALESCE(d.amount, 0)) AS bigint) AS total,
       CAST(d.n AS bigint) AS count, CAST(d.fx AS bigint) AS fx, CAST(d.slow AS bigint) AS slow
FROM cells d
LEFT JOIN categories c ON c.id = d.category_id AND c.family_id = ?0
LEFT JOIN categories p ON p.id = c.parent_id AND p.family_id = ?0
ORDER BY 1, 2, total DESC, c.name`

// slowRowsSQL lists, by currency, day and category (foreignRowsSQL's
// groups), the amounts of family ?0's counted rows from ?1 to ?2 that
// SQL does not convert, for Go (?3: amountsOf).
const slowRowsSQL = slowRowsSelectSQL + slowRowsGroupSQL

// slowSpendingRowsSQL is slowRowsSQL of the categorised spending alone,
// the rows a budget counts.
const slowSpendingRowsSQL = slowRowsSelectSQL + ` AND t.amount > 0 AND t.category_id IS NOT NULL` + slowRowsGroupSQL

const (
	slowRowsSelectSQL = `WITH ` + fxRatesSQL + `
SELECT t.currency, t.date, t.category_id, ?3 AS amounts
FROM transactions t` + fxJoinSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND ` + fxCountedSQL + `
  AND t.currency <> ?11 AND (r.lim IS NULL OR r.lim < abs(t.amount))`
	slowRowsGroupSQL = `
GROUP BY t.date, t.category_id, t.currency`
)

// statementRow is a result row of fxStatementSQL.
type statementRow struct {
	StatementCell
	FX   int `bun:"fx"`
	Slow int `bun:"slow"`
}

// statement returns the cells of a period's income and spending in the
// family's currency, every row in another currency converted at its
// day's rate (in SQL, or in Go for the rows SQL cannot convert exactly),
// by month when byMonth, else all in one cell per direction and
// category with no month. The ledger is read once, twice when some rows
// need Go.
func (s *Store) statement(ctx context.Context, familyID uuid.UUID, p Period, byMonth bool) ([]StatementCell, error) {
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	rates, err := s.dayRates(ctx, familyID, fam.Currency, p)
	if err != nil {
		return nil, err
	}
	var month any = bun.SafeQuery("?", p.From)
	if byMonth {
		month = s.bucketOf(Month, "t.date")
	}
	var rows []statementRow
	query, args, err := s.sumsStatement(ctx, rates, fam.Currency, familyID, p, month)
	if err != nil {
		return nil, err
	}
	if err := s.db.NewRaw(query, args...).
		Scan(ctx, &rows); err != nil {
		return nil, dbErr("income statement", err)
	}
	cells := []StatementCell{}
	converted, slow := false, false
	for _, r := range rows {
		slow = slow || r.Slow > 0
		if r.Count == 0 {
			continue // only rows Go converts
		}
		if !byMonth {
			r.Month = ""
		}
		cells = append(cells, r.StatementCell)
		converted = converted || r.FX > 0
	}
	var flows []flowRow
	if slow {
		groups, err := scanFlows(s.db.QueryContext(ctx, slowRowsSQL, fxArgs(rates, fam.Currency, familyID, p.From, p.To, s.amountsOf())...))
		if err != nil {
			return nil, err
		}
		if flows, _, err = s.convertFlows(ctx, familyID, groups); err != nil {
			return nil, err
		}
	}
	if len(flows) == 0 && converted {
		sortCells(cells)
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
