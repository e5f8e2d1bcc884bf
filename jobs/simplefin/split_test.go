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

// TestSyncSplitParentWorkerKilled: a worker dies holding the step that
// changes a split parent's amount; the step taken again once its lease
// runs out ends as an undisturbed run does: the parts once, as they were,
// the parent excluded with its new amount and the split marked for review.
func TestSyncSplitParentWorkerKilled(t *testing.T) {
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
	data.Accounts[0].Transactions[0].Amount = "-185.00"
	s.bridge.SetDataset(data)
	sy := s.newSync(t, false)
	if err := s.h.Sync(ctx, task(t, syncTask(sy))); err != nil {
		t.Fatal(err)
	}
	parent, _ := s.store.Sync(ctx, fam, sy.ID)
	if _, err := s.store.LeaseSync(ctx, fam, parent.Children[0].ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := s.run(t, sy); err != nil || got.Status != models.SyncRunning {
		t.Fatalf("while leased: %v %s", err, got.Status)
	}
	if p, _ := s.store.Transaction(ctx, fam, row.ID); p.Amount != 180_0000 || p.SplitNeedsReview {
		t.Fatalf("before the step ran: amount %v review %v", p.Amount, p.SplitNeedsReview)
	}
	realNow := s.store.Now
	s.store.Now = func() time.Time { return realNow().Add(2 * time.Minute) }
	if got, err := s.run(t, sy); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("after the lease ran out: %v %+v", err, got)
	}
	p, err := s.store.Transaction(ctx, fam, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Amount != 185_0000 || !p.IsSplitParent() || !p.SplitNeedsReview || len(p.Splits) != 2 ||
		p.Splits[0].Amount != 120_0000 || p.Splits[1].Amount != 60_0000 {
		t.Fatalf("after the retried step: amount %v split %v review %v parts %d", p.Amount, p.IsSplitParent(), p.SplitNeedsReview, len(p.Splits))
	}
	if n := len(s.imported(t)); n != 1 {
		t.Fatalf("%d imported rows, want 1", n)
	}
}
