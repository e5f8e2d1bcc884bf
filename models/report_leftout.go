package models

import (
	"context"
	"slices"

	"github.com/google/uuid"
)

// LeftOut is what a period's income and spending figures do not count
// although the ledger holds it, so that a screen showing a total can say
// what it leaves out and why: rows in a currency other than the family's
// (there are no exchange rates, so they are not added as if they were
// equal) and rows a person marked excluded. Transfer legs are not here:
// moving money between one's own accounts is neither income nor
// spending, so a total without them is complete.
type LeftOut struct {
	OtherCurrency int      // rows in another currency
	Currencies    []string // which, sorted
	Excluded      int      // rows marked excluded
}

// Any reports whether anything was left out.
func (l *LeftOut) Any() bool { return l.OtherCurrency > 0 || l.Excluded > 0 }

// leftOutSQL counts, by currency and exclusion, the rows of family ?0
// from ?1 to ?2 that countedWhereSQL would count but for their currency
// or their excluded mark. A split parent is not left out: its parts are
// counted in its place.
const leftOutSQL = `
SELECT t.currency, t.currency <> f.currency AS other, t.excluded, COUNT(*) AS n
FROM transactions t` + countedJoinsSQL + `
WHERE t.family_id = ?0 AND t.date >= ?1 AND t.date <= ?2
  AND t.deleted_at IS NULL AND a.status = 'active'
  AND (t.excluded OR t.currency <> f.currency)
  AND COALESCE(t.excluded_reason, '') <> 'split'
  AND t.id NOT IN (SELECT tr.inflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
  AND t.id NOT IN (SELECT tr.outflow_transaction_id FROM transfers tr WHERE tr.family_id = ?0)
GROUP BY t.currency, t.currency <> f.currency, t.excluded`

// LeftOutOf returns what the family's income and spending figures of a
// period leave out. An excluded row in another currency counts as
// excluded: that is the reason a person gave.
func (s *Store) LeftOutOf(ctx context.Context, familyID uuid.UUID, p Period) (*LeftOut, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	var rows []struct {
		Currency string `bun:"currency"`
		Other    bool   `bun:"other"`
		Excluded bool   `bun:"excluded"`
		N        int    `bun:"n"`
	}
	if err := s.db.NewRaw(leftOutSQL, familyID, p.From, p.To).Scan(ctx, &rows); err != nil {
		return nil, dbErr("left out", err)
	}
	l := &LeftOut{}
	for _, r := range rows {
		switch {
		case r.Excluded:
			l.Excluded += r.N
		case r.Other:
			l.OtherCurrency += r.N
			if !slices.Contains(l.Currencies, r.Currency) {
				l.Currencies = append(l.Currencies, r.Currency)
			}
		}
	}
	slices.Sort(l.Currencies)
	return l, nil
}
