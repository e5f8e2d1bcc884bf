package screens_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// The rates screen shows, for each currency of the household's accounts,
// the rate it converts at today, its day and source, how old the latest
// fetched rate is and the last fetch's failure; an admin sets a rate by
// hand for the household alone; a member only looks.
func TestExchangeRatesScreen(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	e := apitest.NewEnv(t, func(o *api.Options) { o.Clock = func() time.Time { return now } })
	ctx := context.Background()
	b := apitest.SignedInBrowser(t, e)
	has := func(path string, want ...string) string {
		t.Helper()
		r := b.Get(path)
		body := string(r.Body)
		for _, w := range want {
			if r.Status != 200 || !strings.Contains(body, w) {
				t.Fatalf("%s: %d, no %q in\n%s", path, r.Status, w, body)
			}
		}
		return body
	}
	has("/settings/exchange_rates", "Every account is in USD", `<label for="rate">`)

	euro := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(ctx, euro); err != nil {
		t.Fatal(err)
	}
	has("/settings/exchange_rates", "EUR → USD", "No rate: not converted", "none yet")

	day := civil.Date("2026-06-07")
	r, _ := money.ParseRate("1.0823")
	if err := e.Store.SaveFetchedRates(ctx, "EUR", "USD", day, day, []models.DayRate{{Date: day, Rate: r}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RatesFetchFailed(ctx, "EUR", "USD", "the rates service is limiting requests (429)"); err != nil {
		t.Fatal(err)
	}
	has("/settings/exchange_rates", "1 EUR = 1.0823 USD", string(day), "3 days old", "fetched",
		"the rates service is limiting requests (429). The stored rates stay as they are.")

	bad := b.Post("/settings/exchange_rates", url.Values{"from": {"EURO"}, "to": {"USD"}, "date": {string(day)}, "rate": {"0"}})
	if body := string(bad.Body); bad.Status != 422 || !strings.Contains(body, "From must be a three-letter ISO code") ||
		!strings.Contains(body, "Rate must be a number above 0") || !strings.Contains(body, `value="EURO"`) {
		t.Fatalf("bad rate: %d %s", bad.Status, body)
	}
	today := civil.DateOf(now)
	if r := b.Post("/settings/exchange_rates", url.Values{"from": {"eur"}, "to": {"usd"}, "date": {string(today)}, "rate": {"1.25"}}); r.Status != 303 {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	has("/settings/exchange_rates", "1 EUR = 1.25 USD", "set by this household", "Rate saved: 1 EUR = 1.25 USD")
	if _, used, ok, err := e.Store.Rate(ctx, e.Beta.Family.ID, "EUR", "USD", today); err != nil || !ok || used != day {
		t.Fatalf("beta's rate: used %s, ok %v, %v", used, ok, err)
	}

	// A new household currency queues the rates totals now need.
	if r := b.Post("/settings/family", url.Values{"name": {e.Alpha.Family.Name}, "currency": {"EUR"}, "number_format": {""}}); r.Status != 303 {
		t.Fatalf("currency change: %d", r.Status)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if info, err := insp.GetTaskInfo(jobs.QueueLow, "exchange_rates:fetch:"+e.Alpha.Family.ID.String()); err != nil || info.Type != jobs.TypeExchangeRatesFetch {
		t.Fatalf("no rates fetch after the currency changed: %v %v", info, err)
	}

	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "kid-rates@alpha.example", Role: models.RoleMember, Status: "active"}
	if err := e.Store.CreateUser(ctx, member); err != nil {
		t.Fatal(err)
	}
	apitest.SetPassword(t, e, member, "correct horse battery")
	m := e.Browser(t)
	if r := m.Login(member.Email, "correct horse battery"); r.Status != 303 {
		t.Fatalf("member login: %d", r.Status)
	}
	if r := m.Get("/settings/exchange_rates"); r.Status != 200 || strings.Contains(string(r.Body), `<label for="rate">`) {
		t.Fatalf("member's page: %d", r.Status)
	}
	if r := m.Post("/settings/exchange_rates", url.Values{"from": {"EUR"}, "to": {"USD"}, "date": {string(today)}, "rate": {"9"}}); r.Status != 403 {
		t.Fatalf("a member sets a rate: %d", r.Status)
	}
}
