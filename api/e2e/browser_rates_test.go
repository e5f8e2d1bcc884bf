package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestBrowserExchangeRates: in Chromium, an admin with a euro account sees
// its rate, how old the fetched rate is and why the last fetch failed,
// then sets a rate by hand with the plain form; the screen is saved at
// phone and desktop width.
func TestBrowserExchangeRates(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	e, base := apitest.ServeEnv(t, func(o *api.Options) { o.Clock = func() time.Time { return now } })
	ctx := context.Background()
	euro := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(ctx, euro); err != nil {
		t.Fatal(err)
	}
	day := civil.Date("2026-06-05")
	r, _ := money.ParseRate("1.0823")
	if err := e.Store.SaveFetchedRates(ctx, "EUR", "USD", day, day, []models.DayRate{{Date: day, Rate: r}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RatesFetchFailed(ctx, "EUR", "USD", "the rates service did not answer in time"); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.Run("phone width", chromedp.EmulateViewport(390, 844))
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("rates", chromedp.Navigate(base+"/settings/exchange_rates"), chromedp.WaitVisible(chromedp.CSS(`#rates`)))
	if body := c.Text(`main`); !strings.Contains(body, "1 EUR = 1.0823 USD") || !strings.Contains(body, "5 days old") ||
		!strings.Contains(body, "did not answer in time") {
		t.Fatalf("rates screen: %s", body)
	}
	c.Shoot("rates-390")
	c.Run("set a rate",
		chromedp.SendKeys(chromedp.CSS(`#from`), "EUR"),
		chromedp.SendKeys(chromedp.CSS(`#rate`), "1.1"),
		chromedp.Submit(chromedp.CSS(`#rate`)),
	)
	c.WaitFor(`String(document.body.innerText.includes("Rate saved"))`, "true")
	if body := c.Text(`main`); !strings.Contains(body, "1 EUR = 1.1 USD") || !strings.Contains(body, "set by this household") {
		t.Fatalf("after the form: %s", body)
	}
	c.Run("desktop width", chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#rates`)))
	c.Shoot("rates-1280")
}
