package screens_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// reconcileLedger gives alpha's checking account an opening balance of
// 1,000.00 and three January rows: pay of 500.00 in, groceries of 120.00
// and coffee beans of 30.00 out.
func reconcileLedger(t *testing.T, e *apitest.Env) (pay, groceries, coffee *models.Transaction) {
	t.Helper()
	ctx, a := t.Context(), e.Alpha.Account
	a.OpeningBalance = 1000_0000
	if err := e.Store.UpdateAccount(ctx, a, "opening_balance"); err != nil {
		t.Fatal(err)
	}
	add := func(date civil.Date, amount money.Amount, name string) *models.Transaction {
		tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: a.ID, Date: date, Amount: amount, Currency: "USD", Name: name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	return add("2026-01-05", -500_0000, "Pay"), add("2026-01-10", 120_0000, "Groceries"), add("2026-01-20", 30_0000, "Coffee beans")
}

// TestReconcileScreens walks a reconciliation on the screens: a bad
// statement keeps what was typed; ticks that leave a difference are saved
// but the finish is refused saying by how much; ticks that make it zero
// finish, lock the rows and list the reconciliation on the account page.
// A locked row refuses the edit and delete screens until it is unlocked.
// Another family's account and rows are refused.
func TestReconcileScreens(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	pay, groceries, coffee := reconcileLedger(t, e)
	acct := "/accounts/" + e.Alpha.Account.ID.String()
	all := []string{pay.ID.String(), groceries.ID.String(), coffee.ID.String()}

	if r := b.Get(acct); r.Status != 200 || !strings.Contains(string(r.Body), "Not reconciled yet") {
		t.Fatalf("account page: %d", r.Status)
	}
	r := b.Get(acct + "/reconcile")
	if r.Status != 200 || !strings.Contains(string(r.Body), "Start reconciling") {
		t.Fatalf("reconcile: %d %s", r.Status, r.Body)
	}
	r = b.Post(acct+"/reconcile", url.Values{"date": {"2026-02-30"}, "balance": {"13,80.0x"}, "sign": {"positive"}})
	body := string(r.Body)
	if r.Status != 422 || !strings.Contains(body, "must be a date") || !strings.Contains(body, "positive amount") ||
		!strings.Contains(body, `value="13,80.0x"`) || !strings.Contains(body, `value="2026-02-30"`) {
		t.Fatalf("bad statement: %d %s", r.Status, body)
	}
	if r := b.Post(acct+"/reconcile", url.Values{"date": {"2026-01-31"}, "balance": {"1,380.00"}, "sign": {"positive"}}); r.Status != 303 {
		t.Fatalf("statement: %d %s", r.Status, r.Body)
	}
	r = b.Get(acct + "/reconcile")
	body = string(r.Body)
	for _, want := range []string{"Pay", "Groceries", "Coffee beans", "Cleared balance", "$1,000.00", `data-effect="-1200000"`, "Finish reconciling"} {
		if !strings.Contains(body, want) {
			t.Fatalf("reconcile screen lacks %q: %s", want, body)
		}
	}

	// Pay and coffee: 1000 + 500 - 30 = 1470, not 1380: saved, not finished.
	r = b.Post(acct+"/reconcile/rows", url.Values{"shown": all, "cleared": {all[0], all[2]}, "finish": {"1"}})
	body = string(r.Body)
	if r.Status != 422 || !strings.Contains(body, "$90.00 apart") || !strings.Contains(body, "$1,470.00") {
		t.Fatalf("finish with a difference: %d %s", r.Status, body)
	}
	if tx := apitest.Stored(t, e, coffee.ID); !tx.Cleared || tx.Reconciled() {
		t.Fatalf("coffee after a refused finish: cleared %v reconciled %v", tx.Cleared, tx.Reconciled())
	}
	// Another family's row in the form is refused, and nothing is ticked.
	b.Get(acct + "/reconcile")
	r = b.Post(acct+"/reconcile/rows", url.Values{"shown": all, "cleared": {all[0], all[1], e.Beta.Account.ID.String()}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "not transactions of this account") {
		t.Fatalf("foreign row: %d %s", r.Status, r.Body)
	}
	// Another family's account is a 404, on every door.
	beta := "/accounts/" + e.Beta.Account.ID.String()
	for _, path := range []string{beta + "/reconcile"} {
		if r := b.Get(path); r.Status != 404 {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
	}
	for _, path := range []string{beta + "/reconcile", beta + "/reconcile/rows", beta + "/reconcile/cancel"} {
		b.Get(acct + "/reconcile")
		if r := b.Post(path, url.Values{"date": {"2026-01-31"}, "balance": {"1"}, "sign": {"positive"}, "cleared": all}); r.Status != 404 {
			t.Fatalf("POST %s: %d", path, r.Status)
		}
	}

	// Pay and groceries: 1380, the statement's. Finished and locked.
	b.Get(acct + "/reconcile")
	r = b.Post(acct+"/reconcile/rows", url.Values{"shown": all, "cleared": {all[0], all[1]}, "finish": {"1"}})
	if r.Status != 303 || r.Header.Get("Location") != acct {
		t.Fatalf("finish: %d %s", r.Status, r.Body)
	}
	for tx, locked := range map[*models.Transaction]bool{pay: true, groceries: true, coffee: false} {
		if got := apitest.Stored(t, e, tx.ID); got.Reconciled() != locked {
			t.Fatalf("%s reconciled = %v, want %v", tx.Name, got.Reconciled(), locked)
		}
	}
	body = string(b.Get(acct).Body)
	if !strings.Contains(body, "Finished") || !strings.Contains(body, "2026-01-31") || !strings.Contains(body, "$1,380.00") ||
		!strings.Contains(body, e.Alpha.User.Email) || !strings.Contains(body, `<span class="tag">reconciled</span>`) {
		t.Fatalf("account page after the finish: %s", body)
	}

	// The locked row: the edit screen says so and refuses; delete too.
	edit := "/transactions/" + all[1] + "/edit"
	r = b.Get(edit)
	if !strings.Contains(string(r.Body), "Unlock this transaction") {
		t.Fatalf("edit screen of a locked row: %s", r.Body)
	}
	updated := string(regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(r.Body)[1])
	form := url.Values{"account_id": {e.Alpha.Account.ID.String()}, "date": {"2026-01-10"}, "type": {"expense"},
		"amount": {"125.00"}, "name": {"Groceries"}, "updated": {updated}}
	r = b.Post("/transactions/"+all[1], form)
	if r.Status != 422 || !strings.Contains(string(r.Body), "Transaction is reconciled; unlock it first") {
		t.Fatalf("edit of a locked row: %d %s", r.Status, r.Body)
	}
	b.Get("/transactions/" + all[1] + "/delete")
	if r := b.Post("/transactions/"+all[1]+"/delete", nil); r.Status != 303 {
		t.Fatalf("delete of a locked row: %d", r.Status)
	}
	if got := apitest.Stored(t, e, groceries.ID); got.Amount != 120_0000 {
		t.Fatalf("locked row changed: %v", got.Amount)
	}
	// Another family cannot unlock it.
	other := e.Browser(t)
	apitest.SetPassword(t, e, e.Beta.User, "correct horse battery")
	other.Login(e.Beta.User.Email, "correct horse battery")
	other.Get("/accounts")
	if r := other.Post("/transactions/"+all[1]+"/unlock", nil); r.Status != 404 {
		t.Fatalf("unlock by another family: %d", r.Status)
	}
	// Unlock, then the edit goes through.
	b.Get(edit)
	if r := b.Post("/transactions/"+all[1]+"/unlock", nil); r.Status != 303 {
		t.Fatalf("unlock: %d %s", r.Status, r.Body)
	}
	r = b.Get(edit)
	form.Set("updated", string(regexp.MustCompile(`name="updated" value="([^"]+)"`).FindSubmatch(r.Body)[1]))
	if r := b.Post("/transactions/"+all[1], form); r.Status != 303 {
		t.Fatalf("edit after unlock: %d %s", r.Status, r.Body)
	}
	if got := apitest.Stored(t, e, groceries.ID); got.Amount != 125_0000 || got.Reconciled() || !got.Cleared {
		t.Fatalf("after unlock and edit: %+v", got)
	}
}

// TestReconcileLiability: a card's statement is what is owed, and the
// other side of zero is a balance in the holder's favour, stored negative.
func TestReconcileLiability(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	card := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Visa", AccountType: "credit_card", Currency: "USD"}
	if err := e.Store.CreateAccount(t.Context(), card); err != nil {
		t.Fatal(err)
	}
	path := "/accounts/" + card.ID.String() + "/reconcile"
	if body := string(b.Get(path).Body); !strings.Contains(body, "Owed (what you owe)") || !strings.Contains(body, "In your favour") {
		t.Fatalf("card statement form: %s", body)
	}
	if r := b.Post(path, url.Values{"date": {"2026-01-31"}, "balance": {"45.10"}, "sign": {"negative"}}); r.Status != 303 {
		t.Fatalf("statement: %d %s", r.Status, r.Body)
	}
	open, err := e.Store.OpenReconciliation(t.Context(), e.Alpha.Family.ID, card.ID)
	if err != nil || open.StatementBalance != -45_1000 {
		t.Fatalf("open: %+v %v", open, err)
	}
	body := string(b.Get(path).Body)
	if !strings.Contains(body, `value="45.10"`) || !strings.Contains(body, `id="sign-negative" checked`) || !strings.Contains(body, "No rows left to tick") {
		t.Fatalf("reconcile screen of the card: %s", body)
	}
	// Nothing to tick and a difference of 45.10: the finish is refused;
	// cancelled, the account has no reconciliation left.
	if r := b.Post("/accounts/"+card.ID.String()+"/reconcile/rows", url.Values{"finish": {"1"}}); r.Status != 422 || !strings.Contains(string(r.Body), "$45.10 apart") {
		t.Fatalf("finish: %d %s", r.Status, r.Body)
	}
	b.Get(path)
	if r := b.Post("/accounts/"+card.ID.String()+"/reconcile/cancel", nil); r.Status != 303 {
		t.Fatalf("cancel: %d", r.Status)
	}
	if _, n, err := e.Store.Reconciliations(t.Context(), e.Alpha.Family.ID, card.ID, models.Page{Number: 1, Size: 5}); err != nil || n != 0 {
		t.Fatalf("after cancel: %d, %v", n, err)
	}
}
