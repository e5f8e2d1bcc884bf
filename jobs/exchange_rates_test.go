package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
)

// frankfurter is a rates service written to the Frankfurter v1 protocol,
// on loopback: GET /v1/{start}..{end}?base=X&symbols=Y answers the working
// days of the range (starting at the working day before a weekend start),
// with a 404 for a range wholly before the series (1999-01-04). Each rate
// is 1.0 plus the day of the year in ten-thousandths, so any day's rate
// can be checked. mode makes it misbehave.
type frankfurter struct {
	srv     *httptest.Server
	mu      sync.Mutex
	mode    string              // "", "429", "500", "garbage", "negative", "base", "slow"
	asked   map[string][]string // "EUR/USD" → the ranges asked
	release chan struct{}
}

const seriesStart = "1999-01-04"

func newFrankfurter(t *testing.T) *frankfurter {
	f := &frankfurter{asked: map[string][]string{}, release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.release); f.srv.Close() })
	return f
}

func fakeRate(d time.Time) string { return fmt.Sprintf("1.%04d", d.YearDay()) }

func (f *frankfurter) serve(w http.ResponseWriter, r *http.Request) {
	start, end, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/"), "..")
	base, sym := r.URL.Query().Get("base"), r.URL.Query().Get("symbols")
	from, err1 := time.Parse(time.DateOnly, start)
	to, err2 := time.Parse(time.DateOnly, end)
	if !ok || err1 != nil || err2 != nil || base == "" || sym == "" || strings.Contains(sym, ",") {
		http.Error(w, `{"message":"bad request"}`, http.StatusUnprocessableEntity)
		return
	}
	f.mu.Lock()
	f.asked[base+"/"+sym] = append(f.asked[base+"/"+sym], start+".."+end)
	mode := f.mode
	f.mu.Unlock()
	switch mode {
	case "429":
		http.Error(w, `{"message":"too many requests"}`, http.StatusTooManyRequests)
		return
	case "500":
		http.Error(w, "oops", http.StatusInternalServerError)
		return
	case "garbage":
		fmt.Fprint(w, `<html>maintenance</html>`)
		return
	case "slow":
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	if end < seriesStart {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"not found"}`)
		return
	}
	for from.Weekday() == time.Saturday || from.Weekday() == time.Sunday {
		from = from.AddDate(0, 0, -1)
	}
	rates := map[string]map[string]json.RawMessage{}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday || d.Format(time.DateOnly) < seriesStart {
			continue
		}
		v := fakeRate(d)
		if mode == "negative" {
			v = "-" + v
		}
		rates[d.Format(time.DateOnly)] = map[string]json.RawMessage{sym: json.RawMessage(v)}
	}
	if mode == "base" {
		base = "XXX"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"amount": 1.0, "base": base, "start_date": start, "end_date": end, "rates": rates})
}

func (f *frankfurter) set(mode string) { f.mu.Lock(); f.mode = mode; f.mu.Unlock() }

// take returns the ranges asked per pair since the last take.
func (f *frankfurter) take() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.asked
	f.asked = map[string][]string{}
	return out
}

// ratesRig is the handlers with the fake service and a clock, and a family
// in USD with a euro account whose first transaction is on 2026-01-05.
type ratesRig struct {
	h     *jobs.Handlers
	store *models.Store
	insp  *asynq.Inspector
	fake  *frankfurter
	fam   *modelstest.FamilyFixture
	euro  *models.Account
	today civil.Date
}

func newRatesRig(t *testing.T) *ratesRig {
	t.Helper()
	h, store, insp := newHandlers(t)
	r := &ratesRig{h: h, store: store, insp: insp, fake: newFrankfurter(t), today: "2026-03-02"}
	h.Rates = jobs.NewRatesClient(jobs.RatesOptions{URL: r.fake.srv.URL + "/v1/", Timeout: 300 * time.Millisecond})
	h.Now = func() time.Time { return r.today.Time().Add(17 * time.Hour) }
	r.fam = modelstest.NewFamily(t, store, "rates")
	r.euro = &models.Account{FamilyID: r.fam.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := store.CreateAccount(context.Background(), r.euro); err != nil {
		t.Fatal(err)
	}
	r.spend(t, "2026-01-05")
	return r
}

func (r *ratesRig) spend(t *testing.T, day civil.Date) {
	t.Helper()
	if _, _, err := r.store.CreateTransaction(context.Background(), &models.Transaction{FamilyID: r.fam.Family.ID, AccountID: r.euro.ID,
		Date: day, Amount: 10000, Currency: "EUR", Name: "bakery"}, nil); err != nil {
		t.Fatal(err)
	}
}

// run runs the fetch of every family (nil) or one.
func (r *ratesRig) run(t *testing.T, family bool) error {
	t.Helper()
	var id = &r.fam.Family.ID
	if !family {
		id = nil
	}
	task, err := jobs.NewExchangeRatesFetchTask(id)
	if err != nil {
		t.Fatal(err)
	}
	return r.h.ExchangeRatesFetch(context.Background(), asynq.NewTask(task.Type(), task.Payload()))
}

func (r *ratesRig) wantAsked(t *testing.T, want map[string][]string) {
	t.Helper()
	got := r.fake.take()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("asked %v, want %v", got, want)
	}
}

func (r *ratesRig) wantRate(t *testing.T, day civil.Date, want string, used civil.Date) {
	t.Helper()
	rate, u, ok, err := r.store.Rate(context.Background(), r.fam.Family.ID, "EUR", "USD", day)
	if err != nil || !ok || rate.String() != want || u != used {
		t.Fatalf("EUR→USD on %s: %s of %s (ok %v, %v), want %s of %s", day, rate, u, ok, err, want, used)
	}
}

func (r *ratesRig) count(t *testing.T) int {
	t.Helper()
	_, n, err := r.store.ExchangeRates(context.Background(), r.fam.Family.ID, models.RateFilter{}, models.Page{Number: 1, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestExchangeRatesBackfill: the first run asks once per pair for every
// day from the first transaction to today; a second run asks nothing; a
// transaction dated earlier makes one request for the days before; the
// next day asks only the new days. Weekends use Friday's rate.
func TestExchangeRatesBackfill(t *testing.T) {
	r := newRatesRig(t)
	gbp := &models.Account{FamilyID: r.fam.Family.ID, Name: "Pounds", AccountType: "depository", Currency: "GBP"}
	if err := r.store.CreateAccount(context.Background(), gbp); err != nil {
		t.Fatal(err)
	}
	if err := r.run(t, false); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{"EUR/USD": {"2026-01-05..2026-03-02"}, "GBP/USD": {"2026-03-02..2026-03-02"}})
	if n := r.count(t); n != 41+1 { // 41 working days from 5 Jan to 2 Mar, and GBP's one
		t.Fatalf("%d rates stored", n)
	}
	r.wantRate(t, "2026-02-28", "1.0058", "2026-02-27") // a Saturday: Friday's
	r.wantRate(t, "2026-03-02", "1.0061", "2026-03-02")

	if err := r.run(t, false); err != nil { // again: nothing left to ask
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{})

	r.spend(t, "2025-12-20") // a Saturday, before the stored rates
	if missing, err := r.store.RatesMissing(context.Background(), r.fam.Family.ID, []uuid.UUID{r.euro.ID}); err != nil || !missing {
		t.Fatalf("RatesMissing = %v, %v", missing, err)
	}
	if err := r.run(t, true); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{"EUR/USD": {"2025-12-20..2026-01-04"}})
	r.wantRate(t, "2025-12-20", "1.0353", "2025-12-19") // the working day before, as the service answers

	r.today = "2026-03-04"
	if err := r.run(t, false); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{"EUR/USD": {"2026-03-03..2026-03-04"}, "GBP/USD": {"2026-03-03..2026-03-04"}})
	r.wantRate(t, "2026-03-04", "1.0063", "2026-03-04")
}

// TestExchangeRatesServiceFails: a service that limits requests, fails,
// answers garbage, a rate that is not positive or another base, or does
// not answer in time changes no stored rate; the run fails (asynq retries
// it later) and the reason is recorded for the rates screen. The next
// good answer clears it.
func TestExchangeRatesServiceFails(t *testing.T) {
	r := newRatesRig(t)
	if err := r.run(t, false); err != nil {
		t.Fatal(err)
	}
	r.fake.take()
	before := r.count(t)
	r.spend(t, "2025-11-03")
	for mode, reason := range map[string]string{
		"429":      "the rates service is limiting requests (429)",
		"500":      "the rates service answered 500",
		"garbage":  "the rates service answered something that is not a rates series",
		"negative": "the rates service answered something that is not a rates series",
		"base":     "the rates service answered something that is not a rates series",
		"slow":     "the rates service did not answer in time",
	} {
		r.fake.set(mode)
		err := r.run(t, true)
		if err == nil {
			t.Fatalf("%s: the run succeeded", mode)
		}
		r.wantAsked(t, map[string][]string{"EUR/USD": {"2025-11-03..2026-01-04"}})
		if n := r.count(t); n != before {
			t.Fatalf("%s: %d rates, had %d", mode, n, before)
		}
		r.wantRate(t, "2026-03-02", "1.0061", "2026-03-02")
		f, err := r.store.RatesFetchOf(context.Background(), "EUR", "USD")
		if err != nil || models.Str(f.Error) != reason || f.CoveredFrom != "2026-01-05" {
			t.Fatalf("%s: fetch %+v (%v), want the reason %q", mode, f, err, reason)
		}
	}
	r.fake.set("")
	if err := r.run(t, true); err != nil {
		t.Fatal(err)
	}
	if f, err := r.store.RatesFetchOf(context.Background(), "EUR", "USD"); err != nil || f.Error != nil || f.CoveredFrom != "2025-11-03" {
		t.Fatalf("after a good answer: %+v, %v", f, err)
	}
}

// TestExchangeRatesBeforeTheSeries: days before the service's series (its
// 404) are asked once and then counted as asked, with no rate: no
// conversion for them, and no request again.
func TestExchangeRatesBeforeTheSeries(t *testing.T) {
	r := newRatesRig(t)
	r.spend(t, seriesStart)
	if err := r.run(t, false); err != nil {
		t.Fatal(err)
	}
	r.fake.take()
	r.spend(t, "1998-06-01")
	if err := r.run(t, true); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{"EUR/USD": {"1998-06-01..1999-01-03"}})
	if _, _, ok, err := r.store.Rate(context.Background(), r.fam.Family.ID, "EUR", "USD", "1998-12-31"); ok || err != nil {
		t.Fatalf("a rate before the series: ok %v, %v", ok, err)
	}
	r.wantRate(t, "1999-01-04", "1.0004", "1999-01-04")
	if err := r.run(t, true); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{})
}

// TestExchangeRatesManualOnly: without a service the job asks nothing.
func TestExchangeRatesManualOnly(t *testing.T) {
	r := newRatesRig(t)
	r.h.Rates = jobs.NewRatesClient(jobs.RatesOptions{URL: ""})
	if err := r.run(t, false); err != nil {
		t.Fatal(err)
	}
	r.wantAsked(t, map[string][]string{})
	if err := r.h.ExchangeRatesFetch(context.Background(), asynq.NewTask(jobs.TypeExchangeRatesFetch, []byte("{no"))); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("bad payload: %v", err)
	}
}

// TestExchangeRatesQueuedByWrite: through the store's balance policy, a
// transaction in a euro account before the stored rates queues the
// family's fetch at once; one in the family's currency does not.
func TestExchangeRatesQueuedByWrite(t *testing.T) {
	r := newRatesRig(t)
	id := "exchange_rates:fetch:" + r.fam.Family.ID.String()
	t.Cleanup(func() { _ = r.insp.DeleteTask(jobs.QueueLow, id) })
	jobs.UseExchangeRates(r.store, r.h.Queue, r.h.Log, jobs.NewBalances(r.store, r.h.Queue, r.h.Log))
	t.Cleanup(func() {
		for _, a := range []*models.Account{r.fam.Account, r.euro} {
			_ = r.insp.DeleteTask(jobs.QueueDefault, "account:balance:"+a.ID.String())
		}
	})
	if _, _, err := r.store.CreateTransaction(context.Background(), &models.Transaction{FamilyID: r.fam.Family.ID, AccountID: r.fam.Account.ID,
		Date: "2020-01-01", Amount: 10000, Currency: "USD", Name: "home"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.insp.GetTaskInfo(jobs.QueueLow, id); !errors.Is(err, asynq.ErrTaskNotFound) && !errors.Is(err, asynq.ErrQueueNotFound) {
		t.Fatalf("a write in the family's currency queued %s: %v", id, err)
	}
	r.spend(t, "2025-12-01")
	if info, err := r.insp.GetTaskInfo(jobs.QueueLow, id); err != nil || info.Type != jobs.TypeExchangeRatesFetch {
		t.Fatalf("no fetch queued after a euro transaction: %v %v", info, err)
	}
}
