package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

func rateOf(t testing.TB, s string) money.Rate {
	t.Helper()
	r, err := money.ParseRate(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantRate checks what Rate answers for a family, pair and day.
func wantRate(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, from, to string, day civil.Date, want string, wantUsed civil.Date) {
	t.Helper()
	r, used, ok, err := s.Rate(context.Background(), f.Family.ID, from, to, day)
	if err != nil {
		t.Fatal(err)
	}
	if want == "" {
		if ok {
			t.Fatalf("%s %s→%s on %s: rate %s of %s, want none", f.Family.Name, from, to, day, r, used)
		}
		return
	}
	if !ok || r.String() != want || used != wantUsed {
		t.Fatalf("%s %s→%s on %s: %s of %s (ok %v), want %s of %s", f.Family.Name, from, to, day, r, used, ok, want, wantUsed)
	}
}

// TestRateLookup: the latest earlier day stands in for a day without a
// rate and says so; the inverse is derived exactly; no rate at all is no
// conversion; a family's own rate wins for its day and only for it.
func TestRateLookup(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	a := modelstest.NewFamily(t, s, "rates-a")
	b := modelstest.NewFamily(t, s, "rates-b")
	err := s.SaveFetchedRates(ctx, "EUR", "USD", "2026-06-01", "2026-06-05", []models.DayRate{
		{Date: "2026-06-01", Rate: rateOf(t, "1.08")}, {Date: "2026-06-03", Rate: rateOf(t, "1.1")}})
	if err != nil {
		t.Fatal(err)
	}
	wantRate(t, s, a, "EUR", "USD", "2026-06-01", "1.08", "2026-06-01")
	wantRate(t, s, a, "EUR", "USD", "2026-06-02", "1.08", "2026-06-01") // a day without: the day before
	wantRate(t, s, a, "EUR", "USD", "2026-06-30", "1.1", "2026-06-03")
	wantRate(t, s, a, "USD", "EUR", "2026-06-03", "0.909090909091", "2026-06-03") // derived inverse
	wantRate(t, s, a, "EUR", "USD", "2026-05-31", "", "")                         // before every rate
	wantRate(t, s, a, "GBP", "USD", "2026-06-03", "", "")                         // a pair never stored
	wantRate(t, s, a, "USD", "USD", "2026-06-03", "1", "2026-06-03")

	r := &models.ExchangeRate{FromCurrency: "EUR", ToCurrency: "USD", Date: "2026-06-03", Rate: rateOf(t, "1.2")}
	if created, err := s.SetRate(ctx, a.Family.ID, r); err != nil || !created {
		t.Fatalf("SetRate: created %v, %v", created, err)
	}
	wantRate(t, s, a, "EUR", "USD", "2026-06-03", "1.2", "2026-06-03")
	wantRate(t, s, a, "EUR", "USD", "2026-06-04", "1.2", "2026-06-03")
	wantRate(t, s, b, "EUR", "USD", "2026-06-03", "1.1", "2026-06-03") // b never sees a's rate

	// A family's own rate the other way round, on a later day, is inverted
	// for it alone.
	if _, err := s.SetRate(ctx, a.Family.ID, &models.ExchangeRate{FromCurrency: "USD", ToCurrency: "EUR", Date: "2026-06-05", Rate: rateOf(t, "0.5")}); err != nil {
		t.Fatal(err)
	}
	wantRate(t, s, a, "EUR", "USD", "2026-06-06", "2", "2026-06-05")
	wantRate(t, s, b, "EUR", "USD", "2026-06-06", "1.1", "2026-06-03")

	// The stored direction wins over the inverse on the same day.
	if err := s.SaveFetchedRates(ctx, "USD", "EUR", "2026-06-10", "2026-06-10", []models.DayRate{{Date: "2026-06-10", Rate: rateOf(t, "0.8")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveFetchedRates(ctx, "EUR", "USD", "2026-06-10", "2026-06-10", []models.DayRate{{Date: "2026-06-10", Rate: rateOf(t, "1.3")}}); err != nil {
		t.Fatal(err)
	}
	wantRate(t, s, b, "EUR", "USD", "2026-06-10", "1.3", "2026-06-10")
	wantRate(t, s, b, "USD", "EUR", "2026-06-10", "0.8", "2026-06-10")

	// A series read at once answers every day as Quote does.
	for _, f := range []*modelstest.FamilyFixture{a, b} {
		for _, pair := range [][2]string{{"EUR", "USD"}, {"USD", "EUR"}, {"GBP", "USD"}, {"USD", "USD"}} {
			rs, err := s.RateSeries(ctx, f.Family.ID, pair[0], pair[1], "2026-05-30", "2026-06-12")
			if err != nil {
				t.Fatal(err)
			}
			for d := civil.Date("2026-05-30"); d <= "2026-06-12"; d = civil.DateOf(d.Time().AddDate(0, 0, 1)) {
				want, wantOK, err := s.Quote(ctx, f.Family.ID, pair[0], pair[1], d)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := rs.At(d)
				if ok != wantOK || ok && (!got.Rate.Equal(want.Rate) || got.Date != want.Date || got.Source != want.Source || got.Inverted != want.Inverted) {
					t.Fatalf("%s %v on %s: series %+v (%v), Quote %+v (%v)", f.Family.Name, pair, d, got, ok, want, wantOK)
				}
			}
		}
	}
}

// BenchmarkRate: a year of daily rates of three pairs; one lookup of a
// day, and one series of the year.
func BenchmarkRate(b *testing.B) {
	ctx := context.Background()
	s := modelstest.NewStore(b)
	f := modelstest.NewFamily(b, s, "bench-rates")
	start := civil.Date("2025-06-01")
	for _, from := range []string{"EUR", "GBP", "JPY"} {
		var series []models.DayRate
		for d := start.Time(); d.Before(start.Time().AddDate(1, 0, 0)); d = d.AddDate(0, 0, 1) {
			series = append(series, models.DayRate{Date: civil.DateOf(d), Rate: rateOf(b, "1.0823")})
		}
		if err := s.SaveFetchedRates(ctx, from, "USD", start, "2026-05-31", series); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("FamilyBaseline", func(b *testing.B) { // one primary-key read, for scale
		for i := 0; i < b.N; i++ {
			if _, err := s.Family(ctx, f.Family.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Quote", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Quote(ctx, f.Family.ID, "USD", "GBP", "2026-03-15"); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("SeriesOfAYear", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.RateSeries(ctx, f.Family.ID, "GBP", "USD", start, "2026-05-31"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSetRateUpsert: the second rate of a family's pair and day replaces
// the first in the same row.
func TestSetRateUpsert(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	a := modelstest.NewFamily(t, s, "upsert")
	first := &models.ExchangeRate{FromCurrency: "CHF", ToCurrency: "USD", Date: "2026-06-15", Rate: rateOf(t, "1.12")}
	if created, err := s.SetRate(ctx, a.Family.ID, first); err != nil || !created {
		t.Fatalf("first: created %v, %v", created, err)
	}
	again := &models.ExchangeRate{FromCurrency: "CHF", ToCurrency: "USD", Date: "2026-06-15", Rate: rateOf(t, "1.15")}
	if created, err := s.SetRate(ctx, a.Family.ID, again); err != nil || created {
		t.Fatalf("again: created %v, %v", created, err)
	}
	if again.ID != first.ID || again.Rate.String() != "1.15" || !again.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("again = %+v, first = %+v", again, first)
	}
	rows, total, err := s.ExchangeRates(ctx, a.Family.ID, models.RateFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil || total != 1 || rows[0].Rate.String() != "1.15" || rows[0].Source != models.RateManual {
		t.Fatalf("rows %+v, total %d, %v", rows, total, err)
	}
}

// TestExchangeRatesList: a family lists its own and the fetched rates,
// filtered, never another family's; another family's id is not found.
func TestExchangeRatesList(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	a := modelstest.NewFamily(t, s, "list-a")
	b := modelstest.NewFamily(t, s, "list-b")
	if err := s.SaveFetchedRates(ctx, "EUR", "USD", "2026-05-01", "2026-06-01", []models.DayRate{
		{Date: "2026-05-01", Rate: rateOf(t, "1.07")}, {Date: "2026-06-01", Rate: rateOf(t, "1.08")}}); err != nil {
		t.Fatal(err)
	}
	own := &models.ExchangeRate{FromCurrency: "GBP", ToCurrency: "USD", Date: "2026-06-01", Rate: rateOf(t, "1.27")}
	if _, err := s.SetRate(ctx, a.Family.ID, own); err != nil {
		t.Fatal(err)
	}
	page := models.Page{Number: 1, Size: 10}
	for _, tc := range []struct {
		f    *modelstest.FamilyFixture
		filt models.RateFilter
		want int
	}{
		{a, models.RateFilter{}, 3},
		{b, models.RateFilter{}, 2},
		{a, models.RateFilter{From: "EUR", To: "USD", Start: "2026-05-15"}, 1},
		{a, models.RateFilter{End: "2026-05-31"}, 1},
		{b, models.RateFilter{From: "GBP"}, 0},
	} {
		rows, total, err := s.ExchangeRates(ctx, tc.f.Family.ID, tc.filt, page)
		if err != nil || total != tc.want || len(rows) != tc.want {
			t.Errorf("%s %+v: %d rows, total %d, %v; want %d", tc.f.Family.Name, tc.filt, len(rows), total, err, tc.want)
		}
	}
	if _, err := s.ExchangeRate(ctx, b.Family.ID, own.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("b reads a's rate: %v", err)
	}
	if got, err := s.ExchangeRate(ctx, a.Family.ID, own.ID); err != nil || got.Rate.String() != "1.27" {
		t.Fatalf("a reads its rate: %+v, %v", got, err)
	}
}

// TestRatesFetchRecord: a failure keeps the rates and the days asked and
// says why; a success clears it. RateNeeds and RatesMissing follow the
// accounts in other currencies and their first transactions.
func TestRatesFetchRecord(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	a := modelstest.NewFamily(t, s, "needs")
	eur := &models.Account{FamilyID: a.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := s.CreateAccount(ctx, eur); err != nil {
		t.Fatal(err)
	}
	missing := func(want bool) {
		t.Helper()
		got, err := s.RatesMissing(ctx, a.Family.ID, []uuid.UUID{eur.ID, a.Account.ID})
		if err != nil || got != want {
			t.Fatalf("RatesMissing = %v, %v; want %v", got, err, want)
		}
	}
	missing(true) // never fetched
	// A failure before any answer leaves the days asked empty (NULL), and
	// the upsert reads them back: under CI load a fetch's timeout made
	// this record fail with "cannot scan <nil> into Date".
	if err := s.RatesFetchFailed(ctx, "GBP", "USD", "the rates service timed out"); err != nil {
		t.Fatal(err)
	}
	if f, err := s.RatesFetchOf(ctx, "GBP", "USD"); err != nil || models.Str(f.Error) != "the rates service timed out" || f.CoveredFrom != "" || f.SucceededAt != nil {
		t.Fatalf("first fetch failed: %+v, %v", f, err)
	}
	needs, err := s.RateNeeds(ctx, &a.Family.ID, "2026-06-10")
	if err != nil || len(needs) != 1 || needs[0] != (models.RateNeed{FromCurrency: "EUR", ToCurrency: "USD", Start: "2026-06-10"}) {
		t.Fatalf("needs %+v, %v", needs, err)
	}
	if err := s.SaveFetchedRates(ctx, "EUR", "USD", "2026-06-10", "2026-06-10", []models.DayRate{{Date: "2026-06-09", Rate: rateOf(t, "1.1")}}); err != nil {
		t.Fatal(err)
	}
	missing(false)
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: a.Family.ID, AccountID: eur.ID, Date: "2026-03-01",
		Amount: 10000, Currency: "EUR", Name: "old"}, nil); err != nil {
		t.Fatal(err)
	}
	missing(true) // a transaction before the first day fetched
	needs, err = s.RateNeeds(ctx, nil, "2026-06-10")
	if err != nil || len(needs) != 1 || needs[0].Start != "2026-03-01" {
		t.Fatalf("needs %+v, %v", needs, err)
	}
	if err := s.RatesFetchFailed(ctx, "EUR", "USD", "the rates service answered 429"); err != nil {
		t.Fatal(err)
	}
	f, err := s.RatesFetchOf(ctx, "EUR", "USD")
	if err != nil || models.Str(f.Error) != "the rates service answered 429" || f.CoveredFrom != "2026-06-09" || f.CoveredTo != "2026-06-09" || f.SucceededAt == nil {
		t.Fatalf("fetch %+v, %v", f, err)
	}
	wantRate(t, s, a, "EUR", "USD", "2026-06-10", "1.1", "2026-06-09")
	if err := s.SaveFetchedRates(ctx, "EUR", "USD", "2026-03-01", "2026-06-08", nil); err != nil {
		t.Fatal(err)
	}
	if f, err = s.RatesFetchOf(ctx, "EUR", "USD"); err != nil || f.Error != nil || f.CoveredFrom != "2026-03-01" || f.CoveredTo != "2026-06-09" {
		t.Fatalf("fetch %+v, %v", f, err)
	}
	missing(false)
	if d, err := s.LatestFetchedRate(ctx, "USD", "EUR"); err != nil || d != "2026-06-09" {
		t.Fatalf("latest fetched %q, %v", d, err)
	}
	if codes, err := s.ForeignCurrencies(ctx, a.Family.ID); err != nil || len(codes) != 1 || codes[0] != "EUR" {
		t.Fatalf("foreign %v, %v", codes, err)
	}
}

// BenchmarkRatesMissing is what the write hook adds to every write that
// moves a balance: for an account in the family's currency (the common
// case) and for one in another currency with its rates fetched.
func BenchmarkRatesMissing(b *testing.B) {
	ctx := context.Background()
	s := modelstest.NewStore(b)
	f := modelstest.NewFamily(b, s, "bench-missing")
	euro := &models.Account{FamilyID: f.Family.ID, Name: "Euros", AccountType: "depository", Currency: "EUR"}
	if err := s.CreateAccount(ctx, euro); err != nil {
		b.Fatal(err)
	}
	if err := s.SaveFetchedRates(ctx, "EUR", "USD", "2020-01-01", "2026-01-01", nil); err != nil {
		b.Fatal(err)
	}
	for _, a := range []*models.Account{f.Account, euro} {
		b.Run(a.Currency, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if missing, err := s.RatesMissing(ctx, f.Family.ID, []uuid.UUID{a.ID}); err != nil || missing {
					b.Fatal(missing, err)
				}
			}
		})
	}
}
