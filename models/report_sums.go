package models

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
)

// The reports and series read the family's currency from the kept sums
// (transaction_sums.go), not from the rows: a day or a month costs a row
// per account, category and direction whatever number of transactions it
// had. Rows in other currencies are still read and converted one by one
// (report_fx_sql.go), and only when the sums show any in the period.

// sumsRanges splits a period into the days before its first whole month,
// its whole months, and the days after its last whole month, so that the
// whole months are read from the monthly sums: (?4, ?5) days, (?6, ?7)
// months (by their first days), (?8, ?9) days. A part that is empty has
// its start after its end and reads nothing.
func sumsRanges(p Period) [6]any {
	from, to := p.From.Time(), p.To.Time()
	first := Month.start(from)
	if !first.Equal(from) {
		first = Month.next(first) // the first whole month
	}
	end := Month.start(to.AddDate(0, 0, 1)) // the day after the last whole month
	if !end.After(first) {                  // no whole month: all days
		return [6]any{p.From, p.To, civil.Date("9999-12-31"), civil.Date("0001-01-01"), civil.Date("9999-12-31"), civil.Date("0001-01-01")}
	}
	lastMonth := end.AddDate(0, -1, 0)
	return [6]any{
		p.From, civil.DateOf(first.AddDate(0, 0, -1)),
		civil.DateOf(first), civil.DateOf(lastMonth),
		civil.DateOf(end), p.To,
	}
}

// sumsEdgesSQL tells whether family ?0 has sums of daily grain ?5 from ?1
// to the day before ?2 (the first month's days before the period) and
// from the day after ?3 to ?4 (the last month's days after it).
const sumsEdgesSQL = `SELECT
    EXISTS (SELECT 1 FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = ?5 AND s.day >= ?1 AND s.day < ?2),
    EXISTS (SELECT 1 FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = ?5 AND s.day > ?3 AND s.day <= ?4)`

// sumsRangesOf is sumsRanges for reading family's kept sums over p: a
// month p holds only part of, whose days outside p have no sums, is read
// whole from the monthly sums, which then count what its days in p do.
// A month to date (the dashboard, the end of a year's report) is thus a
// row per account, category and direction instead of one per day: 1,561
// rows for November at 100,000 transactions instead of 115, and more the
// busier the family's days (the year's report at 1,000,000 cost 2.6
// times what it did at 10,000 before, 1.7 times after).
func (s *Store) sumsRangesOf(ctx context.Context, familyID uuid.UUID, p Period) ([6]any, error) {
	return s.grainRangesOf(ctx, familyID, p, "d")
}

// grainRangesOf is sumsRangesOf for the daily grain given (d, or x for the
// excluded rows), whose monthly grain is the one read for whole months.
func (s *Store) grainRangesOf(ctx context.Context, familyID uuid.UUID, p Period, daily string) ([6]any, error) {
	from, to := p.From.Time(), p.To.Time()
	first, last := Month.start(from), Month.next(Month.start(to)).AddDate(0, 0, -1)
	if first.Equal(from) && last.Equal(to) {
		return sumsRanges(p), nil
	}
	var before, after bool
	if err := s.db.NewRaw(sumsEdgesSQL, familyID, civil.DateOf(first), p.From, p.To, civil.DateOf(last), daily).
		Scan(ctx, &before, &after); err != nil {
		return [6]any{}, dbErr("kept sums", err)
	}
	if !before {
		p.From = civil.DateOf(first)
	}
	if !after {
		p.To = civil.DateOf(last)
	}
	return sumsRanges(p), nil
}

// sumsPeriodSQL is the kept sums of family ?0 over a period split by
// sumsRanges, as rows t(date, account_id, currency, category_id, transfer,
// income, amount, n). Each part is a range of the sums' index.
const sumsPeriodSQL = `(
    SELECT s.day AS date, s.account_id, s.currency, s.category_id, s.transfer, s.income, s.amount, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'd' AND s.day >= ?4 AND s.day <= ?5
    UNION ALL
    SELECT s.day, s.account_id, s.currency, s.category_id, s.transfer, s.income, s.amount, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'm' AND s.day >= ?6 AND s.day <= ?7
    UNION ALL
    SELECT s.day, s.account_id, s.currency, s.category_id, s.transfer, s.income, s.amount, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'd' AND s.day >= ?8 AND s.day <= ?9
) t`

// sumsCellsSQL is the statement cells of the rows in the family's
// currency (?3) read from the kept sums over the period's parts (?4 to
// ?9, sumsRanges), by month (?2: the month bucket of t.date, or the
// period's first day for one cell per category), in the order the rows'
// statement gives them. A key whose deltas cancel out (n 0) is no cell,
// as no row made none. The rows in other currencies are converted apart
// (convertedFlows) and added to these.
const sumsCellsSQL = `WITH cells AS (
SELECT ?2 AS month, t.category_id, t.income, SUM(t.amount) AS amount, SUM(t.n) AS n
FROM ` + sumsPeriodSQL + `
WHERE NOT t.transfer AND t.currency = ?3
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')
GROUP BY 1, t.category_id, t.income
HAVING SUM(t.n) <> 0)
SELECT d.month, CASE WHEN d.income THEN 'income' ELSE 'expense' END AS classification,
       c.id AS category_id, c.name, c.color, c.icon, c.parent_id, p.name AS parent_name,
       CAST(ABS(COALESCE(SUM(d.amount), 0)) AS bigint) AS total, CAST(SUM(d.n) AS bigint) AS count
FROM cells d
LEFT JOIN categories c ON c.id = d.category_id AND c.family_id = ?0
LEFT JOIN categories p ON p.id = c.parent_id AND p.family_id = ?0
GROUP BY d.month, d.income, d.category_id, c.id, c.name, c.color, c.icon, c.parent_id, p.name
ORDER BY 1, 2, total DESC, c.name`

// sumsForeignInPeriodSQL tells whether the monthly sums hold any row in
// another currency than ? in the months of the period.
const sumsForeignInPeriodSQL = `SELECT EXISTS (SELECT 1 FROM transaction_sums s WHERE s.family_id = ? AND s.grain = 'm'
    AND s.day >= ? AND s.day <= ? AND s.currency <> ?)`

// sumsCells returns the statement cells of the family's own currency from
// the kept sums (one cell per month when byMonth, else per direction and
// category with no month) and whether the period has rows in other
// currencies to convert and add.
func (s *Store) sumsCells(ctx context.Context, currency string, familyID uuid.UUID, p Period, byMonth bool) (cells []StatementCell, foreign bool, err error) {
	err = s.db.NewRaw(sumsForeignInPeriodSQL, familyID, civil.DateOf(Month.start(p.From.Time())), p.To, currency).Scan(ctx, &foreign)
	if err != nil {
		return nil, false, dbErr("income statement", err)
	}
	var month any = bun.SafeQuery("?", p.From)
	if byMonth {
		month = s.bucketOf(Month, "t.date")
	}
	r, err := s.sumsRangesOf(ctx, familyID, p)
	if err != nil {
		return nil, false, err
	}
	cells = []StatementCell{}
	if err := s.db.NewRaw(sumsCellsSQL, familyID, nil, month, currency, r[0], r[1], r[2], r[3], r[4], r[5]).Scan(ctx, &cells); err != nil {
		return nil, false, dbErr("income statement", err)
	}
	if !byMonth {
		for i := range cells {
			cells[i].Month = ""
		}
	}
	return cells, foreign, nil
}

// seriesDaysSumsSQL is the days of seriesSQL (what moved each account in
// acc, by day and currency) from the account-day sums (grain a): transfers included, as a
// balance counts them.
const seriesDaysSumsSQL = `
    SELECT t.day AS date, t.account_id, t.currency, SUM(t.amount) AS amount
    FROM transaction_sums t
    WHERE t.family_id = ?0 AND t.grain = 'a'
      AND %s
      AND t.day > (SELECT MIN(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?5) lo)
      AND t.day <= (SELECT MAX(d) FROM (SELECT asof AS d FROM acc UNION ALL SELECT ?2) hi)
    GROUP BY t.day, t.account_id, t.currency`
