package models_test

import (
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// TestSumsPartialMonths: a period holding part of a month reads that
// month whole from the monthly sums only when the month's days outside
// the period have no rows; either way the totals, the statement, the
// series and the left-out notice count the period's rows and no others.
func TestSumsPartialMonths(t *testing.T) {
	ctx := t.Context()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "alpha")
	add := func(date civil.Date, amount money.Amount, currency string) {
		t.Helper()
		if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: date, Amount: amount, Currency: currency, Name: "Row " + string(date)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("2026-01-05", 1000, "USD")
	add("2026-01-20", 2000, "USD")
	add("2026-01-21", 500, "EUR") // no rate: left out
	add("2026-02-10", 4000, "USD")
	add("2026-03-25", 8000, "USD")
	for _, c := range []struct {
		from, to  civil.Date
		spending  money.Amount
		count     int
		otherCurr int
	}{
		{"2026-01-01", "2026-01-10", 1000, 1, 0},  // rows after it in January: read by day
		{"2026-01-10", "2026-01-31", 2000, 1, 1},  // rows before it: by day
		{"2026-01-03", "2026-01-25", 3000, 2, 1},  // none outside it: January whole
		{"2026-01-06", "2026-02-15", 6000, 2, 1},  // January by day, February whole
		{"2026-02-01", "2026-03-24", 4000, 1, 0},  // March by day
		{"2026-01-22", "2026-03-31", 12000, 2, 0}, // a January without its rows, by day
	} {
		p := models.Period{From: c.from, To: c.to}
		tot, err := s.PeriodTotals(ctx, f.Family.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		if tot.Spending != c.spending || tot.SpendingCount != c.count {
			t.Errorf("%v: spending %v in %d rows, want %d in %d", p, tot.Spending, tot.SpendingCount, c.spending, c.count)
		}
		acc, err := s.AccountTotals(ctx, f.Family.ID, p, []uuid.UUID{f.Account.ID})
		if err != nil || acc.Spending != tot.Spending || acc.SpendingCount != tot.SpendingCount {
			t.Errorf("%v: account totals %+v, %v; want those of the family %+v", p, acc, err, tot)
		}
		l, err := s.LeftOutOf(ctx, f.Family.ID, p)
		if err != nil || l.OtherCurrency != c.otherCurr {
			t.Errorf("%v: left out %+v, %v; want %d in another currency", p, l, err, c.otherCurr)
		}
		diffs, err := s.SumsReadsDiffer(ctx, f.Family.ID, p, []uuid.UUID{f.Account.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Error(d)
		}
	}
}
