package models_test

import (
	"context"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestFamilyCurrencyMovesTotals: the family's currency is the one totals
// are reported in; changing it changes the balance sheet's total at read
// time, each account counted at the rate into the new currency.
func TestFamilyCurrencyMovesTotals(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "home-currency")
	euros := fxAccount(t, s, f, "Euro savings", "EUR")
	add := func(acct *models.Account, amount int64, cur string) {
		t.Helper()
		if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: acct.ID, Date: "2026-01-10",
			Amount: -money.Amount(amount), Currency: cur, Name: "pay"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.RecalculateBalance(ctx, f.Family.ID, acct.ID); err != nil {
			t.Fatal(err)
		}
	}
	add(f.Account, 100_0000, "USD")
	add(euros, 50_0000, "EUR")
	setRate(t, s, f, "EUR", "USD", "2026-01-01", "1.25")

	sheet := func() *models.BalanceSheet {
		t.Helper()
		bs, err := s.BalanceSheet(ctx, f.Family.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		return bs
	}
	if bs := sheet(); bs.Currency != "USD" || bs.Assets != 162_5000 || len(bs.Converted) != 1 || bs.Converted[0].Rate.Date != "2026-01-01" {
		t.Fatalf("in USD: %s %d %+v", bs.Currency, bs.Assets, bs.Converted)
	}
	f.Family.Currency = "EUR"
	if err := s.UpdateFamily(ctx, f.Family); err != nil {
		t.Fatal(err)
	}
	if bs := sheet(); bs.Currency != "EUR" || bs.Assets != 130_0000 { // 100 USD at 1/1.25 is 80 EUR, plus 50
		t.Fatalf("in EUR: %s %d %+v", bs.Currency, bs.Assets, bs.Converted)
	}
}
