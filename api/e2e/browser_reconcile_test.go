package e2e_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestBrowserReconcile reconciles a checking account against a statement
// in Chromium, at desktop and phone widths: the statement form, ticks
// that the script turns into a difference at once, a finish refused while
// it is not zero, then a finish that locks the rows and lists the
// reconciliation. Each step is saved as a screenshot.
func TestBrowserReconcile(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx, a := t.Context(), e.Alpha.Account
	a.OpeningBalance = 1000_0000
	if err := e.Store.UpdateAccount(ctx, a, "opening_balance"); err != nil {
		t.Fatal(err)
	}
	rows := map[string]*models.Transaction{}
	for _, r := range []struct {
		date   civil.Date
		amount money.Amount
		name   string
	}{{"2026-01-05", -500_0000, "Pay"}, {"2026-01-10", 120_0000, "Groceries"}, {"2026-01-20", 30_0000, "Coffee beans"}, {"2026-02-03", 12_0000, "Bakery"}} {
		tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: a.ID, Date: r.date, Amount: r.amount, Currency: "USD", Name: r.name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		rows[r.name] = tx
	}
	e.RunBalanceTasks(t) // the worker's part: the balances the screens then show
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	box := func(name string) string { return "#cleared-" + rows[name].ID.String() }
	acct := base + "/accounts/" + a.ID.String()

	c := apitest.NewChrome(t)
	c.Run("desktop", chromedp.EmulateViewport(1280, 900))
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("open the account and start", chromedp.Navigate(acct), chromedp.WaitVisible(`#reconciliations`),
		chromedp.Click(`a.button[href$="/reconcile"]`), chromedp.WaitVisible(`#statement-form`))
	c.Shoot("reconcile-01-statement-1280")
	c.Run("enter the statement",
		chromedp.SetValue(`#date`, "2026-01-31"), chromedp.SendKeys(`#balance`, "1,380.00"),
		chromedp.Submit(`#balance`), chromedp.WaitVisible(`#reconcile-table`))
	if got := c.Text(`#difference`); got != "$380.00" {
		t.Fatalf("difference before any tick: %q", got)
	}
	c.Run("tick pay and coffee", chromedp.Click(box("Pay")), chromedp.Click(box("Coffee beans")))
	c.WaitFor(`document.getElementById("difference").textContent`, "-$90.00")
	c.Shoot("reconcile-02-ticked-1280")
	c.Run("finish too early", chromedp.Click(`#finish`), chromedp.WaitVisible(`#reconcile-problem`))
	if got := c.Text(`#reconcile-problem`); got == "" {
		t.Fatal("no reason for the refused finish")
	}
	c.Shoot("reconcile-03-refused-1280")

	c.Run("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(acct+"/reconcile"), chromedp.WaitVisible(`#reconcile-table`))
	c.WaitFor(`document.getElementById("difference").textContent`, "-$90.00")
	c.Shoot("reconcile-04-saved-ticks-390")
	c.Run("tick the groceries, untick the coffee", chromedp.Click(box("Groceries")), chromedp.Click(box("Coffee beans")))
	c.WaitFor(`document.getElementById("difference").textContent`, "$0.00")
	c.WaitFor(`document.getElementById("reconcile-status").textContent`, "The difference is zero: you can finish.")
	c.Shoot("reconcile-05-zero-390")
	c.Run("finish", chromedp.Click(`#finish`), chromedp.WaitVisible(`#reconciliations table`))
	c.Shoot("reconcile-06-account-390")
	c.Run("desktop again", chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(`#reconciliations table`))
	c.Shoot("reconcile-07-account-1280")

	for name, locked := range map[string]bool{"Pay": true, "Groceries": true, "Coffee beans": false, "Bakery": false} {
		if got := apitest.Stored(t, e, rows[name].ID); got.Reconciled() != locked {
			t.Fatalf("%s reconciled = %v, want %v", name, got.Reconciled(), locked)
		}
	}
}
