package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

func TestRecurringTransactionCRUD(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	alpha := modelstest.NewFamily(t, s, "alpha")
	beta := modelstest.NewFamily(t, s, "beta")

	r := &models.RecurringTransaction{FamilyID: alpha.Family.ID, AccountID: &alpha.Account.ID, Name: " Rent ",
		Amount: 15000000, Currency: "USD", Cadence: "monthly", ExpectedDay: 1, NextDate: "2026-07-01", Manual: true}
	if err := s.CreateRecurringTransaction(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Status != models.RecurringActive || r.Name != "Rent" || r.MatchKey != "n:rent" {
		t.Fatalf("created %+v", r)
	}
	got, err := s.RecurringTransaction(ctx, alpha.Family.ID, r.ID)
	if err != nil || got.Account == nil || got.Account.Name != "Checking" || got.NextDate != "2026-07-01" {
		t.Fatalf("read %+v, %v", got, err)
	}
	if _, err := s.RecurringTransaction(ctx, beta.Family.ID, r.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("beta reads alpha's: %v", err)
	}
	if err := s.DeleteRecurringTransaction(ctx, beta.Family.ID, r.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("beta deletes alpha's: %v", err)
	}

	got.NextDate, got.Status = civil.Date("2026-08-01"), models.RecurringPaused
	if err := s.UpdateRecurringTransaction(ctx, got, "next_expected_date", "status"); err != nil {
		t.Fatal(err)
	}
	list, n, err := s.RecurringTransactions(ctx, alpha.Family.ID, models.RecurringFilter{Status: models.RecurringPaused, AccountID: &alpha.Account.ID}, models.Page{Number: 1, Size: 25})
	if err != nil || n != 1 || len(list) != 1 || list[0].NextDate != "2026-08-01" {
		t.Fatalf("list %+v %d %v", list, n, err)
	}
	if _, n, _ := s.RecurringTransactions(ctx, alpha.Family.ID, models.RecurringFilter{Status: models.RecurringActive}, models.Page{Number: 1, Size: 25}); n != 0 {
		t.Fatalf("active filter matched %d", n)
	}
	if _, n, _ := s.RecurringTransactions(ctx, beta.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 25}); n != 0 {
		t.Fatalf("beta lists %d of alpha's", n)
	}
	if err := s.DeleteRecurringTransaction(ctx, alpha.Family.ID, r.ID); err != nil {
		t.Fatal(err)
	}
}

func TestRecurringTransactionInvalid(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	alpha := modelstest.NewFamily(t, s, "alpha")
	beta := modelstest.NewFamily(t, s, "beta")
	ok := func() *models.RecurringTransaction {
		return &models.RecurringTransaction{FamilyID: alpha.Family.ID, Name: "Gym", Amount: 300000, Currency: "USD",
			Cadence: "monthly", ExpectedDay: 10, NextDate: "2026-07-10"}
	}
	for name, change := range map[string]func(r *models.RecurringTransaction){
		"zero amount":   func(r *models.RecurringTransaction) { r.Amount = 0 },
		"daily cadence": func(r *models.RecurringTransaction) { r.Cadence = "daily" },
		"bad status":    func(r *models.RecurringTransaction) { r.Status = "done" },
		"day 32":        func(r *models.RecurringTransaction) { r.ExpectedDay = 32 },
		"no next date":  func(r *models.RecurringTransaction) { r.NextDate = "" },
		"no name":       func(r *models.RecurringTransaction) { r.Name = "  " },
		"bad currency":  func(r *models.RecurringTransaction) { r.Currency = "XXY" },
	} {
		r := ok()
		change(r)
		var inv *models.InvalidError
		if err := s.CreateRecurringTransaction(ctx, r); !errors.As(err, &inv) {
			t.Errorf("%s: %v, want an InvalidError", name, err)
		}
	}
	r := ok()
	r.AccountID = &beta.Account.ID
	if err := s.CreateRecurringTransaction(ctx, r); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("beta's account: %v, want ErrNotFound", err)
	}
}

func TestDetectRecurringUpsert(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	s.Now = func() time.Time { return time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC) }
	alpha := modelstest.NewFamily(t, s, "alpha")
	beta := modelstest.NewFamily(t, s, "beta")
	add := func(name, date string, amount money.Amount) {
		t.Helper()
		tx := &models.Transaction{FamilyID: alpha.Family.ID, AccountID: alpha.Account.ID, Date: civil.Date(date),
			Amount: amount, Currency: "USD", Name: name}
		if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"2026-03-01", "2026-04-01", "2026-05-01"} {
		add("Rent", d, 15000000)
	}
	for _, d := range []string{"2026-02-15", "2026-03-15", "2026-04-15"} {
		add("NETFLIX.COM 123", d, 99900)
	}
	add("NETFLIX.COM 456", "2026-05-15", 159900)

	res, err := s.DetectRecurring(ctx, alpha.Family.ID)
	if err != nil || res != (models.DetectResult{Found: 2, Created: 2}) {
		t.Fatalf("first run %+v, %v", res, err)
	}
	list, _, err := s.RecurringTransactions(ctx, alpha.Family.ID, models.RecurringFilter{Status: models.RecurringSuggested}, models.Page{Number: 1, Size: 25})
	if err != nil || len(list) != 2 {
		t.Fatalf("suggested %+v, %v", list, err)
	}
	var netflix, rent models.RecurringTransaction
	for _, r := range list {
		if r.MatchKey == "n:rent" {
			rent = r
		} else {
			netflix = r
		}
	}
	if rent.NextDate != "2026-06-01" || rent.Occurrences != 3 || rent.Manual || rent.Cadence != "monthly" {
		t.Errorf("rent %+v", rent)
	}
	if netflix.Amount != 159900 || netflix.PreviousAmount == nil || *netflix.PreviousAmount != 99900 || netflix.NextDate != "2026-06-15" {
		t.Errorf("netflix %+v", netflix)
	}
	if res, err := s.DetectRecurring(ctx, alpha.Family.ID); err != nil || res != (models.DetectResult{Found: 2}) {
		t.Fatalf("second run %+v, %v: want nothing written", res, err)
	}
	if _, n, _ := s.RecurringTransactions(ctx, beta.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 25}); n != 0 {
		t.Fatalf("beta has %d", n)
	}

	// Dismissed stays dismissed; confirmed follows the new occurrence.
	if err := s.SetRecurringStatus(ctx, alpha.Family.ID, netflix.ID, models.RecurringEnded); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRecurringStatus(ctx, alpha.Family.ID, rent.ID, models.RecurringActive); err != nil {
		t.Fatal(err)
	}
	add("Rent", "2026-06-02", 15000000)
	add("NETFLIX.COM 789", "2026-06-09", 159900)
	// The new rent paid June's occurrence as it came in (the pipeline's pay
	// step), so the detector finds the active series up to date already.
	if res, err := s.DetectRecurring(ctx, alpha.Family.ID); err != nil || res != (models.DetectResult{Found: 2}) {
		t.Fatalf("third run %+v, %v", res, err)
	}
	all, n, _ := s.RecurringTransactions(ctx, alpha.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 25})
	if n != 2 {
		t.Fatalf("%d rows, want 2: %+v", n, all)
	}
	got, _ := s.RecurringTransaction(ctx, alpha.Family.ID, rent.ID)
	// Paid a day late, it stays on its day: next on 1 July.
	if got.Status != models.RecurringActive || got.Occurrences != 4 || *got.LastDate != "2026-06-02" || got.NextDate != "2026-07-01" {
		t.Errorf("rent after a new occurrence %+v", got)
	}
	got, _ = s.RecurringTransaction(ctx, alpha.Family.ID, netflix.ID)
	if got.Status != models.RecurringEnded || *got.LastDate != "2026-05-15" {
		t.Errorf("dismissed netflix changed: %+v", got)
	}
}

// TestDetectRecurringLeavesOutTransfers: a monthly transfer to savings is
// not a bill: its legs are left out of detection.
func TestDetectRecurringLeavesOutTransfers(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	s.Now = func() time.Time { return time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC) }
	alpha := modelstest.NewFamily(t, s, "alpha")
	savings := &models.Account{FamilyID: alpha.Family.ID, Name: "Savings", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, savings); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"2026-03-05", "2026-04-05", "2026-05-05"} {
		if _, err := s.CreateTransfer(ctx, alpha.Family.ID, models.NewTransfer{FromAccountID: alpha.Account.ID,
			ToAccountID: savings.ID, Amount: 2000000, ToAmount: 2000000, Date: civil.Date(d), Name: "Monthly saving"}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := s.DetectRecurring(ctx, alpha.Family.ID); err != nil || res.Found != 0 {
		t.Fatalf("detect %+v, %v: want nothing found", res, err)
	}
}
