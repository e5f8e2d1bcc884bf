package models_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/modelstest"
)

// TestBalanceChangeReported: each of the store's writers that moves a
// balance reports the accounts to OnBalanceChange, and only once its
// transaction has committed: a write inside RunInTx is reported at the
// commit, a rolled back one never.
func TestBalanceChangeReported(t *testing.T) {
	s := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, s, "balance-change")
	fam, acct := f.Family.ID, f.Account.ID
	var got []uuid.UUID
	s.OnBalanceChange(func(_ context.Context, familyID uuid.UUID, ids []uuid.UUID) {
		if familyID != fam {
			t.Errorf("reported for family %s", familyID)
		}
		got = append(got, ids...)
	})
	reports := func(what string, want []uuid.UUID, write func() error) {
		t.Helper()
		got = nil
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		slices.SortFunc(got, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		slices.SortFunc(want, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: reported %v, want %v", what, got, want)
		}
	}
	savings := &models.Account{FamilyID: fam, Name: "Savings", AccountType: "depository", Currency: "USD"}
	reports("create account", nil, func() error { return s.CreateAccount(ctx, savings) })
	tx := &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-01", Amount: 100, Currency: "USD", Name: "x"}
	reports("create transaction", []uuid.UUID{acct}, func() error { _, _, err := s.CreateTransaction(ctx, tx, nil); return err })
	tx.AccountID = savings.ID
	reports("move it", []uuid.UUID{acct, savings.ID}, func() error {
		_, err := s.UpdateTransaction(ctx, tx, []string{"account_id"}, nil)
		return err
	})
	reports("delete it", []uuid.UUID{savings.ID}, func() error { _, err := s.DeleteTransaction(ctx, fam, tx.ID); return err })
	var transfer uuid.UUID
	reports("transfer", []uuid.UUID{acct, savings.ID}, func() error {
		var err error
		transfer, err = s.CreateTransfer(ctx, fam, models.NewTransfer{FromAccountID: acct, ToAccountID: savings.ID, Amount: 5, Date: "2024-01-02"})
		return err
	})
	reports("delete transfer", []uuid.UUID{acct, savings.ID}, func() error { _, err := s.DeleteTransfer(ctx, fam, transfer); return err })
	savings.OpeningBalance = 7
	reports("opening balance", []uuid.UUID{savings.ID}, func() error { return s.UpdateAccount(ctx, savings, "opening_balance") })
	reports("name only", nil, func() error { return s.UpdateAccount(ctx, savings, "name") })
	split := &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-01", Amount: 100, Currency: "USD", Name: "split"}
	if _, _, err := s.CreateTransaction(ctx, split, nil); err != nil {
		t.Fatal(err)
	}
	parts := []models.SplitPart{{Name: "a", Amount: 60}, {Name: "b", Amount: 40}}
	reports("split", []uuid.UUID{acct}, func() error { _, err := s.SplitTransaction(ctx, fam, split.ID, parts); return err })
	reports("split again", []uuid.UUID{acct}, func() error { _, err := s.ReplaceSplit(ctx, fam, split.ID, parts); return err })
	reports("unsplit", []uuid.UUID{acct}, func() error { _, err := s.Unsplit(ctx, fam, split.ID); return err })
	reports("a refused split", nil, func() error {
		if _, err := s.SplitTransaction(ctx, fam, split.ID, parts[:1]); err == nil {
			return errors.New("a split that does not add up was accepted")
		}
		return nil
	})

	// Inside a transaction: nothing before the commit, all of it after.
	reports("in a transaction", []uuid.UUID{acct}, func() error {
		return s.RunInTx(ctx, func(in *models.Store) error {
			_, _, err := in.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-03",
				Amount: 1, Currency: "USD", Name: "y"}, nil)
			if len(got) != 0 {
				t.Errorf("reported %v before the commit", got)
			}
			return err
		})
	})
	rolledBack := errors.New("rolled back")
	got = nil
	err := s.RunInTx(ctx, func(in *models.Store) error {
		if _, _, err := in.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-04",
			Amount: 1, Currency: "USD", Name: "z"}, nil); err != nil {
			return err
		}
		return rolledBack
	})
	if !errors.Is(err, rolledBack) || len(got) != 0 {
		t.Errorf("a rolled back write: %v, reported %v", err, got)
	}
	// The same through Begin and Commit or Rollback.
	for _, commit := range []bool{true, false} {
		got = nil
		in, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := in.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: acct, Date: "2024-01-05",
			Amount: 1, Currency: "USD", Name: "w"}, nil); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = in.Commit(ctx)
		} else {
			err = in.Rollback()
		}
		if err != nil || len(got) != map[bool]int{true: 1, false: 0}[commit] {
			t.Errorf("commit %v: %v, reported %v", commit, err, got)
		}
	}
}
