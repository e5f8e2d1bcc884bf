package models

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
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

// leftOutSQL counts, by currency and reason, the rows of family ?0
// from ?2 to ?3 that countedWhereSQL would count but for their currency
// or their excluded mark: excluded; in another currency and converted
// (some rate of it into the family's currency ?1, upper case, on or
// before the row's day: the reports convert it at the latest); or in
// another currency and left out (none). A split parent is not left out:
// its parts are counted in its place. The first day of each currency's
// rates (firstRatesSQL) is joined to the rows, so a period's rows come
// back as a few counts, not a row per day.
const leftOutSQL = `
WITH firsts AS (` + firstRatesSQL + `)
SELECT t.currency, t.excluded, t.currency <> f.currency AS other,
       (fr.first IS NOT NULL AND fr.first <= t.date) AS converted, COUNT(*) AS n
FROM transactions t` + countedJoinsSQL + `
LEFT JOIN firsts fr ON fr.currency = upper(t.currency)
WHERE t.family_id = ?0 AND t.date >= ?2 AND t.date <= ?3
  AND t.deleted_at IS NULL AND a.status = 'active'
  AND (t.excluded OR t.currency <> f.currency)
  AND COALESCE(t.excluded_reason, '') <> 'split'
  AND t.id NOT IN (SELECT tr.inflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
  AND t.id NOT IN (SELECT tr.outflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
GROUP BY t.currency, t.excluded, t.currency <> f.currency, (fr.first IS NOT NULL AND fr.first <= t.date)`

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
// that is the reason a person gave.
func (s *Store) LeftOutOf(ctx context.Context, familyID uuid.UUID, p Period) (*LeftOut, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Currency  string `bun:"currency"`
		Excluded  bool   `bun:"excluded"`
		Other     bool   `bun:"other"`
		Converted bool   `bun:"converted"`
		N         int    `bun:"n"`
	}
	if err := s.db.NewRaw(leftOutSQL, familyID, strings.ToUpper(fam.Currency), p.From, p.To).Scan(ctx, &rows); err != nil {
		return nil, dbErr("left out", err)
	}
	l := &LeftOut{}
	for _, r := range rows {
		switch {
		case r.Excluded:
			l.Excluded += r.N
		case !r.Other:
		case r.Converted:
			l.Converted += r.N
			if !slices.Contains(l.ConvertedCurrencies, r.Currency) {
				l.ConvertedCurrencies = append(l.ConvertedCurrencies, r.Currency)
			}
		default:
			l.OtherCurrency += r.N
			if !slices.Contains(l.Currencies, r.Currency) {
				l.Currencies = append(l.Currencies, r.Currency)
			}
		}
	}
	slices.Sort(l.Currencies)
	slices.Sort(l.ConvertedCurrencies)
	return l, nil
}
