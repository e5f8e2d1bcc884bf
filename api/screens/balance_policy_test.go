package screens_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/money"
)

// TestBalancePolicyScreens: a screen's form (a transaction added, a
// transfer made, a transaction deleted) hands the accounts it changed to
// the one balance policy, which settles them before the redirect (the
// next page shows the new balance) and queues nothing. A screen that
// recomputed by itself, or skipped the policy, would leave the count where
// it was.
func TestBalancePolicyScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	b := apitest.SignedInBrowser(t, e)
	savings := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := e.Store.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	acct := e.Alpha.Account.ID
	form := func(name, path string, values url.Values, settled int64, want map[uuid.UUID]money.Amount) {
		t.Helper()
		q0, s0 := e.Balances.Counts()
		if r := b.Post(path, values); r.Status != 303 {
			t.Fatalf("%s: %d %s", name, r.Status, r.Body)
		}
		q1, s1 := e.Balances.Counts()
		if q1 != q0 || s1-s0 != settled {
			t.Errorf("%s: the policy queued %d and settled %d balances, want %d settled", name, q1-q0, s1-s0, settled)
		}
		if n := e.RunBalanceTasks(t); n != 0 {
			t.Errorf("%s: %d balance tasks queued", name, n)
		}
		for id, w := range want {
			if got := e.Balance(t, fam, id); got != w {
				t.Errorf("%s: balance %s, want %s", name, got, w)
			}
		}
	}
	form("add a transaction", "/transactions", url.Values{"account_id": {acct.String()}, "date": {"2026-01-05"}, "type": {"expense"},
		"amount": {"42.50"}, "name": {"Groceries"}}, 1, map[uuid.UUID]money.Amount{acct: -42_5000})
	form("make a transfer", "/transfers", url.Values{"from_account_id": {acct.String()}, "to_account_id": {savings.ID.String()},
		"date": {"2026-01-06"}, "amount": {"100"}}, 2, map[uuid.UUID]money.Amount{acct: -142_5000, savings.ID: 100_0000})
	ts, _, err := e.Store.Transactions(ctx, fam, models.TransactionFilter{AccountIDs: []uuid.UUID{acct}}, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	var groceries string
	for _, tx := range ts {
		if tx.Name == "Groceries" {
			groceries = tx.ID.String()
		}
	}
	form("delete a transaction", "/transactions/"+groceries+"/delete", url.Values{}, 1, map[uuid.UUID]money.Amount{acct: -100_0000})
}
