package e2e_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/money"
)

// TestBalanceOverflowIsShown: two transactions of 900 trillion made the
// balance job fail for ever while the account showed a stale balance.
// Such amounts are refused now; older rows like them leave the account
// saying, in the API and on the screens, that its balance is out of date.
func TestBalanceOverflowIsShown(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := t.Context()
	acct := e.Alpha.Account
	for range 2 {
		if _, _, err := e.Store.CreateTransaction(ctx, &models.Transaction{FamilyID: acct.FamilyID, AccountID: acct.ID,
			Date: "2024-01-01", Amount: 900_000_000_000_000 * money.AmountScale, Currency: "USD", Name: "typo"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.RefreshBalance(ctx, acct.FamilyID, acct.ID); err != nil && !errors.Is(err, models.ErrBalanceOverflow) {
			t.Fatal(err) // as the queue does after each write
		}
	}
	if err := e.Store.RecalculateBalance(ctx, acct.FamilyID, acct.ID); !errors.Is(err, models.ErrBalanceOverflow) {
		t.Fatalf("recalculate: %v, want ErrBalanceOverflow", err)
	}

	m := e.Do("GET", "/api/v1/accounts/"+acct.ID.String(), e.Alpha.Key, nil).JSON(t)
	// The balance is the last that fit (the first row's, kept by its write).
	if m["balance_error"] != models.BalanceOverflow || m["balance"] != "-$900,000,000,000,000.00" {
		t.Fatalf("account: balance %v, balance_error %v", m["balance"], m["balance_error"])
	}
	if m := e.Do("GET", "/api/v1/accounts/"+e.Beta.Account.ID.String(), e.Beta.Key, nil).JSON(t); m["balance_error"] != nil {
		t.Fatalf("a current balance has balance_error %v", m["balance_error"])
	}

	b := apitest.SignedInBrowser(t, e)
	if r := b.Get("/accounts/" + acct.ID.String()); !strings.Contains(string(r.Body), "This balance is out of date") {
		t.Fatalf("account page: %d, no notice", r.Status)
	}
	if r := b.Get("/accounts"); !strings.Contains(string(r.Body), "(out of date)") {
		t.Fatalf("accounts page: %d, no notice", r.Status)
	}
	b.Get("/transactions/new")
	r := b.Post("/transactions", url.Values{"account_id": {acct.ID.String()}, "date": {"2024-01-02"}, "type": {"expense"},
		"amount": {"900000000000000"}, "name": {"typo"}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "12 digits before the point") {
		t.Fatalf("screen form: %d", r.Status)
	}
}
