package rest_test

import (
	"context"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
)

func TestForecast(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	card, _ := seedReports(t, e) // checking 2,919.50; the card owes 120.00
	yen := &models.Account{FamilyID: fam, Name: "Yen", AccountType: "depository", Currency: "JPY", OpeningBalance: 5000_0000}
	if err := e.Store.CreateAccount(ctx, yen); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC()
	on := func(days int) civil.Date { return civil.DateOf(today.AddDate(0, 0, days)) }
	for _, r := range []*models.RecurringTransaction{
		{AccountID: &e.Alpha.Account.ID, Name: "Rent", Amount: 1500_0000, Cadence: "monthly", NextDate: on(2)},
		{AccountID: &e.Alpha.Account.ID, Name: "Pay", Amount: -2000_0000, Cadence: "monthly", NextDate: on(10)},
		{AccountID: &card.ID, Name: "Music", Amount: 10_0000, Cadence: "monthly", NextDate: on(1)},
		{Name: "Suggested", Amount: 999_0000, Cadence: "weekly", NextDate: on(1), Status: models.RecurringSuggested},
	} {
		r.FamilyID, r.Currency, r.Manual, r.ExpectedDay = fam, "USD", true, r.NextDate.Time().Day()
		if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	r := e.Do("GET", "/api/v1/forecast", e.Alpha.ReadKey, nil)
	f := r.WantJSON(t, 200)
	family := f["family"].([]any)
	if f["currency"] != "USD" || f["days"] != 90.0 || len(family) != 91 {
		t.Fatalf("forecast %s", r.Body)
	}
	first := family[0].(map[string]any)
	if first["date"] != string(on(0)) || first["balance"] != "$2,799.50" || first["balance_cents"] != 279950.0 {
		t.Errorf("today %v", first)
	}
	if got := family[2].(map[string]any)["balance_cents"]; got != 279950.0-1000-150000 {
		t.Errorf("after the rent %v", got)
	}
	safe := f["safe_to_spend"].(map[string]any)
	if safe["until"] != string(on(10)) || safe["amount"].(map[string]any)["amount"] != "1419.50" {
		t.Errorf("safe to spend %v", safe)
	}
	low := f["lowest"].(map[string]any)
	if low["amount"].(map[string]any)["currency"] != "USD" || low["date"] == "" {
		t.Errorf("lowest %v", low)
	}
	left := f["left_out"].(map[string]any)["accounts"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["name"] != "Yen" {
		t.Errorf("left out %v", f["left_out"])
	}
	if accts := f["accounts"].([]any); len(accts) != 3 {
		t.Errorf("%d accounts", len(accts))
	}

	r = e.Do("GET", "/api/v1/forecast?days=7&account_id="+card.ID.String(), e.Alpha.Key, nil)
	f = r.WantJSON(t, 200)
	accts := f["accounts"].([]any)
	if len(f["family"].([]any)) != 8 || len(accts) != 1 {
		t.Fatalf("one account, a week: %s", r.Body)
	}
	pts := accts[0].(map[string]any)["balances"].([]any)
	if pts[0].(map[string]any)["balance"] != "$120.00" || pts[1].(map[string]any)["balance"] != "$130.00" {
		t.Errorf("the card owes more after the music: %v", pts[:2])
	}

	for _, bad := range []string{"days=0", "days=366", "days=ten", "days=1.5", "account_id=nope"} {
		apitest.WantError(t, e.Do("GET", "/api/v1/forecast?"+bad, e.Alpha.Key, nil), 400, "bad_request")
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/forecast?account_id="+card.ID.String(), e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/forecast", "", nil), 401, "unauthorized")
	other := e.Do("GET", "/api/v1/forecast", e.Beta.Key, nil).WantJSON(t, 200)
	if len(other["accounts"].([]any)) != 1 || other["safe_to_spend"].(map[string]any)["until"] != nil {
		t.Errorf("beta sees %v", other)
	}
}
