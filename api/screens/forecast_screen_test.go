package screens_test

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

// seedForecast gives alpha's checking 2,500 USD, a card and, from today,
// rent on day 3, pay on day 12 and a weekly card subscription, all active,
// and a large suggestion that must not count.
func seedForecast(t *testing.T, e *apitest.Env) {
	t.Helper()
	ctx := context.Background()
	fam := e.Alpha.Family.ID
	e.Alpha.Account.OpeningBalance = 2500_0000
	if err := e.Store.UpdateAccount(ctx, e.Alpha.Account, "opening_balance"); err != nil {
		t.Fatal(err)
	}
	card := &models.Account{FamilyID: fam, Name: "Card", AccountType: "credit_card", Currency: "USD"}
	if err := e.Store.CreateAccount(ctx, card); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC()
	on := func(days int) civil.Date { return civil.DateOf(today.AddDate(0, 0, days)) }
	for _, r := range []*models.RecurringTransaction{
		{AccountID: &e.Alpha.Account.ID, Name: "Rent", Amount: 1800_0000, Cadence: "monthly", NextDate: on(3)},
		{AccountID: &e.Alpha.Account.ID, Name: "Pay", Amount: -2400_0000, Cadence: "monthly", NextDate: on(12)},
		{AccountID: &card.ID, Name: "Groceries box", Amount: 60_0000, Cadence: "weekly", NextDate: on(1)},
		{Name: "Maybe", Amount: 9000_0000, Cadence: "weekly", NextDate: on(1), Status: models.RecurringSuggested},
	} {
		r.FamilyID, r.Currency, r.Manual, r.ExpectedDay = fam, "USD", true, r.NextDate.Time().Day()
		if err := e.Store.CreateRecurringTransaction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDashboardForecast: the dashboard shows the lowest point of the next
// 90 days and what is safe to spend until pay, from the active items
// only; without any it says how to add them.
func TestDashboardForecast(t *testing.T) {
	e := apitest.NewEnv(t)
	b := apitest.SignedInBrowser(t, e)
	if page := string(b.Get("/").Body); !strings.Contains(page, "Nothing recurring is active yet") {
		t.Errorf("no items: the dashboard lacks the way to add them")
	}
	seedForecast(t, e)
	f, err := e.Store.Forecast(t.Context(), e.Alpha.Family.ID, models.ForecastDays)
	if err != nil {
		t.Fatal(err)
	}
	pay := f.NextIncome.Time().Format("2 Jan 2006")
	page := string(b.Get("/").Body)
	// The table lists the days the projection moves: today, the card's
	// weekly box (13 times), the rent and the pay (3 times each).
	table := page[strings.Index(page, "Projected net worth</th>"):]
	table = table[:strings.Index(table, "</table>")]
	if rows := strings.Count(table, "<tr>"); rows < 10 || rows > 1+13+3+3 {
		t.Errorf("%d rows in the forecast's table", rows)
	}
	for _, want := range []string{
		`id="lowest-point"`, "Lowest point", money.Amount(f.Lowest.Balance).Format(money.MustCurrency("USD")),
		"on " + f.Lowest.Date.Time().Format("2 Jan 2006"),
		`id="safe-to-spend"`, "$700.00", "until " + pay, // 2,500 less the rent; the card's box is not cash
		`aria-label="Projected net worth over the next 90 days"`, "3 active recurring items",
		"The numbers, on the days the projection moves",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
}

// TestDashboardForecastScreen: the forecast card in Chromium at phone and
// desktop widths, nothing wider than the phone's screen.
func TestDashboardForecastScreen(t *testing.T) {
	e, base := apitest.ServeEnv(t)
	seedForecast(t, e)
	apitest.SetPassword(t, e, e.Alpha.User, "correct horse battery")
	c := apitest.NewChrome(t)
	c.SignIn(base, e.Alpha.User.Email)
	c.Run("phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("forecast")))
	c.WaitFor(`String(document.documentElement.scrollWidth <= 390)`, "true")
	c.Run("scroll to the forecast", chromedp.ScrollIntoView(chromedp.ID("forecast")))
	c.ShootView("dashboard_forecast_390")
	c.Run("desktop", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("forecast")))
	c.Run("scroll to the forecast", chromedp.ScrollIntoView(chromedp.ID("forecast")))
	c.ShootView("dashboard_forecast_1280")
	c.Shoot("dashboard_1280")
}
