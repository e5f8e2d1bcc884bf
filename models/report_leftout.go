package models

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"coffer/models/civil"
)

// LeftOut is what a period's income and spending figures do not count
// although the ledger holds it, so that a screen showing a total can say
// what it leaves out and why: rows in a currency other than the family's
// without any exchange rate on or before their day (they are not added as
// if they were equal) and rows a person marked excluded. Transfer legs
// are not here: moving money between one's own accounts is neither income
// nor spending, so a total without them is complete.
type LeftOut struct {
	OtherCurrency int      // rows in another currency without a rate
	Currencies    []string // which, sorted
	Excluded      int      // rows marked excluded
	// Converted counts the rows in another currency that the figures do
	// count, each at the rate of its day, and ConvertedCurrencies names
	// their currencies, sorted.
	Converted           int
	ConvertedCurrencies []string
}

// Any reports whether anything was left out.
func (l *LeftOut) Any() bool { return l.OtherCurrency > 0 || l.Excluded > 0 }

// leftOutExcludedSQL counts, from the kept sums of the excluded rows
// (grain x by day, y by month) over the period's parts (?1 to ?6,
// grainRangesOf), the rows of family ?0 that a person marked excluded, in
// any currency, on active accounts, transfer legs aside. A split parent is
// not there: its parts are counted in its place. The count costs a row per
// account and month (or day, at the period's edges), however many rows
// were excluded: counted from the rows, the year's report at 1,000,000
// rows read 3,000 of them and looked up each one's legs (19 ms).
const leftOutExcludedSQL = `
SELECT CAST(COALESCE(SUM(t.n), 0) AS bigint) FROM (
    SELECT s.account_id, s.transfer, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'x' AND s.day >= ?1 AND s.day <= ?2
    UNION ALL
    SELECT s.account_id, s.transfer, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'y' AND s.day >= ?3 AND s.day <= ?4
    UNION ALL
    SELECT s.account_id, s.transfer, s.n
    FROM transaction_sums s WHERE s.family_id = ?0 AND s.grain = 'x' AND s.day >= ?5 AND s.day <= ?6
) t
WHERE NOT t.transfer AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')`

// leftOutForeignSQL counts, from the kept sums over the period's parts
// (sumsPeriodSQL, ?4 to ?9), the counted rows of family ?0 in another
// currency than ?3 on active accounts, transfer legs aside, by currency
// and day (a whole month's on its first day): the rows the figures
// convert, or leave out when no rate of their currency comes on or before
// their day.
const leftOutForeignSQL = `
SELECT t.currency, t.date, CAST(SUM(t.n) AS bigint) AS n
FROM ` + sumsPeriodSQL + `
WHERE NOT t.transfer AND t.currency <> ?3
  AND t.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')
GROUP BY t.currency, t.date
HAVING SUM(t.n) <> 0`

// leftOutDaysSQL counts, from the daily sums, what leftOutForeignSQL
// counts for currency ?3 from ?1 to ?2: the days of a month from a
// currency's first rate on, when that rate came within the month.
const leftOutDaysSQL = `
SELECT CAST(COALESCE(SUM(s.n), 0) AS bigint) FROM transaction_sums s
WHERE s.family_id = ?0 AND s.grain = 'd' AND s.day >= ?1 AND s.day <= ?2 AND s.currency = ?3 AND NOT s.transfer
  AND s.account_id IN (SELECT a.id FROM accounts a WHERE a.family_id = ?0 AND a.status = 'active')`

// firstRatesSQL is, for each currency with a rate to or from ?1 that
// family ?0 sees (its own or the instance's), the first day with one: a
// row of that currency converts from that day on (the latest rate on or
// before its day), and before it has none.
const firstRatesSQL = `
SELECT CASE WHEN xr.from_currency = ?1 THEN xr.to_currency ELSE xr.from_currency END AS currency, MIN(xr.date) AS first
FROM exchange_rates xr
WHERE (xr.family_id = ?0 OR xr.family_id IS NULL) AND (xr.from_currency = ?1 OR xr.to_currency = ?1)
GROUP BY CASE WHEN xr.from_currency = ?1 THEN xr.to_currency ELSE xr.from_currency END`

// LeftOutOf returns what the family's income and spending figures of a
// period leave out, and which rows in other currencies they count
// converted. An excluded row in another currency counts as excluded:
// that is the reason a person gave. The rows in other currencies are
// counted from the kept sums (transaction_sums.go): a row converts from
// the first day its currency has a rate (firstRatesSQL), so a day's or a
// whole month's count says it all, but for the month of that first day,
// which the daily sums split.
func (s *Store) LeftOutOf(ctx context.Context, familyID uuid.UUID, p Period) (*LeftOut, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	if err := s.maybeCompactSums(ctx, familyID); err != nil {
		return nil, err
	}
	l := &LeftOut{}
	x, err := s.grainRangesOf(ctx, familyID, p, "x")
	if err != nil {
		return nil, err
	}
	if err := s.db.NewRaw(leftOutExcludedSQL, familyID, x[0], x[1], x[2], x[3], x[4], x[5]).Scan(ctx, &l.Excluded); err != nil {
		return nil, dbErr("left out", err)
	}
	r, err := s.sumsRangesOf(ctx, familyID, p)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Currency string     `bun:"currency"`
		Date     civil.Date `bun:"date"`
		N        int        `bun:"n"`
	}
	if err := s.db.NewRaw(leftOutForeignSQL, familyID, nil, nil, fam.Currency, r[0], r[1], r[2], r[3], r[4], r[5]).Scan(ctx, &rows); err != nil {
		return nil, dbErr("left out", err)
	}
	if len(rows) == 0 {
		return l, nil
	}
	var firsts []struct {
		Currency string     `bun:"currency"`
		First    civil.Date `bun:"first"`
	}
	if err := s.db.NewRaw(firstRatesSQL, familyID, strings.ToUpper(fam.Currency)).Scan(ctx, &firsts); err != nil {
		return nil, dbErr("left out", err)
	}
	firstOf := map[string]civil.Date{}
	for _, f := range firsts {
		firstOf[f.Currency] = f.First
	}
	wholeFrom, wholeTo := r[2].(civil.Date), r[3].(civil.Date)
	for _, row := range rows {
		first, ok := firstOf[strings.ToUpper(row.Currency)]
		last := row.Date // the row's last day: its own, or its month's
		if row.Date >= wholeFrom && row.Date <= wholeTo {
			last = civil.DateOf(Month.next(row.Date.Time()).AddDate(0, 0, -1))
		}
		converted := 0
		switch {
		case !ok || first > last:
		case first <= row.Date:
			converted = row.N
		default: // the month of the currency's first rate: its days from then on convert
			if err := s.db.NewRaw(leftOutDaysSQL, familyID, first, last, row.Currency).Scan(ctx, &converted); err != nil {
				return nil, dbErr("left out", err)
			}
		}
		if converted > 0 {
			l.Converted += converted
			if !slices.Contains(l.ConvertedCurrencies, row.Currency) {
				l.ConvertedCurrencies = append(l.ConvertedCurrencies, row.Currency)
			}
		}
		if converted < row.N {
			l.OtherCurrency += row.N - converted
			if !slices.Contains(l.Currencies, row.Currency) {
				l.Currencies = append(l.Currencies, row.Currency)
			}
		}
	}
	slices.Sort(l.Currencies)
	slices.Sort(l.ConvertedCurrencies)
	return l, nil
}
