package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// forecastFamily is alpha with checking (1,000 USD), a card owing 200 USD,
// euro savings (500 EUR at 1.1), a pound account without any rate, and
// today 1 December 2026.
func forecastFamily(t *testing.T, s *models.Store) (*modelstest.FamilyFixture, map[string]*models.Account) {
	t.Helper()
	ctx := context.Background()
	s.Now = func() time.Time { return time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC) }
	a := modelstest.NewFamily(t, s, "alpha")
	a.Account.OpeningBalance = money.Amount(1000 * 10000)
	if err := s.UpdateAccount(ctx, a.Account, "opening_balance"); err != nil {
		t.Fatal(err)
	}
	accts := map[string]*models.Account{"checking": a.Account}
	for _, x := range []struct{ key, name, typ, cur string }{
		{"card", "Card", "credit_card", "USD"}, {"euro", "Euro savings", "depository", "EUR"}, {"pound", "Pounds", "depository", "GBP"},
	} {
		open := map[string]int64{"card": 200, "euro": 500, "pound": 300}[x.key]
		ac := &models.Account{FamilyID: a.Family.ID, Name: x.name, AccountType: x.typ, Currency: x.cur, OpeningBalance: money.Amount(open * 10000)}
		if err := s.CreateAccount(ctx, ac); err != nil {
			t.Fatal(err)
		}
		accts[x.key] = ac
	}
	if _, err := s.SetRate(ctx, a.Family.ID, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: "2026-11-30", Rate: rateOf(t, "1.1")}); err != nil {
		t.Fatal(err)
	}
	return a, accts
}

func recurring(t *testing.T, s *models.Store, fam uuid.UUID, acct *uuid.UUID, name string, units int64, cur, cadence, next, status string) {
	t.Helper()
	d := civil.Date(next)
	r := &models.RecurringTransaction{FamilyID: fam, AccountID: acct, Name: name, Amount: money.Amount(units * 10000), Currency: cur,
		Cadence: cadence, ExpectedDay: d.Time().Day(), NextDate: d, Status: status, Manual: true}
	if err := s.CreateRecurringTransaction(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func TestForecast(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	a, accts := forecastFamily(t, s)
	beta := modelstest.NewFamily(t, s, "beta")
	fam := a.Family.ID
	recurring(t, s, fam, &accts["checking"].ID, "Rent", 700, "USD", "monthly", "2026-12-03", models.RecurringActive)
	recurring(t, s, fam, &accts["checking"].ID, "Pay", -900, "USD", "monthly", "2026-12-20", models.RecurringActive)
	recurring(t, s, fam, &accts["card"].ID, "Streaming", 20, "USD", "monthly", "2026-12-05", models.RecurringActive)
	recurring(t, s, fam, nil, "Lessons", 10, "EUR", "weekly", "2026-12-02", models.RecurringActive)
	recurring(t, s, fam, &accts["pound"].ID, "Club", 30, "GBP", "monthly", "2026-12-10", models.RecurringActive)
	// Not counted: a suggestion, a paused item, another family's.
	recurring(t, s, fam, &accts["checking"].ID, "Maybe gym", 5000, "USD", "monthly", "2026-12-04", models.RecurringSuggested)
	recurring(t, s, fam, &accts["checking"].ID, "Paused", 5000, "USD", "monthly", "2026-12-04", models.RecurringPaused)
	recurring(t, s, beta.Family.ID, nil, "Theirs", 5000, "USD", "monthly", "2026-12-04", models.RecurringActive)

	f, err := s.Forecast(ctx, fam, models.ForecastDays)
	if err != nil {
		t.Fatal(err)
	}
	usd := func(units float64) money.Amount { return money.Amount(units * 10000) }
	if f.Currency != "USD" || len(f.Family) != 91 || f.Family[0].Date != "2026-12-01" || f.Family[90].Date != "2027-03-01" {
		t.Fatalf("forecast %s, %d points from %s", f.Currency, len(f.Family), f.Family[0].Date)
	}
	// Today: 1,000 − 200 owed + 500 EUR × 1.1; the pounds are left out.
	if f.Family[0].Balance != usd(1350) {
		t.Errorf("today %s, want 1350", f.Family[0].Balance)
	}
	// 2 Dec: the lessons, 10 EUR = 11 USD. 3 Dec: the rent.
	if f.Family[1].Balance != usd(1339) || f.Family[2].Balance != usd(639) {
		t.Errorf("2 and 3 Dec %s %s", f.Family[1].Balance, f.Family[2].Balance)
	}
	if len(f.LeftOut) != 1 || f.LeftOut[0].Name != "Pounds" || f.LeftOutItems != 0 {
		t.Errorf("left out %+v, %d items", f.LeftOut, f.LeftOutItems)
	}
	byName := map[string]models.AccountForecast{}
	for _, af := range f.Accounts {
		byName[af.Account.Name] = af
	}
	if len(f.Accounts) != 4 || byName["Card"].Points[4].Balance != usd(220) || byName["Pounds"].Points[9].Balance != usd(270) ||
		byName["Checking"].Points[19].Balance != usd(1200) || byName["Euro savings"].Points[90].Balance != usd(500) {
		t.Errorf("accounts %+v", f.Accounts)
	}
	// Until pay on 20 December: the rent and three lessons (2, 9, 16 Dec)
	// leave 1,000 + 550 of spendable money; the card's streaming is not cash.
	if f.NextIncome == nil || *f.NextIncome != "2026-12-20" || f.SafeToSpend != usd(1550-700-33) {
		t.Errorf("safe to spend %s until %v", f.SafeToSpend, f.NextIncome)
	}
	if f.Lowest.Balance > f.Family[2].Balance || f.Lowest.Date < "2026-12-03" {
		t.Errorf("lowest %+v", f.Lowest)
	}

	if _, err := s.Forecast(ctx, fam, 366); !errors.As(err, new(*models.InvalidError)) {
		t.Errorf("366 days: %v", err)
	}
	// A family with nothing recurring: flat, all of it safe.
	b, err := s.Forecast(ctx, beta.Family.ID, 0)
	if err != nil || len(b.Family) != 1 || b.NextIncome != nil {
		t.Fatalf("beta %+v %v", b, err)
	}
}
