package models

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Period is a span of calendar days, both ends included.
type Period struct {
	From civil.Date
	To   civil.Date
}

// MonthPeriod returns the calendar month that d falls in.
func MonthPeriod(d civil.Date) Period {
	t := d.Time()
	first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Period{From: civil.DateOf(first), To: civil.DateOf(first.AddDate(0, 1, -1))}
}

// check refuses a period that is not two real days in order.
func (p Period) check() error {
	if _, err := civil.ParseDate(string(p.From)); err != nil {
		return Invalid("Start date must be a real calendar date")
	}
	if _, err := civil.ParseDate(string(p.To)); err != nil {
		return Invalid("End date must be a real calendar date")
	}
	if p.To < p.From {
		return Invalid("End date must not be before the start date")
	}
	return nil
}

// Interval is the width of one point of a series or one column of a report.
type Interval string

// Intervals of series and reports. Weeks start on Monday.
const (
	Day   Interval = "day"
	Week  Interval = "week"
	Month Interval = "month"
)

// ValidInterval reports whether i is a known interval.
func ValidInterval(i Interval) bool { return i == Day || i == Week || i == Month }

// start returns the first day of the interval that t falls in.
func (i Interval) start(t time.Time) time.Time {
	switch i {
	case Week:
		return t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return t
}

// next returns the first day of the interval after the one starting at t.
func (i Interval) next(t time.Time) time.Time {
	switch i {
	case Week:
		return t.AddDate(0, 0, 7)
	case Month:
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// bucketOf is the SQL for the first day of the interval a date column
// falls in, as a date, in this store's dialect: the one place where the
// two dialects' date functions differ. col is always a column reference
// written in this package, never input.
func (s *Store) bucketOf(i Interval, col string) bun.Safe {
	if s.Postgres() {
		switch i {
		case Week: // through timestamp, not timestamptz: no time zone to consult
			return bun.Safe("CAST(date_trunc('week', CAST(" + col + " AS timestamp)) AS date)")
		case Month:
			return bun.Safe("CAST(date_trunc('month', CAST(" + col + " AS timestamp)) AS date)")
		}
		return bun.Safe(col)
	}
	switch i {
	case Week:
		return bun.Safe("date(" + col + ", '-' || ((CAST(strftime('%w', " + col + ") AS integer) + 6) % 7) || ' days')")
	case Month:
		return bun.Safe("date(" + col + ", 'start of month')")
	}
	return bun.Safe(col)
}

// liabilitySQL is true for an account of a type that is money owed; the
// SQL twin of Liability.
const liabilitySQL = `a.account_type IN ('credit_card', 'loan', 'other_liability')`

// countedJoinsSQL and countedWhereSQL choose the transactions t that
// income and spending figures count in SQL, for family ?0: not deleted,
// not excluded, on an active account, in the family's currency, and not
// one leg of a transfer, which moves money without earning or spending
// it. The same rows in another currency (foreignWhereSQL) are converted
// in Go, each at its day's rate, and added to the sums (report_fx.go).
// Amounts keep the stored sign: positive is spending, negative is
// income, as the API's classification says.
//
// The transfer legs are left out with NOT IN rather than NOT EXISTS: both
// columns are NOT NULL, so the two mean the same, but NOT IN makes
// PostgreSQL hash the family's legs once and probe that per row, where
// NOT EXISTS let it rescan transfers for every row when it holds few or
// no rows of the family (a third of a report's time). SQLite builds the
// same set once as well.
const (
	countedJoinsSQL = `
JOIN accounts a ON a.id = t.account_id AND a.family_id = t.family_id
JOIN families f ON f.id = t.family_id`
	countedWhereSQL = countedBaseSQL + ` AND t.currency = f.currency` + notTransferSQL
	countedBaseSQL  = `t.family_id = ?0
  AND t.deleted_at IS NULL AND NOT t.excluded
  AND a.status = 'active'`
	notTransferSQL = `
  AND t.id NOT IN (SELECT tr.inflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
  AND t.id NOT IN (SELECT tr.outflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)`
)

// countedDaysSQL sums the counted transactions of family ?0 from ?1 to ?2
// by day, category and direction (income: the stored amount is negative).
// The reports group these sums, not the rows: the scan only adds, and a
// month or a category name is worked out once per day and category
// instead of once per transaction. Every amount of a group has the sign
// of its direction, so the size of a sum is the sum of the sizes.
//
// The dates come first so that PostgreSQL, which keeps the written order
// among conditions of equal cost, tests them before the transfer probes.
const countedDaysSQL = `
SELECT t.date, t.category_id, t.amount < 0 AS income, SUM(t.amount) AS amount, COUNT(*) AS n
FROM transactions t` + countedJoinsSQL + `
WHERE t.date >= ?1 AND t.date <= ?2 AND ` + countedWhereSQL + `
GROUP BY t.date, t.category_id, t.amount < 0`

// Totals are the income and spending of a period, each a positive sum.
type Totals struct {
	Currency      string       `bun:"currency"`
	Income        money.Amount `bun:"income"`
	Spending      money.Amount `bun:"spending"`
	IncomeCount   int          `bun:"income_count"`
	SpendingCount int          `bun:"spending_count"`
}

// Net is income less spending: what the period saved.
func (t Totals) Net() money.Amount { return t.Income - t.Spending }

// PeriodTotals returns the family's income and spending over a period.
func (s *Store) PeriodTotals(ctx context.Context, familyID uuid.UUID, p Period) (*Totals, error) {
	rows, err := s.CategoryTotals(ctx, familyID, p)
	if err != nil {
		return nil, err
	}
	f, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	return TotalsOf(f.Currency, rows), nil
}

// TotalsOf adds up a period's CategoryTotals into its Totals (what
// PeriodTotals returns), for a screen that shows both.
func TotalsOf(currency string, rows []CategoryTotal) *Totals {
	t := &Totals{Currency: currency}
	for _, r := range rows {
		if r.Classification == "income" {
			t.Income += r.Total
			t.IncomeCount += r.Count
		} else {
			t.Spending += r.Total
			t.SpendingCount += r.Count
		}
	}
	return t
}

// CategoryTotal is what one category earned or spent over a period. A nil
// CategoryID is the uncategorised rest.
type CategoryTotal struct {
	Classification string       `bun:"classification"` // income or expense, by the sign of each transaction
	CategoryID     *uuid.UUID   `bun:"category_id"`
	Name           *string      `bun:"name"`
	Color          *string      `bun:"color"`
	Icon           *string      `bun:"icon"`
	ParentID       *uuid.UUID   `bun:"parent_id"`
	ParentName     *string      `bun:"parent_name"`
	Total          money.Amount `bun:"total"` // positive
	Count          int          `bun:"count"`
}

// categorySumsSQL adds up the counted days (countedDaysSQL, as days) by
// direction and category, naming each category and its parent: the
// columns of a CategoryTotal, after any its query puts first.
const categorySumsSQL = `
       CASE WHEN d.income THEN 'income' ELSE 'expense' END AS classification,
       c.id AS category_id, c.name, c.color, c.icon, c.parent_id, p.name AS parent_name,
       CAST(ABS(SUM(d.amount)) AS bigint) AS total,
       CAST(SUM(d.n) AS bigint) AS count
FROM days d
LEFT JOIN categories c ON c.id = d.category_id AND c.family_id = ?0
LEFT JOIN categories p ON p.id = c.parent_id AND p.family_id = ?0`

const categoryTotalsSQL = `WITH days AS (` + countedDaysSQL + `)
SELECT` + categorySumsSQL + `
GROUP BY 1, c.id, c.name, c.color, c.icon, c.parent_id, p.name
ORDER BY 1, total DESC, c.name`

// CategoryTotals returns, for a period, what each category spent and
// earned in the family's currency (a row in another currency converted
// at its day's rate; without one, see LeftOutOf), the uncategorised rest as a row with no category: spending rows
// first, then income rows, the largest first in each. A subcategory is
// its own row and names its parent, so a screen can show either level.
func (s *Store) CategoryTotals(ctx context.Context, familyID uuid.UUID, p Period) ([]CategoryTotal, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, err
	}
	cells, err := s.statement(ctx, familyID, p, false)
	if err != nil {
		return nil, err
	}
	rows := make([]CategoryTotal, 0, len(cells))
	for _, c := range cells {
		rows = append(rows, c.CategoryTotal)
	}
	return rows, nil
}

// StatementCell is one category's income or spending in one month.
type StatementCell struct {
	Month civil.Date `bun:"month"` // first day of the month
	CategoryTotal
}

const incomeStatementSQL = `WITH days AS (` + countedDaysSQL + `)
SELECT ?3 AS month,` + categorySumsSQL + `
GROUP BY 1, 2, c.id, c.name, c.color, c.icon, c.parent_id, p.name
ORDER BY 1, 2, total DESC, c.name`

// IncomeStatement returns a period's income and spending by month and
// category, converted as CategoryTotals converts: one cell per month, classification and category that had
// any, months in order. Months without a cell had nothing.
func (s *Store) IncomeStatement(ctx context.Context, familyID uuid.UUID, p Period) ([]StatementCell, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, err
	}
	return s.statement(ctx, familyID, p, true)
}

// CategoryTotalsOf adds up a period's IncomeStatement over its months
// into its CategoryTotals (what CategoryTotals returns, in its order),
// for an answer that shows both from one read of the ledger.
func CategoryTotalsOf(cells []StatementCell) []CategoryTotal {
	rows := []CategoryTotal{}
	at := map[cellKey]int{}
	for _, c := range cells {
		k := cellKey{income: c.Classification == "income"}
		if c.CategoryID != nil {
			k.category = *c.CategoryID
		}
		i, ok := at[k]
		if !ok {
			ct := c.CategoryTotal
			ct.Total, ct.Count = 0, 0
			rows = append(rows, ct)
			i = len(rows) - 1
			at[k] = i
		}
		rows[i].Total += c.Total
		rows[i].Count += c.Count
	}
	slices.SortStableFunc(rows, compareCategoryTotals)
	return rows
}

// CashFlowMonth is one month's money in and out, transfers left out.
type CashFlowMonth struct {
	Month    civil.Date   `bun:"month"` // first day of the month
	Income   money.Amount `bun:"income"`
	Spending money.Amount `bun:"spending"`
}

// Net is what the month saved (negative: what it overspent).
func (m CashFlowMonth) Net() money.Amount { return m.Income - m.Spending }

// CashFlow returns income, spending and net for every month of a period,
// in order, months without transactions included as zeros.
func (s *Store) CashFlow(ctx context.Context, familyID uuid.UUID, p Period) ([]CashFlowMonth, error) {
	cells, err := s.IncomeStatement(ctx, familyID, p)
	if err != nil {
		return nil, err
	}
	return CashFlowOf(cells, p), nil
}

// CashFlowOf adds up a period's IncomeStatement by month into its cash
// flow (what CashFlow returns), for a screen that shows both: every month
// of the period, in order, months without cells as zeros.
func CashFlowOf(cells []StatementCell, p Period) []CashFlowMonth {
	sums := map[civil.Date]CashFlowMonth{}
	for _, c := range cells {
		m := sums[c.Month]
		if c.Classification == "income" {
			m.Income += c.Total
		} else {
			m.Spending += c.Total
		}
		sums[c.Month] = m
	}
	out := []CashFlowMonth{}
	for m := Month.start(p.From.Time()); !m.After(p.To.Time()); m = Month.next(m) {
		month := sums[civil.DateOf(m)]
		month.Month = civil.DateOf(m)
		out = append(out, month)
	}
	return out
}
