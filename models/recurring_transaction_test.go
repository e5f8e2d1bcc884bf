package models_test

import (
	"context"
	"errors"
	"testing"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
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
