package api_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"coffer/models"
	"coffer/models/money"
)

// TestBalanceOverflowIsShown: two transactions of 900 trillion made the
// balance job fail for ever while the account showed a stale balance.
// Such amounts are refused now; older rows like them leave the account
// saying, in the API and on the screens, that its balance is out of date.
func TestBalanceOverflowIsShown(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	acct := e.alpha.Account
	for range 2 {
		if _, _, err := e.store.CreateTransaction(ctx, &models.Transaction{FamilyID: acct.FamilyID, AccountID: acct.ID,
			Date: "2024-01-01", Amount: 900_000_000_000_000 * money.AmountScale, Currency: "USD", Name: "typo"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.RecalculateBalance(ctx, acct.FamilyID, acct.ID); !errors.Is(err, models.ErrBalanceOverflow) {
		t.Fatalf("recalculate: %v, want ErrBalanceOverflow", err)
	}

	m := e.do("GET", "/api/v1/accounts/"+acct.ID.String(), e.alpha.Key, nil).json(t)
	if m["balance_error"] != models.BalanceOverflow || m["balance"] != "$0.00" {
		t.Fatalf("account: balance %v, balance_error %v", m["balance"], m["balance_error"])
	}
	if m := e.do("GET", "/api/v1/accounts/"+e.beta.Account.ID.String(), e.beta.Key, nil).json(t); m["balance_error"] != nil {
		t.Fatalf("a current balance has balance_error %v", m["balance_error"])
	}

	b := signedInBrowser(t, e)
	if r := b.get("/accounts/" + acct.ID.String()); !strings.Contains(string(r.body), "This balance is out of date") {
		t.Fatalf("account page: %d, no notice", r.status)
	}
	if r := b.get("/accounts"); !strings.Contains(string(r.body), "(out of date)") {
		t.Fatalf("accounts page: %d, no notice", r.status)
	}
	b.get("/transactions/new")
	r := b.post("/transactions", url.Values{"account_id": {acct.ID.String()}, "date": {"2024-01-02"}, "type": {"expense"},
		"amount": {"900000000000000"}, "name": {"typo"}})
	if r.status != 422 || !strings.Contains(string(r.body), "12 digits before the point") {
		t.Fatalf("screen form: %d", r.status)
	}
}
