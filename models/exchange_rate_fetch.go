package models

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"coffer/models/civil"
	"coffer/models/money"
)

// RatesFetch is what the rates service last said about one pair: the days
// it has answered for, and how the last attempt went. It is the
// instance's, like the fetched rates.
type RatesFetch struct {
	bun.BaseModel `bun:"table:exchange_rate_fetches,alias:xf"`

	FromCurrency string     `bun:"from_currency,pk"`
	ToCurrency   string     `bun:"to_currency,pk"`
	CoveredFrom  civil.Date `bun:"covered_from,nullzero"` // "": never answered
	CoveredTo    civil.Date `bun:"covered_to,nullzero"`   // the latest day the service had a rate for
	AttemptedAt  time.Time  `bun:"attempted_at"`
	SucceededAt  *time.Time `bun:"succeeded_at"`
	Error        *string    `bun:"error"` // the last attempt's failure, in words; nil once one succeeds
}

// DayRate is one day's rate of a series.
type DayRate struct {
	Date civil.Date
	Rate money.Rate
}

// RateNeed is a pair some family's accounts need converted, from the
// earliest day any of them needs (its first transaction, else today).
type RateNeed struct {
	FromCurrency string     `bun:"from_currency"`
	ToCurrency   string     `bun:"to_currency"`
	Start        civil.Date `bun:"start_date"`
}

// rateNeedsSQL finds every pair of an account's currency and its family's
// currency that differ, with the earliest day any such account needs: its
// first transaction's, or today (?0) for an account without one. ?1 is
// one family, or NULL for every family.
const rateNeedsSQL = `
SELECT a.currency AS from_currency, f.currency AS to_currency,
       MIN(COALESCE((SELECT MIN(t.date) FROM transactions t
                     WHERE t.family_id = a.family_id AND t.account_id = a.id AND t.deleted_at IS NULL), ?0)) AS start_date
FROM accounts a
JOIN families f ON f.id = a.family_id
WHERE a.currency <> f.currency AND (?1 IS NULL OR a.family_id = ?1)
GROUP BY a.currency, f.currency
ORDER BY a.currency, f.currency`

// RateNeeds lists the pairs the accounts of one family (familyID), or of
// every family (nil), need and from when (never after today).
func (s *Store) RateNeeds(ctx context.Context, familyID *uuid.UUID, today civil.Date) ([]RateNeed, error) {
	var rows []RateNeed
	if err := s.db.NewRaw(rateNeedsSQL, today, familyID).Scan(ctx, &rows); err != nil {
		return nil, dbErr("rate needs", err)
	}
	for i := range rows {
		rows[i].Start = min(rows[i].Start, today)
	}
	return rows, nil
}

// ratesMissingSQL counts (0 or 1) account $2 of family $1 when it is in
// another currency than the family's and its pair was never fetched, or
// it has a transaction before the first day fetched.
const ratesMissingSQL = `
SELECT COUNT(*) AS n FROM accounts a
JOIN families f ON f.id = a.family_id
LEFT JOIN exchange_rate_fetches x ON x.from_currency = a.currency AND x.to_currency = f.currency
WHERE a.family_id = $1 AND a.id = $2 AND a.currency <> f.currency
  AND (x.covered_from IS NULL OR EXISTS (
        SELECT 1 FROM transactions t
        WHERE t.family_id = a.family_id AND t.account_id = a.id AND t.deleted_at IS NULL AND t.date < x.covered_from))`

// RatesMissing reports whether any of the family's accounts needs rates
// that were never fetched: an account in another currency than the
// family's whose pair was never fetched, or with a transaction dated
// before the fetched rates. It runs after every write that moves a
// balance, so it is a prepared statement per account (a write moves one
// or two), as cheap as a primary-key read.
//
// After a lone create (see createdOne) the write's own statement has told
// whether its account is in the family's currency: then nothing is asked.
func (s *Store) RatesMissing(ctx context.Context, familyID uuid.UUID, accountIDs []uuid.UUID) (bool, error) {
	if id, ok := ctx.Value(familyCurrencyKey{}).(uuid.UUID); ok && len(accountIDs) == 1 && accountIDs[0] == id {
		return false, nil
	}
	for _, id := range accountIDs {
		var n []struct {
			N int `bun:"n"`
		}
		if err := s.queryHot(ctx, &n, ratesMissingSQL, familyID, id); err != nil {
			return false, dbErr("rates missing", err)
		}
		if len(n) == 1 && n[0].N > 0 {
			return true, nil
		}
	}
	return false, nil
}

// LatestFetchedRate returns the latest day of a fetched rate of the pair,
// either way round; "" when there is none.
func (s *Store) LatestFetchedRate(ctx context.Context, from, to string) (civil.Date, error) {
	var d []civil.Date
	err := s.db.NewSelect().Model((*ExchangeRate)(nil)).ColumnExpr("xr.date").
		Where("xr.family_id IS NULL").
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("xr.from_currency = ? AND xr.to_currency = ?", from, to).
				WhereOr("xr.from_currency = ? AND xr.to_currency = ?", to, from)
		}).
		OrderExpr("xr.date DESC").Limit(1).Scan(ctx, &d)
	if err != nil || len(d) == 0 {
		return "", dbErr("latest fetched rate", err)
	}
	return d[0], nil
}

// RatesFetchOf returns what the service last said about a pair;
// ErrNotFound when it was never asked.
func (s *Store) RatesFetchOf(ctx context.Context, from, to string) (*RatesFetch, error) {
	f := new(RatesFetch)
	err := s.db.NewSelect().Model(f).Where("xf.from_currency = ?", from).Where("xf.to_currency = ?", to).Scan(ctx)
	return f, dbErr("get rates fetch", err)
}

// SaveFetchedRates stores a series the service answered for the days
// from..to of a pair (replacing the rates of days already stored) and
// marks those days as asked, in one transaction.
func (s *Store) SaveFetchedRates(ctx context.Context, fromCur, toCur string, from, to civil.Date, series []DayRate) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		now := tx.now()
		const batch = 500 // well under SQLite's bound on variables
		for start := 0; start < len(series); start += batch {
			rows := make([]ExchangeRate, 0, batch)
			for _, d := range series[start:min(start+batch, len(series))] {
				rows = append(rows, ExchangeRate{ID: NewID(), FromCurrency: fromCur, ToCurrency: toCur, Date: d.Date,
					Rate: d.Rate, Source: RateFetched, CreatedAt: now, UpdatedAt: now})
				from = min(from, d.Date) // the service may answer with an earlier working day's rate
			}
			if _, err := tx.db.NewInsert().Model(&rows).
				On("CONFLICT (from_currency, to_currency, date) WHERE family_id IS NULL DO UPDATE").
				Set("rate = EXCLUDED.rate").Set("updated_at = EXCLUDED.updated_at").Exec(ctx); err != nil {
				return dbErr("save fetched rates", err)
			}
		}
		f, err := tx.RatesFetchOf(ctx, fromCur, toCur)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		f.FromCurrency, f.ToCurrency = fromCur, toCur
		if f.CoveredFrom == "" || from < f.CoveredFrom {
			f.CoveredFrom = from
		}
		// The latest day with a rate, not the last day asked, so that a
		// rate the service publishes later today is asked for tomorrow;
		// the last day asked only while the service has none at all.
		last := f.CoveredTo
		for _, d := range series {
			last = max(last, d.Date)
		}
		if last == "" {
			last = to
		}
		f.CoveredTo, f.AttemptedAt, f.SucceededAt, f.Error = last, now, &now, nil
		return tx.saveRatesFetch(ctx, f)
	})
}

// RatesFetchFailed records a failed attempt for a pair, in words safe to
// show; the stored rates and the days asked stay as they are.
func (s *Store) RatesFetchFailed(ctx context.Context, fromCur, toCur, reason string) error {
	return s.RunInTx(ctx, func(tx *Store) error {
		f, err := tx.RatesFetchOf(ctx, fromCur, toCur)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		f.FromCurrency, f.ToCurrency, f.AttemptedAt, f.Error = fromCur, toCur, tx.now(), &reason
		return tx.saveRatesFetch(ctx, f)
	})
}

func (s *Store) saveRatesFetch(ctx context.Context, f *RatesFetch) error {
	_, err := s.db.NewInsert().Model(f).
		On("CONFLICT (from_currency, to_currency) DO UPDATE").
		Set("covered_from = EXCLUDED.covered_from").Set("covered_to = EXCLUDED.covered_to").
		Set("attempted_at = EXCLUDED.attempted_at").Set("succeeded_at = EXCLUDED.succeeded_at").
		Set("error = EXCLUDED.error").Exec(ctx)
	return dbErr("save rates fetch", err)
}
