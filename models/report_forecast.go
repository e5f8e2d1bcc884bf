package models

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"coffer/models/civil"
	"coffer/models/forecast"
	"coffer/models/money"
)

// ForecastDays is how far the dashboard looks ahead, and the API's default.
const ForecastDays = 90

// MaxForecastDays bounds the API's days: a year of a point a day.
const MaxForecastDays = 365

// Forecast is the family's projected balances from today's and its active
// recurring items (see package forecast for what each figure means), in
// the family's currency but for each account's own series.
type Forecast struct {
	Currency string // the family's
	Family   []ForecastPoint
	// Accounts are the active accounts, by name, each with its id, name,
	// type, currency and balance (the other fields are not read).
	Accounts    []AccountForecast
	Lowest      ForecastPoint
	SafeToSpend money.Amount
	NextIncome  *civil.Date // nil: no income in the horizon
	Items       int         // the active recurring items projected
	// LeftOut are the accounts in another currency without any rate to
	// the family's: each keeps its own series, but no family figure
	// counts it (never 1:1). LeftOutItems counts the active items that no
	// figure counts for the same reason (an item without an account in
	// such a currency, or in a currency other than its account's without
	// a rate between them).
	LeftOut      []Account
	LeftOutItems int
}

// ForecastPoint is a projected balance at the end of a day.
type ForecastPoint struct {
	Date    civil.Date
	Balance money.Amount
}

// AccountForecast is one account's projected balances, in its currency
// and signed as the balance sheet signs it (a debt positive).
type AccountForecast struct {
	Account Account
	Points  []ForecastPoint
}

// Forecast projects the family's active accounts from today to today
// plus days (0..MaxForecastDays) with its active recurring items only:
// suggested, paused and ended ones are not counted. A foreign account
// and a foreign item count in the family's figures at today's rate (or
// the latest before it), as the balance sheet counts an account.
func (s *Store) Forecast(ctx context.Context, familyID uuid.UUID, days int) (*Forecast, error) {
	if days < 0 || days > MaxForecastDays {
		return nil, Invalid("Days must be between 0 and 365")
	}
	fam, err := s.Family(ctx, familyID)
	if err != nil {
		return nil, err
	}
	// Only the columns the forecast reads: the dashboard asks for it on
	// every view, and scanning whole rows was most of its cost.
	var accts []Account
	if err := s.db.NewSelect().Model(&accts).Column("id", "name", "account_type", "currency", "balance").
		Where("a.family_id = ?", familyID).Where("a.status = ?", AccountActive).
		OrderExpr("lower(a.name), a.id").Scan(ctx); err != nil {
		return nil, dbErr("forecast accounts", err)
	}
	var items []RecurringTransaction
	if err := s.db.NewSelect().Model(&items).Column("account_id", "amount", "currency", "cadence", "expected_day_of_month", "next_expected_date").
		Where("rt.family_id = ?", familyID).Where("rt.status = ?", RecurringActive).
		OrderExpr("rt.next_expected_date, rt.id").Scan(ctx); err != nil {
		return nil, dbErr("forecast recurring transactions", err)
	}
	now := s.now()
	today := civil.DateOf(now)
	f := &Forecast{Currency: fam.Currency}
	conv := converter{s: s, familyID: familyID, today: today, rates: map[[2]string]*RateQuote{}}

	in := make([]forecast.Account, len(accts))
	currency := make(map[uuid.UUID]string, len(accts))
	for i, a := range accts {
		currency[a.ID] = a.Currency
		fa := forecast.Account{ID: a.ID, Liability: Liability(a.AccountType), Spendable: a.AccountType == "depository", Balance: int64(a.Balance)}
		v, ok, err := conv.convert(ctx, a.Balance, a.Currency, fam.Currency)
		if err != nil {
			return nil, err
		}
		fa.Value, fa.Counted = int64(v), ok
		if !ok {
			f.LeftOut = append(f.LeftOut, a)
		}
		in[i] = fa
	}
	var its []forecast.Item
	for _, r := range items {
		it := forecast.Item{AccountID: r.AccountID, Amount: int64(r.Amount), Cadence: r.Cadence, Day: r.ExpectedDay, Next: r.NextDate.Time()}
		if r.AccountID != nil {
			cur, ok := currency[*r.AccountID]
			if !ok {
				continue // on an account that is not active: nothing to move
			}
			a, ok, err := conv.convert(ctx, r.Amount, r.Currency, cur)
			if err != nil {
				return nil, err
			}
			if !ok {
				f.LeftOutItems++
				continue
			}
			it.Amount = int64(a)
		}
		v, ok, err := conv.convert(ctx, r.Amount, r.Currency, fam.Currency)
		if err != nil {
			return nil, err
		}
		it.Value, it.Counted = int64(v), ok
		if !ok && r.AccountID == nil {
			f.LeftOutItems++
		}
		its = append(its, it)
	}
	f.Items = len(its)

	res := forecast.Project(today.Time(), days, in, its)
	dates := make([]civil.Date, days+1) // shared by every series
	for i := range dates {
		dates[i] = civil.DateOf(today.Time().AddDate(0, 0, i))
	}
	points := func(ps []forecast.Point) []ForecastPoint {
		out := make([]ForecastPoint, len(ps))
		for i, p := range ps {
			out[i] = ForecastPoint{Date: dates[i], Balance: money.Amount(p.Balance)}
		}
		return out
	}
	f.Family = points(res.Family)
	f.Lowest = ForecastPoint{Date: dates[int(res.Lowest.Date.Sub(today.Time()).Hours()/24)], Balance: money.Amount(res.Lowest.Balance)}
	f.SafeToSpend = money.Amount(res.SafeToSpend)
	if res.NextIncome != nil {
		d := civil.DateOf(*res.NextIncome)
		f.NextIncome = &d
	}
	f.Accounts = make([]AccountForecast, len(accts))
	for i, a := range accts {
		f.Accounts[i] = AccountForecast{Account: a, Points: points(res.Accounts[i].Points)}
	}
	return f, nil
}

// converter converts amounts at one day's rates, reading each pair once.
type converter struct {
	s        *Store
	familyID uuid.UUID
	today    civil.Date
	rates    map[[2]string]*RateQuote // nil: no rate
}

// convert is a in from converted to to at today's rate; ok is false when
// there is none, or the result is past what an Amount holds.
func (c *converter) convert(ctx context.Context, a money.Amount, from, to string) (money.Amount, bool, error) {
	from, to = strings.ToUpper(from), strings.ToUpper(to)
	if from == to {
		return a, true, nil
	}
	k := [2]string{from, to}
	q, seen := c.rates[k]
	if !seen {
		quote, ok, err := c.s.Quote(ctx, c.familyID, from, to, c.today)
		if err != nil {
			return 0, false, err
		}
		if ok {
			q = &quote
		}
		c.rates[k] = q
	}
	if q == nil {
		return 0, false, nil
	}
	v, err := money.Convert(a, q.Rate)
	if err != nil {
		return 0, false, nil
	}
	return v, true, nil
}
