package simplefin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
)

// TestSyncChangesSplitParent: a bank sync that changes the amount of a
// transaction a person split keeps the parts as they were and marks the
// split for review, the parent still excluded (its parts count); a change
// of day moves the parts with it; a re-run writes nothing new; saving the
// split again clears the mark.
func TestSyncChangesSplitParent(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	fam := s.f.Family.ID
	day := time.Now().UTC().Add(-48 * time.Hour)
	data := &bridgetest.Dataset{Accounts: []bridgetest.Account{{ID: "A1", Name: "Checking", Currency: "USD", Balance: "1000.00",
		BalanceDate: day.Unix(), Org: "First Bank",
		Transactions: []bridgetest.Txn{{ID: "T1", Posted: day.Unix(), Amount: "-180.00", Description: "WAREHOUSE STORE"}}}}}
	s.synced(t, data)
	row := byExternalID(s.imported(t))["T1"]
	if _, err := s.store.SplitTransaction(ctx, fam, row.ID, []models.SplitPart{
		{Name: "Groceries", Amount: 120_0000}, {Name: "Household", Amount: 60_0000}}); err != nil {
		t.Fatal(err)
	}

	state := func() (*models.Transaction, string) {
		t.Helper()
		p, err := s.store.Transaction(ctx, fam, row.ID)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, c := range p.Splits {
			parts = append(parts, c.Name+" "+c.Amount.String()+" "+string(c.Date))
		}
		return p, strings.Join(parts, ", ")
	}
	_, partsBefore := state()

	// The bank now says 185.00, a day later.
	later := day.Add(24 * time.Hour)
	data.Accounts[0].Transactions[0].Amount = "-185.00"
	data.Accounts[0].Transactions[0].Posted = later.Unix()
	s.bridge.SetDataset(data)
	if got, err := s.run(t, s.newSync(t, false)); err != nil || got.Status != models.SyncCompleted || got.TransactionsUpdated != 1 {
		t.Fatalf("sync: %v %+v", err, got)
	}
	p, parts := state()
	newDay := string(civil.DateOf(later))
	wantParts := strings.ReplaceAll(partsBefore, string(civil.DateOf(day)), newDay)
	if p.Amount != 185_0000 || !p.IsSplitParent() || !p.SplitNeedsReview || parts != wantParts || string(p.Date) != newDay {
		t.Fatalf("after the sync: amount %v split %v review %v date %s; parts %q, want %q",
			p.Amount, p.IsSplitParent(), p.SplitNeedsReview, p.Date, parts, wantParts)
	}
	// The list still counts the parts, never the parent.
	list, _, err := s.store.Transactions(ctx, fam, models.TransactionFilter{}, models.Page{Number: 1, Size: 10})
	if err != nil || len(list) != 2 {
		t.Fatalf("list after the sync: %d rows, %v", len(list), err)
	}

	// Again: nothing changes, the mark stays.
	if got, err := s.run(t, s.newSync(t, false)); err != nil || got.TransactionsUpdated != 0 {
		t.Fatalf("re-run: %v %+v", err, got)
	}
	if p2, parts2 := state(); !p2.SplitNeedsReview || parts2 != parts || !p2.Excluded {
		t.Fatalf("after the re-run: review %v excluded %v parts %q", p2.SplitNeedsReview, p2.Excluded, parts2)
	}

	// The person reviews the split: saved again to the new amount.
	if _, err := s.store.ReplaceSplit(ctx, fam, row.ID, []models.SplitPart{
		{Name: "Groceries", Amount: 125_0000}, {Name: "Household", Amount: 60_0000}}); err != nil {
		t.Fatal(err)
	}
	if p3, _ := state(); p3.SplitNeedsReview || !p3.IsSplitParent() {
		t.Fatalf("after the review: review %v", p3.SplitNeedsReview)
	}
}
