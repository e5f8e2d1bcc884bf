package screens_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// euroAccount gives family alpha a savings account in EUR and a rate of
// 1 EUR = 1.25 USD from 2026-01-01.
func euroAccount(t *testing.T, e *apitest.Env) *models.Account {
	t.Helper()
	ctx := context.Background()
	a := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	rate, _ := money.ParseRate("1.25")
	if _, err := e.Store.SetRate(ctx, e.Alpha.Family.ID, &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD",
		Date: civil.Date("2026-01-01"), Rate: rate}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestTransferFormTwoCurrencies posts the plain transfer form, as a
// browser without scripts does: between accounts of two currencies the
// received amount is required and named with the destination's currency;
// with it both amounts are kept and the lists show the rate.
func TestTransferFormTwoCurrencies(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	euros := euroAccount(t, e)
	page := b.Get("/transfers/new")
	for _, want := range []string{`name="to_amount"`, `<label for="to_amount">`, `data-currency="EUR"`} {
		if !strings.Contains(string(page.Body), want) {
			t.Fatalf("form without %s", want)
		}
	}
	form := func(toAmount string) url.Values {
		return url.Values{"from_account_id": {e.Alpha.Account.ID.String()}, "to_account_id": {euros.ID.String()},
			"amount": {"100"}, "to_amount": {toAmount}, "date": {"2026-03-02"}, "name": {"Move to euros"}}
	}
	for _, bad := range []string{"", "0", "abc"} {
		r := b.Post("/transfers", form(bad))
		body := string(r.Body)
		if r.Status != 422 || !strings.Contains(body, `id="to_amount"`) || !strings.Contains(body, "Amount received") ||
			!strings.Contains(body, "in EUR") || !strings.Contains(body, `aria-invalid="true"`) {
			t.Fatalf("to_amount %q: %d %s", bad, r.Status, body)
		}
	}
	if r := b.Post("/transfers", form("80")); r.Status != 303 {
		t.Fatalf("post: %d %s", r.Status, r.Body)
	}
	trs, _, err := e.Store.Transfers(context.Background(), e.Alpha.Family.ID, models.Page{Number: 1, Size: 10})
	if err != nil || len(trs) != 1 || trs[0].Inflow.Amount != -80_0000 || trs[0].Inflow.Currency != "EUR" || trs[0].Outflow.Amount != 100_0000 {
		t.Fatalf("stored: %+v %v", trs, err)
	}
	list := string(b.Get("/transactions").Body)
	if !strings.Contains(list, `<span class="cur">EUR</span>`) || !strings.Contains(list, "1 USD = 0.8 EUR") {
		t.Fatalf("list without the euro amount's currency or the rate: %s", list)
	}
	reg := string(b.Get("/accounts/" + euros.ID.String()).Body)
	if !strings.Contains(reg, "sent $100.00 · 1 USD = 0.8 EUR") || !strings.Contains(reg, `id="converted-balance"`) ||
		!strings.Contains(reg, "(rate of 2026-01-01)") {
		t.Fatalf("register: %s", reg)
	}
	edit := string(b.Get("/transactions/" + trs[0].InflowTransactionID.String() + "/edit").Body)
	if !strings.Contains(edit, `id="transfer-fx"`) || !strings.Contains(edit, "1 USD = 0.8 EUR") {
		t.Fatalf("transaction page: %s", edit)
	}

	// Within one currency the form keeps its one amount.
	savings := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := e.Store.CreateAccount(context.Background(), savings); err != nil {
		t.Fatal(err)
	}
	b.Get("/transfers/new")
	if r := b.Post("/transfers", url.Values{"from_account_id": {e.Alpha.Account.ID.String()}, "to_account_id": {savings.ID.String()},
		"amount": {"20"}, "date": {"2026-03-02"}}); r.Status != 303 {
		t.Fatalf("same currency: %d %s", r.Status, r.Body)
	}

	// The account form picks its currency from the ISO list.
	acct := string(b.Get("/accounts/new").Body)
	if !strings.Contains(acct, `<select id="currency" name="currency"`) || !strings.Contains(acct, `<option value="JPY">JPY (¥)</option>`) {
		t.Fatalf("account form: %s", acct)
	}
}

// TestBrowserTransferTwoCurrencies opens the transfer form and the
// register of an account in another currency in Chromium at phone and
// desktop widths: the received amount shows only for two currencies,
// named with the destination's, and neither page scrolls sideways.
func TestBrowserTransferTwoCurrencies(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	euros := euroAccount(t, e)
	if _, err := e.Store.CreateTransfer(context.Background(), e.Alpha.Family.ID, models.NewTransfer{FromAccountID: e.Alpha.Account.ID,
		ToAccountID: euros.ID, Amount: 250_0000, ToAmount: 198_4000, Date: "2026-03-02"}); err != nil {
		t.Fatal(err)
	}
	e.RunBalanceTasks(t)
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	for _, size := range []struct {
		name          string
		width, height int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		c.Run("transfer form at "+size.name,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(base+"/transfers/new"),
			chromedp.WaitVisible(chromedp.ID("to_amount")),
			chromedp.SetValue(chromedp.ID("from_account_id"), e.Alpha.Account.ID.String()),
			chromedp.SetValue(chromedp.ID("to_account_id"), euros.ID.String()),
			chromedp.SetValue(chromedp.ID("amount"), "100"),
			chromedp.SetValue(chromedp.ID("to_amount"), "79.50"),
		)
		changed(c)
		if got := c.Text(`label[for="to_amount"]`); got != "Amount received in EUR" {
			t.Fatalf("%s: received label %q", size.name, got)
		}
		if got := c.Text(`label[for="amount"]`); got != "Amount sent in USD" {
			t.Fatalf("%s: sent label %q", size.name, got)
		}
		wide, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the transfer form scrolls sideways (%v)", size.name, err)
		}
		c.Shoot(fmt.Sprintf("transfer_fx_form_%s", size.name))
		c.Run("register at "+size.name,
			chromedp.Navigate(base+"/accounts/"+euros.ID.String()),
			chromedp.WaitVisible(chromedp.ID("converted-balance")),
		)
		if got := c.Text("#converted-balance"); !strings.Contains(got, "(rate of 2026-01-01)") {
			t.Fatalf("%s: converted balance %q", size.name, got)
		}
		wide, err = chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the register scrolls sideways (%v)", size.name, err)
		}
		c.Shoot(fmt.Sprintf("transfer_fx_register_%s", size.name))
		c.Run("transactions at "+size.name,
			chromedp.Navigate(base+"/transactions"),
			chromedp.WaitVisible(`span.fx`),
		)
		wide, err = chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > innerWidth`))
		if err != nil || wide {
			t.Fatalf("%s: the transactions list scrolls sideways (%v)", size.name, err)
		}
		c.Shoot(fmt.Sprintf("transfer_fx_transactions_%s", size.name))
	}
	// The same currency hides the received amount.
	savings := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := e.Store.CreateAccount(context.Background(), savings); err != nil {
		t.Fatal(err)
	}
	c.Run("same currency",
		chromedp.Navigate(base+"/transfers/new"),
		chromedp.WaitVisible(chromedp.ID("amount")),
		chromedp.SetValue(chromedp.ID("from_account_id"), e.Alpha.Account.ID.String()),
		chromedp.SetValue(chromedp.ID("to_account_id"), savings.ID.String()),
	)
	changed(c)
	c.Run("received amount hidden", chromedp.WaitNotVisible(chromedp.ID("to_amount")))
}

// changed tells the page's script that the To account changed, as
// choosing it by hand does.
func changed(c *apitest.Chrome) {
	if _, err := chromedp.Run(c.Ctx, chromedp.Evaluate[bool](`document.getElementById('to_account_id').dispatchEvent(new Event('change')), true`)); err != nil {
		c.Fail("change the To account", err)
	}
}
