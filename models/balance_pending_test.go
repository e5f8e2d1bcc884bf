package models_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"coffer/models"
	"coffer/models/civil"
	"coffer/models/modelstest"
	"coffer/models/money"
)

func pendingMoves(t *testing.T, s *models.Store, id uuid.UUID) int64 {
	t.Helper()
	n, err := s.DB().NewSelect().Table("balance_moves_pending").Where("account_id = ?", id).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func storedBalance(t *testing.T, s *models.Store, familyID, id uuid.UUID) money.Amount {
	t.Helper()
	a, err := s.Account(context.Background(), familyID, id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

func noDrift(t *testing.T, s *models.Store, familyID, id uuid.UUID) {
	t.Helper()
	if drifts, err := s.CheckBalance(context.Background(), familyID, id, false); err != nil || len(drifts) != 0 {
		t.Fatalf("check: %v %+v", err, drifts)
	}
}

// TestBalanceMovesWaitForTheRefresh: on PostgreSQL a write leaves its
// account's row alone and appends its move to balance_moves_pending; the
// refresh every write queues applies what waits, once, and so does a
// valuation's walk, which counts it with the rows instead. A deleted
// account takes its waiting moves with it.
func TestBalanceMovesWaitForTheRefresh(t *testing.T) {
	if modelstest.Embedded() {
		t.Skip("SQLite has one writer at a time: its writes move the balance themselves")
	}
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "pending")
	fam, id := f.Family.ID, f.Account.ID
	create := func(d civil.Date, amount money.Amount) *models.Transaction {
		t.Helper()
		tx := &models.Transaction{FamilyID: fam, AccountID: id, Date: d, Amount: amount, Currency: "USD", Name: fmt.Sprint("row ", amount)}
		if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	refresh := func() {
		t.Helper()
		if _, err := s.RefreshBalance(ctx, fam, id); err != nil {
			t.Fatal(err)
		}
		if n := pendingMoves(t, s, id); n != 0 {
			t.Fatalf("moves left waiting after the refresh: %d", n)
		}
	}
	refresh()
	base := storedBalance(t, s, fam, id)

	// A depository account's balance falls by a row's amount (spending is positive).
	first := create("2024-03-01", 10_0000)
	waiting := create("2024-03-02", 2_0000)
	first.Amount = 11_0000
	if _, err := s.UpdateTransaction(ctx, first, []string{"amount"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := pendingMoves(t, s, id); n != 3 {
		t.Fatalf("moves waiting: %d, want 3 (two creates and an edit)", n)
	}
	if got := storedBalance(t, s, fam, id); got != base {
		t.Fatalf("stored balance moved by a write itself: %v, want %v", got, base)
	}
	refresh()
	if got, want := storedBalance(t, s, fam, id), base-11_0000-2_0000; got != want {
		t.Fatalf("balance after the refresh %v, want %v", got, want)
	}
	noDrift(t, s, fam, id)
	if _, err := s.DeleteTransaction(ctx, fam, waiting.ID); err != nil {
		t.Fatal(err)
	}
	refresh()
	if got, want := storedBalance(t, s, fam, id), base-11_0000; got != want {
		t.Fatalf("balance after a deletion %v, want %v", got, want)
	}

	// A move waiting when a valuation rewrites the account from its walk
	// is counted by the walk, not again after it; and one dated before
	// the valuation moves its adjustment, not the balance.
	vd := civil.Date("2024-03-10")
	if _, err := s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: id, Date: &vd, Amount: 1000_0000, Kind: models.ValuationManual}); err != nil {
		t.Fatal(err)
	}
	create("2024-03-11", 3_0000)
	create("2024-03-05", 5_0000)
	vd2 := civil.Date("2024-03-20")
	if _, err := s.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: id, Date: &vd2, Amount: 900_0000, Kind: models.ValuationManual}); err != nil {
		t.Fatal(err)
	}
	if n := pendingMoves(t, s, id); n != 0 {
		t.Fatalf("moves left waiting after a valuation: %d", n)
	}
	noDrift(t, s, fam, id)
	create("2024-03-06", 7_0000) // before the newest valuation: its adjustment moves
	noDrift(t, s, fam, id)       // the check applies what waits before it compares

	// An account deleted with moves waiting takes them with it.
	other := &models.Account{FamilyID: fam, Name: "Gone", AccountType: "depository", Currency: "USD"}
	if err := s.CreateAccount(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateTransaction(ctx, &models.Transaction{FamilyID: fam, AccountID: other.ID, Date: "2024-03-01", Amount: 1, Currency: "USD", Name: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := pendingMoves(t, s, other.ID); n != 1 {
		t.Fatalf("moves waiting for the other account: %d", n)
	}
	if err := s.DeleteAccount(ctx, fam, other.ID); err != nil {
		t.Fatal(err)
	}
	if n := pendingMoves(t, s, other.ID); n != 0 {
		t.Fatalf("moves of a deleted account: %d", n)
	}
}

// TestConcurrentCreatesKeepTheBalance: many writers on one account at once,
// with refreshes running among them as the queue runs them, end with the
// balance of the full walk once the last refresh has run.
func TestConcurrentCreatesKeepTheBalance(t *testing.T) {
	ctx := context.Background()
	s := modelstest.NewStore(t)
	f := modelstest.NewFamily(t, s, "concurrent")
	fam, id := f.Family.ID, f.Account.ID
	const writers, each = 16, 15
	var wg sync.WaitGroup
	done := make(chan struct{})
	refreshed := make(chan error, 1)
	go func() { // the queue's refreshes, while the writes go on
		for {
			select {
			case <-done:
				refreshed <- nil
				return
			default:
			}
			if _, err := s.RefreshBalance(ctx, fam, id); err != nil {
				refreshed <- err
				return
			}
		}
	}()
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				d := civil.Date(fmt.Sprintf("2024-04-%02d", 1+i))
				tx := &models.Transaction{FamilyID: fam, AccountID: id, Date: d, Amount: money.Amount(1000*w + i + 1), Currency: "USD", Name: "c"}
				if _, _, err := s.CreateTransaction(ctx, tx, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := s.RefreshBalance(ctx, fam, id); err != nil {
		t.Fatal(err)
	}
	var want money.Amount
	for w := range writers {
		for i := range each {
			want -= money.Amount(1000*w + i + 1)
		}
	}
	if got := storedBalance(t, s, fam, id); got != want {
		t.Fatalf("balance after %d concurrent creates: %v, want %v", writers*each, got, want)
	}
	noDrift(t, s, fam, id)
}
