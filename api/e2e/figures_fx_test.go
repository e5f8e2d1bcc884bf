package e2e_test

import (
	"context"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestFiguresAgreeAcrossCurrencies: a month with rows in EUR and GBP shows
// them in the family's dollars on every surface (the JSON income
// statement, the budget, the cash flow, the dashboard, the assistant's and
// MCP's tools), each row at the rate of its day or of the latest day
// before it (the first of the month may be a weekend: the rate is of two
// days before); a row in JPY, without any rate, is on none of them and the
// dashboard names its currency. The family's own rate changes its figures
// and no other family's. On either database.
func TestFiguresAgreeAcrossCurrencies(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	today := civil.DateOf(time.Now())
	first := civil.Date(string(today[:8]) + "01")
	before := civil.DateOf(first.Time().AddDate(0, 0, -2))
	rate := func(s string) money.Rate {
		r, err := money.ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.Store.SaveFetchedRates(ctx, "EUR", "USD", before, before, []models.DayRate{{Date: before, Rate: rate("1.0823")}}))
	must(e.Store.SaveFetchedRates(ctx, "USD", "GBP", before, before, []models.DayRate{{Date: before, Rate: rate("0.8")}}))
	food := &models.Category{FamilyID: fam, Name: "Food", Color: "#112233", Icon: "utensils", Classification: "expense"}
	must(e.Store.CreateCategory(ctx, food))
	account := func(f *models.Family, cur string) *models.Account {
		a := &models.Account{FamilyID: f.ID, Name: cur + " account", AccountType: "depository", Currency: cur}
		must(e.Store.CreateAccount(ctx, a))
		return a
	}
	add := func(a *models.Account, amount money.Amount, name string, cat *models.Category) {
		row := &models.Transaction{FamilyID: a.FamilyID, AccountID: a.ID, Date: first, Amount: amount, Currency: a.Currency, Name: name}
		if cat != nil {
			row.CategoryID = &cat.ID
		}
		_, _, err := e.Store.CreateTransaction(ctx, row, nil)
		must(err)
	}
	eur, gbp, jpy := account(e.Alpha.Family, "EUR"), account(e.Alpha.Family, "GBP"), account(e.Alpha.Family, "JPY")
	add(e.Alpha.Account, -3_000_0000, "Salary", nil)
	add(eur, 100_0000, "Boulangerie", food) // 108.23
	add(eur, -50_0000, "Refund", nil)       // 54.115 in: $54.12 shown
	add(gbp, 8_0000, "Grocer", food)        // by the inverse of 0.8: 10.00
	add(jpy, 1000_0000, "Konbini", food)    // no rate: left out
	add(account(e.Beta.Family, "EUR"), 100_0000, "Beta's bakery", nil)

	month := string(today[:7])
	got := readFigures(t, e, b, string(first), string(today))
	for k, want := range map[string]string{
		"statement income": "$3,054.12", "statement spending": "$118.23", "statement expense Food": "$118.23",
		"budget spent": "$118.23", "budget Food": "$118.23",
		"cash flow":          month + ",USD,3054.12,118.23,2935.89",
		"dashboard Spending": "$118.23",
		"assistant income":   "$3,054.12", "assistant expense": "$118.23", "assistant expense Food": "$118.23",
		"assistant list income": "$3,054.12", "assistant list expenses": "$118.23",
		"dashboard left out": "Not counted in these figures: 1 transaction in JPY, since there is no exchange rate on or before their day.",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	beta := func() any {
		return e.Do("GET", "/api/v1/income_statement?start_date="+string(first)+"&end_date="+string(today), e.Beta.ReadKey, nil).WantJSON(t, 200)["spending"]
	}
	if s := beta(); s != "$108.23" {
		t.Errorf("beta's spending %v", s)
	}

	// Alpha's own rate of the day before the first: its figures move, no
	// one else's.
	_, err := e.Store.SetRate(ctx, fam, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD",
		Date: civil.DateOf(first.Time().AddDate(0, 0, -1)), Rate: rate("2")})
	must(err)
	got = readFigures(t, e, b, string(first), string(today))
	for k, want := range map[string]string{
		"statement income": "$3,100.00", "statement spending": "$210.00", "budget spent": "$210.00",
		"cash flow": month + ",USD,3100.00,210.00,2890.00", "dashboard Spending": "$210.00",
		"assistant expense Food": "$210.00", "assistant list expenses": "$210.00",
	} {
		if got[k] != want {
			t.Errorf("with its own rate, %s: %q, want %q", k, got[k], want)
		}
	}
	if s := beta(); s != "$108.23" {
		t.Errorf("beta's spending with alpha's own rate %v", s)
	}
}
