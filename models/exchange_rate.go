package models

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// Sources of an exchange rate.
const (
	RateFetched = "fetched" // from the rates service, shared by the instance
	RateManual  = "manual"  // set by hand by a family, for itself only
)

// ExchangeRate is the price of one unit of FromCurrency in ToCurrency on
// Date. A fetched rate has no family; a manual one belongs to FamilyID.
type ExchangeRate struct {
	bun.BaseModel `bun:"table:exchange_rates,alias:xr"`

	ID           uuid.UUID  `bun:"id,pk"`
	FamilyID     *uuid.UUID `bun:"family_id"` // nil: fetched, the instance's
	FromCurrency string     `bun:"from_currency"`
	ToCurrency   string     `bun:"to_currency"`
	Date         civil.Date `bun:"date"`
	Rate         money.Rate `bun:"rate"` // stored as its exact decimal text
	Source       string     `bun:"source"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
}

// RateFilter narrows a list of rates; empty fields do not filter.
type RateFilter struct {
	From, To   string
	Start, End civil.Date
}

// ExchangeRates lists a page of the rates the family sees (its own and
// the instance's fetched ones), the newest day first.
func (s *Store) ExchangeRates(ctx context.Context, familyID uuid.UUID, f RateFilter, p Page) ([]ExchangeRate, int, error) {
	var rows []ExchangeRate
	q := s.db.NewSelect().Model(&rows).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("xr.family_id = ?", familyID).WhereOr("xr.family_id IS NULL")
		})
	if f.From != "" {
		q = q.Where("xr.from_currency = ?", f.From)
	}
	if f.To != "" {
		q = q.Where("xr.to_currency = ?", f.To)
	}
	if f.Start != "" {
		q = q.Where("xr.date >= ?", f.Start)
	}
	if f.End != "" {
		q = q.Where("xr.date <= ?", f.End)
	}
	q = q.OrderExpr("xr.date DESC").OrderExpr("xr.created_at DESC").OrderExpr("xr.id DESC")
	total, err := p.scan(ctx, q)
	return rows, total, dbErr("list exchange rates", err)
}

// ExchangeRate returns one rate the family sees: its own or a fetched one.
// Another family's rate is ErrNotFound.
func (s *Store) ExchangeRate(ctx context.Context, familyID, id uuid.UUID) (*ExchangeRate, error) {
	r := new(ExchangeRate)
	err := s.db.NewSelect().Model(r).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("xr.family_id = ?", familyID).WhereOr("xr.family_id IS NULL")
		}).
		Where("xr.id = ?", id).Scan(ctx)
	return r, dbErr("get exchange rate", err)
}

// SetRate stores the family's own rate of r's pair and day, replacing the
// rate it had set for that day: created reports whether the row is new.
// r comes back as stored (its id and first creation time kept).
func (s *Store) SetRate(ctx context.Context, familyID uuid.UUID, r *ExchangeRate) (created bool, err error) {
	now := s.now()
	r.ID, r.FamilyID, r.Source, r.CreatedAt, r.UpdatedAt = NewID(), &familyID, RateManual, now, now
	// Insert, or else update: two requests at once both end with one row.
	res, err := s.db.NewInsert().Model(r).
		On("CONFLICT (family_id, from_currency, to_currency, date) WHERE family_id IS NOT NULL DO NOTHING").Exec(ctx)
	if err != nil {
		return false, dbErr("set exchange rate", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return n == 1, dbErr("set exchange rate", err)
	}
	if _, err := s.db.NewUpdate().Model(r).Column("rate", "updated_at").
		Where("xr.family_id = ?", familyID).Where("xr.from_currency = ?", r.FromCurrency).
		Where("xr.to_currency = ?", r.ToCurrency).Where("xr.date = ?", r.Date).
		Exec(ctx); err != nil {
		return false, dbErr("set exchange rate", err)
	}
	err = s.db.NewSelect().Model(r).
		Where("xr.family_id = ?", familyID).Where("xr.from_currency = ?", r.FromCurrency).
		Where("xr.to_currency = ?", r.ToCurrency).Where("xr.date = ?", r.Date).Scan(ctx)
	return false, dbErr("set exchange rate", err)
}

// RateQuote is the rate a family uses for a pair on a day, and where it
// comes from.
type RateQuote struct {
	Rate     money.Rate
	Date     civil.Date // the day of the rate used: the day asked, or the latest before it
	Source   string     // RateFetched or RateManual
	Inverted bool       // derived from the rate of the other direction
}

// Rate is the price of one unit of from in to on date, as the family sees
// it: of the latest day on or before date that has one (used), the
// family's own rate before a fetched one, the pair as stored before its
// inverse (derived exactly). ok is false when there is no rate at all:
// the caller must not convert (never 1:1). The same currency is 1.
func (s *Store) Rate(ctx context.Context, familyID uuid.UUID, from, to string, date civil.Date) (rate money.Rate, used civil.Date, ok bool, err error) {
	q, ok, err := s.Quote(ctx, familyID, from, to, date)
	return q.Rate, q.Date, ok, err
}

// Quote is Rate with where the rate comes from.
func (s *Store) Quote(ctx context.Context, familyID uuid.UUID, from, to string, date civil.Date) (RateQuote, bool, error) {
	if from == to {
		one, _ := money.ParseRate("1")
		return RateQuote{Rate: one, Date: date, Source: RateFetched}, true, nil
	}
	// Four candidates, each the latest on or before the day of one index
	// range (the family's rate or the instance's, either direction), each
	// read by a short backward index scan; the best is picked here.
	var rows []ExchangeRate
	if err := s.queryHot(ctx, &rows, quoteSQL, familyID, from, to, date); err != nil {
		return RateQuote{}, false, dbErr("get rate", err)
	}
	best := -1
	for i, r := range rows {
		if best < 0 || betterRate(r, rows[best], from) {
			best = i
		}
	}
	if best < 0 {
		return RateQuote{}, false, nil
	}
	row := rows[best]
	q := RateQuote{Rate: row.Rate, Date: row.Date, Source: row.Source}
	if row.FromCurrency != from {
		q.Rate, q.Inverted = row.Rate.Inverse(), true
	}
	return q, true, nil
}

// quoteSQL reads the candidates of Quote: family $1's rate of $2 in $3, of
// $3 in $2, and the instance's of both, each the latest on or before $4.
// Each branch is wrapped so that both databases take its LIMIT. It is a
// prepared statement (see queryHot): a total looks many rates up.
const quoteSQL = `
SELECT * FROM (SELECT id, family_id, from_currency, to_currency, date, rate, source, created_at, updated_at FROM exchange_rates WHERE family_id = $1 AND from_currency = $2 AND to_currency = $3 AND date <= $4 ORDER BY date DESC LIMIT 1) a
UNION ALL
SELECT * FROM (SELECT id, family_id, from_currency, to_currency, date, rate, source, created_at, updated_at FROM exchange_rates WHERE family_id = $1 AND from_currency = $3 AND to_currency = $2 AND date <= $4 ORDER BY date DESC LIMIT 1) b
UNION ALL
SELECT * FROM (SELECT id, family_id, from_currency, to_currency, date, rate, source, created_at, updated_at FROM exchange_rates WHERE family_id IS NULL AND from_currency = $2 AND to_currency = $3 AND date <= $4 ORDER BY date DESC LIMIT 1) c
UNION ALL
SELECT * FROM (SELECT id, family_id, from_currency, to_currency, date, rate, source, created_at, updated_at FROM exchange_rates WHERE family_id IS NULL AND from_currency = $3 AND to_currency = $2 AND date <= $4 ORDER BY date DESC LIMIT 1) d`

// betterRate reports whether a is the rate to use rather than b, for a
// conversion from from: the later day, then the family's own before the
// instance's, then the direction asked before the inverse.
func betterRate(a, b ExchangeRate, from string) bool {
	if a.Date != b.Date {
		return a.Date > b.Date
	}
	if (a.FamilyID != nil) != (b.FamilyID != nil) {
		return a.FamilyID != nil
	}
	return a.FromCurrency == from && b.FromCurrency != from
}

// ForeignCurrencies lists the currencies of the family's accounts other
// than the family's own, in order.
func (s *Store) ForeignCurrencies(ctx context.Context, familyID uuid.UUID) ([]string, error) {
	var codes []string
	err := s.db.NewSelect().Model((*Account)(nil)).ColumnExpr("DISTINCT a.currency").
		Join("JOIN families AS f ON f.id = a.family_id").
		Where("a.family_id = ?", familyID).Where("a.currency <> f.currency").
		OrderExpr("a.currency").Scan(ctx, &codes)
	return codes, dbErr("foreign currencies", err)
}

// RateSeries is the rates a family uses for one pair over a range of
// days, read at once: a total over many flows looks each day up in it
// instead of asking the database per row.
type RateSeries struct {
	same bool        // from and to are one currency: 1 on every day
	days []RateQuote // by day; each the quote of its day, as Quote would answer
}

// At returns the quote for day, a day of the series' range: as Quote
// answers, the latest day on or before it. ok is false when there is no
// rate on or before it.
func (rs *RateSeries) At(day civil.Date) (RateQuote, bool) {
	i := sort.Search(len(rs.days), func(i int) bool { return rs.days[i].Date > day })
	if i == 0 {
		return RateQuote{}, false
	}
	q := rs.days[i-1]
	if rs.same {
		q.Date = day
	}
	return q, true
}

// RateSeries reads the rates the family uses for from in to over the days
// start..end, in two queries: the quote of start, and every rate of the
// days after it up to end.
func (s *Store) RateSeries(ctx context.Context, familyID uuid.UUID, from, to string, start, end civil.Date) (*RateSeries, error) {
	rs := &RateSeries{}
	first, ok, err := s.Quote(ctx, familyID, from, to, start)
	if err != nil {
		return nil, err
	}
	if ok {
		rs.days = append(rs.days, first)
	}
	if from == to {
		rs.same = true
		return rs, nil
	}
	var rows []ExchangeRate
	err = s.db.NewSelect().Model(&rows).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("xr.from_currency = ? AND xr.to_currency = ?", from, to).
				WhereOr("xr.from_currency = ? AND xr.to_currency = ?", to, from)
		}).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("xr.family_id = ?", familyID).WhereOr("xr.family_id IS NULL")
		}).
		Where("xr.date > ?", start).Where("xr.date <= ?", end).
		OrderExpr("xr.date").
		OrderExpr("CASE WHEN xr.family_id IS NULL THEN 1 ELSE 0 END").
		OrderExpr("CASE WHEN xr.from_currency = ? THEN 0 ELSE 1 END", from).
		Scan(ctx)
	if err != nil {
		return nil, dbErr("rate series", err)
	}
	for _, row := range rows {
		if n := len(rs.days); n > 0 && rs.days[n-1].Date == row.Date {
			continue // the day's first row wins, as in Quote
		}
		q := RateQuote{Rate: row.Rate, Date: row.Date, Source: row.Source}
		if row.FromCurrency != from {
			q.Rate, q.Inverted = row.Rate.Inverse(), true
		}
		rs.days = append(rs.days, q)
	}
	return rs, nil
}
