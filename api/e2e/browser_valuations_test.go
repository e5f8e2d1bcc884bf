package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestBrowserValuations: an account page with valuations in Chromium, at
// desktop and phone width: "Update value" sets the balance with a plain
// form, and the register shows each valuation as its own row.
func TestBrowserValuations(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	ctx := context.Background()
	fam, acct := e.Alpha.Family.ID, e.Alpha.Account
	now := time.Now().UTC()
	day := func(d int) civil.Date { return civil.DateOf(now.AddDate(0, 0, d)) }
	for i, r := range []struct {
		name   string
		amount int64
	}{{"Salary", -2500_0000}, {"Rent", 1400_0000}, {"Groceries", 86_4500}, {"Electricity", 72_1000}, {"Pharmacy", 18_9900}, {"Bakery", 6_5000}} {
		tx := &models.Transaction{FamilyID: fam, AccountID: acct.ID, Date: day(-40 + 7*i), Amount: money.Amount(r.amount), Currency: "USD", Name: r.name}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	d := day(-20)
	if _, err := e.Store.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: acct.ID, Date: &d, Amount: 1000_0000}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RecalculateBalance(ctx, fam, acct.ID); err != nil {
		t.Fatal(err)
	}
	path := base + "/accounts/" + acct.ID.String()
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")

	c := apitest.NewChrome(t)
	c.Run("desktop", chromedp.EmulateViewport(1280, 900))
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("update value",
		chromedp.Navigate(path),
		chromedp.WaitVisible(chromedp.ID("value-amount")),
		chromedp.SetValue(chromedp.ID("value-date"), string(day(-3))),
		chromedp.SendKeys(chromedp.ID("value-amount"), "950.25"),
		chromedp.SendKeys(chromedp.ID("value-notes"), "Statement"),
		chromedp.Submit(chromedp.ID("value-amount")),
	)
	// The page before the post already shows a valuation row: wait for the
	// new value itself, or the register read may be the old page's.
	c.WaitFor(`String((document.querySelector('#register') || {innerText: ''}).innerText.includes('Balance set to $950.25'))`, "true")
	if got := c.Text("#register"); !strings.Contains(got, "Balance set to $950.25") || !strings.Contains(got, "Balance set to $1,000.00") {
		t.Fatalf("register: %s", got)
	}
	c.Shoot("valuations-account-1280")

	phone := apitest.NewChrome(t)
	phone.Run("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	phone.SignIn(base, e.Alpha.User.Email)
	phone.Run("account page", chromedp.Navigate(path), chromedp.WaitVisible(chromedp.CSS(`tr.valuation`)))
	phone.Shoot("valuations-account-390")
	wide, err := chromedp.Run(phone.Ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil || wide {
		t.Errorf("the page scrolls sideways at 390 px (%v)", err)
	}
}
