package models_test

import (
	"context"
	"errors"
	"testing"

	"coffer/models"
	"coffer/models/modelstest"
	"coffer/models/money"
)

// addRows stores transactions of these amounts on f's account, as rows
// written before amounts were bounded (the store takes what it is given).
func addRows(t *testing.T, s *models.Store, f *modelstest.FamilyFixture, amounts ...money.Amount) []*models.Transaction {
	t.Helper()
	var out []*models.Transaction
	for _, a := range amounts {
		row, _, err := s.CreateTransaction(context.Background(), &models.Transaction{FamilyID: f.Family.ID, AccountID: f.Account.ID,
			Date: "2024-01-01", Amount: a, Currency: "USD", Name: "big"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	return out
}

// TestRecalculateBalanceExact: amounts whose running sum leaves the int64
// range on the way (SQLite's SUM raised "integer overflow") give the exact
// balance when the total fits.
func TestRecalculateBalanceExact(t *testing.T) {
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "exact")
	addRows(t, s, f, 5e18, 5e18, -9e18, -1234, 7)
	if err := s.RecalculateBalance(t.Context(), f.Family.ID, f.Account.ID); err != nil {
		t.Fatal(err)
	}
	a, err := s.Account(t.Context(), f.Family.ID, f.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := money.Amount(-1e18 + 1234 - 7); a.Balance != want || a.CashBalance != want || a.BalanceError != nil {
		t.Fatalf("balance %d, cash %d, error %v; want %d", a.Balance, a.CashBalance, a.BalanceError, want)
	}
}

// TestRecalculateBalanceOverflow: two transactions of 900 trillion (now
// refused by ParseAmount, but possible in older data) add up to more than
// a balance holds. The account keeps its last balance that fit (the first
// row's, kept by its write) and says why; the balance comes back once the
// transactions fit again.
func TestRecalculateBalanceOverflow(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "overflow")
	rows := addRows(t, s, f, 9e18)
	if _, err := s.RefreshBalance(ctx, f.Family.ID, f.Account.ID); err != nil { // as the queue does after each write
		t.Fatal(err)
	}
	rows = append(rows, addRows(t, s, f, 9e18)...)
	for range 2 {
		err := s.RecalculateBalance(ctx, f.Family.ID, f.Account.ID)
		if !errors.Is(err, models.ErrBalanceOverflow) {
			t.Fatalf("err = %v, want ErrBalanceOverflow", err)
		}
		a, _ := s.Account(ctx, f.Family.ID, f.Account.ID)
		if a.BalanceError == nil || *a.BalanceError != models.BalanceOverflow || a.Balance != -9e18 {
			t.Fatalf("balance %d, error %v; want the last balance (-9e18) marked overflow", a.Balance, a.BalanceError)
		}
	}
	if _, err := s.DeleteTransaction(ctx, f.Family.ID, rows[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RecalculateBalance(ctx, f.Family.ID, f.Account.ID); err != nil {
		t.Fatal(err)
	}
	a, _ := s.Account(ctx, f.Family.ID, f.Account.ID)
	if a.BalanceError != nil || a.Balance != -9e18 {
		t.Fatalf("balance %d, error %v; want -9e18 and no error", a.Balance, a.BalanceError)
	}
}
