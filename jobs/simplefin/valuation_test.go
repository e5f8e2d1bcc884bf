package simplefin_test

import (
	"context"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestSyncAfterValuation: on a synced account, the bank's balance is the
// truth. While the opening balance is the latest valuation a sync moves
// it (the imported history then ends at the bank's figure); after a
// person set a later value, a sync records the difference as today's
// valuation, a balance adjustment: the opening stays, no transaction is
// made, and the income statement never sees it.
func TestSyncAfterValuation(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	fam := s.f.Family.ID
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "T", Posted: time.Now().Add(-48 * time.Hour).Unix(), Amount: "-3.00", Description: "SHOP"}))
	if _, err := s.run(t, s.first); err != nil {
		t.Fatal(err)
	}
	pas, err := s.store.ProviderAccounts(ctx, fam, s.conn.ID)
	if err != nil || len(pas) != 1 {
		t.Fatalf("provider accounts %d, %v", len(pas), err)
	}
	id := *pas[0].AccountID
	balance := func() money.Amount {
		t.Helper()
		if err := s.store.RecalculateBalance(ctx, fam, id); err != nil {
			t.Fatal(err)
		}
		a, err := s.store.Account(ctx, fam, id)
		if err != nil {
			t.Fatal(err)
		}
		return a.Balance
	}
	if got := balance(); got != money.Amount(10_0000) {
		t.Fatalf("after the first sync: %v, want the bank's 10", got)
	}
	a, err := s.store.Account(ctx, fam, id)
	if err != nil {
		t.Fatal(err)
	}
	opening := a.OpeningBalance // moved so that the history ends at the bank's figure

	// A person says the account held 50 yesterday; the bank still says 10.
	yesterday := civil.DateOf(time.Now().UTC().AddDate(0, 0, -1))
	if _, err := s.store.CreateValuation(ctx, &models.Valuation{FamilyID: fam, AccountID: id, Date: &yesterday, Amount: money.Amount(50_0000)}); err != nil {
		t.Fatal(err)
	}
	if got := balance(); got != money.Amount(50_0000) {
		t.Fatalf("after the valuation: %v, want 50", got)
	}
	if _, err := s.run(t, s.newSync(t, false)); err != nil {
		t.Fatal(err)
	}
	if got := balance(); got != money.Amount(10_0000) {
		t.Errorf("after the next sync: %v, want the bank's 10", got)
	}
	vs, _, err := s.store.Valuations(ctx, fam, models.ValuationFilter{AccountID: &id}, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	today := civil.DateOf(time.Now().UTC())
	if len(vs) != 3 || vs[0].Date == nil || *vs[0].Date != today || vs[0].Amount != money.Amount(10_0000) ||
		vs[0].Adjustment != money.Amount(-40_0000) || vs[2].Kind != models.ValuationOpening || vs[2].Amount != opening {
		t.Errorf("valuations %+v", vs)
	}
	txs, n, err := s.store.Transactions(ctx, fam, models.TransactionFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil || n != 1 || len(txs) != 1 {
		t.Errorf("transactions %d %v: the adjustment is not one", n, err)
	}
	cells, err := s.store.IncomeStatement(ctx, fam, models.Period{From: civil.DateOf(time.Now().UTC().AddDate(0, -1, 0)), To: today})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if c.Total != money.Amount(3_0000) {
			t.Errorf("income statement cell %+v: only the 3.00 shop counts", c)
		}
	}
}
