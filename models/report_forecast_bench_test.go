package models_test

import (
	"context"
	"fmt"
	"testing"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// BenchmarkForecast is the dashboard's and the API's forecast of a family
// with 50 active recurring items (issue 29: under 50 ms) on four
// accounts, one of them in euros, some items without an account.
func BenchmarkForecast(b *testing.B) {
	ctx := context.Background()
	s := modelstest.NewStore(b)
	f := modelstest.NewFamily(b, s, "bench")
	fam := f.Family.ID
	accts := []*models.Account{f.Account}
	for _, x := range []struct{ name, typ, cur string }{{"Card", "credit_card", "USD"}, {"Savings", "depository", "USD"}, {"Euro", "depository", "EUR"}} {
		a := &models.Account{FamilyID: fam, Name: x.name, AccountType: x.typ, Currency: x.cur}
		must(b, s.CreateAccount(ctx, a))
		accts = append(accts, a)
	}
	_, err := s.SetRate(ctx, fam, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: "2026-01-01", Rate: rateOf(b, "1.08")})
	must(b, err)
	cadences := []string{"weekly", "biweekly", "monthly", "monthly", "quarterly", "yearly"}
	today := s.Now().UTC()
	for i := range 50 {
		a := accts[i%len(accts)]
		r := &models.RecurringTransaction{FamilyID: fam, AccountID: &a.ID, Name: fmt.Sprintf("Item %d", i),
			Amount: money.Amount((i%7 + 1) * 250_000), Currency: a.Currency, Cadence: cadences[i%len(cadences)],
			ExpectedDay: i%31 + 1, NextDate: civil.DateOf(today.AddDate(0, 0, i%40)), Status: models.RecurringActive, Manual: true}
		if i%6 == 0 {
			r.Amount = -r.Amount * 8 // income
		}
		if i%10 == 0 {
			r.AccountID, r.Currency = nil, "USD"
		}
		must(b, s.CreateRecurringTransaction(ctx, r))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Forecast(ctx, fam, models.ForecastDays); err != nil {
			b.Fatal(err)
		}
	}
}
