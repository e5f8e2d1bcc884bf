package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/importfile"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// newBill makes an active monthly recurring transaction of the fixture's
// account, due next on next.
func newBill(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, name string, amount money.Amount, day int, next civil.Date) *models.RecurringTransaction {
	t.Helper()
	lo, hi := amount, amount
	r := &models.RecurringTransaction{FamilyID: f.Family.ID, AccountID: &f.Account.ID, Name: name, Amount: amount,
		AmountMin: &lo, AmountMax: &hi, Currency: "USD", Cadence: "monthly", ExpectedDay: day, NextDate: next,
		Occurrences: 3, Status: models.RecurringActive}
	if err := s.CreateRecurringTransaction(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func occurrences(t *testing.T, s *models.Store, familyID uuid.UUID) []models.RecurringOccurrence {
	t.Helper()
	os, err := s.RecurringOccurrences(context.Background(), familyID, models.OccurrenceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return os
}

func reload(t *testing.T, s *models.Store, r *models.RecurringTransaction) *models.RecurringTransaction {
	t.Helper()
	got, err := s.RecurringTransaction(context.Background(), r.FamilyID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPaidBySingleCreate: one transaction that matches a bill, created
// through the pipeline's door for one row, marks that occurrence paid and
// moves the bill to its next month, in the same write; one that does not
// match leaves it alone; another family's transaction never pays it.
func TestPaidBySingleCreate(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "alpha")
	other := modelstest.NewFamily(t, s, "beta")
	bill := newBill(t, s, f, "Netflix.com", 159900, 15, "2026-07-15")

	create := func(fx *modelstest.FamilyFixture, name string, amount money.Amount, date civil.Date) *models.Transaction {
		t.Helper()
		row, created, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fx.Family.ID, AccountID: fx.Account.ID,
			Date: date, Amount: amount, Currency: "USD", Name: name}, nil)
		if err != nil || !created {
			t.Fatalf("create %s: %v %v", name, created, err)
		}
		return row
	}
	create(f, "Coffee", 45000, "2026-07-15")
	create(other, "NETFLIX.COM 1234", 159900, "2026-07-15")
	if os := occurrences(t, s, f.Family.ID); len(os) != 0 {
		t.Fatalf("paid by a stranger: %+v", os)
	}
	// A price change: the amount is within the tolerance, and the bill
	// takes the new price as the detector would.
	paid := create(f, "NETFLIX.COM 1234", 169900, "2026-07-16")
	os := occurrences(t, s, f.Family.ID)
	if len(os) != 1 || os[0].Status != models.OccurrencePaid || os[0].DueDate != "2026-07-15" || os[0].Amount != 159900 ||
		os[0].TransactionID == nil || *os[0].TransactionID != paid.ID || *os[0].PaidAmount != 169900 {
		t.Fatalf("occurrences %+v", os)
	}
	got := reload(t, s, bill)
	if got.NextDate != "2026-08-15" || got.LastDate == nil || *got.LastDate != "2026-07-16" || got.Occurrences != 4 ||
		got.Amount != 169900 || got.WasAmount() != 159900 {
		t.Fatalf("bill after payment %+v", got)
	}
	// The same payee again a day later pays nothing: August is weeks away.
	create(f, "NETFLIX.COM 1234", 169900, "2026-07-17")
	if os := occurrences(t, s, f.Family.ID); len(os) != 1 {
		t.Fatalf("paid twice: %+v", os)
	}
	// A deleted payment leaves the occurrence paid, without its link.
	if _, err := s.DeleteTransaction(ctx, f.Family.ID, paid.ID); err != nil {
		t.Fatal(err)
	}
	os = occurrences(t, s, f.Family.ID)
	if len(os) != 1 || os[0].Status != models.OccurrencePaid || os[0].TransactionID != nil {
		t.Fatalf("after delete %+v", os)
	}
}

// TestPaidByBulk: a batch pays each occurrence once, several months of
// one bill in date order, with the batch's other rows untouched; a batch
// large enough for COPY does it too.
func TestPaidByBulk(t *testing.T) {
	for _, size := range []int{5, 80} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			ctx := context.Background()
			s := modelstest.NewStore(t)
			f := modelstest.NewFamily(t, s, "alpha")
			rent := newBill(t, s, f, "Rent", 15000000, 1, "2026-05-01")
			var rows []*models.NewTransaction
			add := func(name string, amount money.Amount, date civil.Date) {
				rows = append(rows, &models.NewTransaction{Row: &models.Transaction{AccountID: f.Account.ID, Date: date,
					Amount: amount, Currency: "USD", Name: name}})
			}
			// Newest first, as a bank sends them: matching goes by date.
			add("RENT 07", 15000000, "2026-07-01")
			add("RENT 06", 15000000, "2026-06-02")
			add("RENT 05", 15000000, "2026-04-29")
			add("RENT 0430", 15000000, "2026-04-30")
			for len(rows) < size {
				add(fmt.Sprintf("Groceries %d", len(rows)), 500000, "2026-06-10")
			}
			if _, err := s.IngestTransactions(ctx, f.Family.ID, rows); err != nil {
				t.Fatal(err)
			}
			os := occurrences(t, s, f.Family.ID)
			if len(os) != 3 {
				t.Fatalf("occurrences %+v", os)
			}
			want := map[civil.Date]string{"2026-05-01": "RENT 05", "2026-06-01": "RENT 06", "2026-07-01": "RENT 07"}
			for _, o := range os {
				var name string
				for _, r := range rows {
					if o.TransactionID != nil && r.Row.ID == *o.TransactionID {
						name = r.Row.Name
					}
				}
				if want[o.DueDate] != name {
					t.Errorf("%s paid by %q, want %q", o.DueDate, name, want[o.DueDate])
				}
			}
			if got := reload(t, s, rent); got.NextDate != "2026-08-01" || got.Occurrences != 6 {
				t.Fatalf("rent %+v", got)
			}
		})
	}
}

// TestPaidByFileImport: a file import's rows pay occurrences in the
// import's step.
func TestPaidByFileImport(t *testing.T) {
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "alpha")
	bill := newBill(t, s, f, "Coffee shop", 123400, 5, "2024-01-05")
	runImport(t, s, newImport(t, s, f, importfile.OFX, ofxSGML))
	os := occurrences(t, s, f.Family.ID)
	if len(os) != 1 || os[0].DueDate != "2024-01-05" || os[0].Status != models.OccurrencePaid || os[0].TransactionID == nil {
		t.Fatalf("occurrences %+v", os)
	}
	if got := reload(t, s, bill); got.NextDate != "2024-02-05" {
		t.Fatalf("bill %+v", got)
	}
}

// TestMarkMissed: an occurrence past its date and grace (5 days for a
// monthly bill) is recorded missed and the bill moves on; one within its
// grace is not; a second run records nothing; paused bills are left.
func TestMarkMissed(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	now := time.Date(2026, 7, 21, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	f := modelstest.NewFamily(t, s, "alpha")
	gym := newBill(t, s, f, "Gym", 300000, 15, "2026-06-15") // June missed, July's grace ended on the 20th
	power := newBill(t, s, f, "Power", 800000, 18, "2026-07-18")
	paused := newBill(t, s, f, "Paused", 100000, 1, "2026-05-01")
	if err := s.SetRecurringStatus(ctx, f.Family.ID, paused.ID, models.RecurringPaused); err != nil {
		t.Fatal(err)
	}
	for run, want := range []int{2, 0} {
		n, err := s.MarkMissedRecurring(ctx, f.Family.ID)
		if err != nil || n != want {
			t.Fatalf("run %d: %d missed, %v; want %d", run, n, err, want)
		}
	}
	os := occurrences(t, s, f.Family.ID)
	if len(os) != 2 || os[0].DueDate != "2026-06-15" || os[1].DueDate != "2026-07-15" || os[0].Status != models.OccurrenceMissed ||
		os[0].Recurring == nil || os[0].Recurring.Account == nil {
		t.Fatalf("occurrences %+v", os)
	}
	if got := reload(t, s, gym); got.NextDate != "2026-08-15" {
		t.Fatalf("gym %+v", got)
	}
	if got := reload(t, s, power); got.NextDate != "2026-07-18" {
		t.Fatalf("power within its grace moved: %+v", got)
	}
	if got := reload(t, s, paused); got.NextDate != "2026-05-01" {
		t.Fatalf("paused moved: %+v", got)
	}
	// A late payment of July's power bill, within its grace, still pays it.
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
		Date: "2026-07-21", Amount: 812300, Currency: "USD", Name: "POWER #4432"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := reload(t, s, power); got.NextDate != "2026-08-18" {
		t.Fatalf("power not paid: %+v", got)
	}
}

// TestUpcomingRecurring: the next 30 days of the family's active items,
// each occurrence by date, an overdue one first.
func TestUpcomingRecurring(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	now := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	f := modelstest.NewFamily(t, s, "alpha")
	newBill(t, s, f, "Rent", 15000000, 30, "2026-06-30")
	weekly := &models.RecurringTransaction{FamilyID: f.Family.ID, Name: "Pay", Amount: -20000000, Currency: "USD",
		Cadence: "biweekly", ExpectedDay: 3, NextDate: "2026-07-03"}
	if err := s.CreateRecurringTransaction(ctx, weekly); err != nil {
		t.Fatal(err)
	}
	up, err := s.UpcomingRecurring(ctx, f.Family.ID, "2026-07-31", 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range up {
		got = append(got, fmt.Sprintf("%s %s %v", u.Date, u.Item.Name, u.Overdue))
	}
	want := "[2026-06-30 Rent true 2026-07-03 Pay false 2026-07-17 Pay false 2026-07-30 Rent false 2026-07-31 Pay false]"
	if fmt.Sprint(got) != want {
		t.Fatalf("upcoming %v\nwant %s", got, want)
	}
	if up[0].Item.Account == nil || up[0].Item.Account.Name != "Checking" {
		t.Fatalf("account not loaded: %+v", up[0].Item)
	}
}
