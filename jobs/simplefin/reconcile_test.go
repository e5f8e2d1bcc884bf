package simplefin_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models/civil"
)

// TestReconciledRowKeptBySync: the bank re-sending a row a finished
// reconciliation locked, with another amount and description, changes
// nothing of it (counted as skipped); an unlocked row beside it takes the
// bank's change as usual.
func TestReconciledRowKeptBySync(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	day := time.Now().UTC().Add(-96 * time.Hour)
	txn := func(id, amount, desc string) bridgetest.Txn {
		return bridgetest.Txn{ID: id, Posted: day.Unix(), Amount: amount, Description: desc}
	}
	s.synced(t, oneAccount(txn("T1", "-12.00", "GROCER"), txn("T2", "-3.00", "KIOSK")))
	rows := byExternalID(s.imported(t))
	locked, free := rows["T1"], rows["T2"]
	fam, acct, user := s.f.Family.ID, locked.AccountID, s.f.User.ID

	statement := civil.DateOf(day)
	if err := s.store.SetCleared(ctx, fam, acct, nil, []uuid.UUID{locked.ID}); err != nil {
		t.Fatal(err)
	}
	cleared, err := s.store.ClearedBalance(ctx, fam, acct, statement)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.StartReconciliation(ctx, fam, acct, user, statement, cleared); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.FinishReconciliation(ctx, fam, acct, user); err != nil {
		t.Fatal(err)
	}

	s.bridge.SetDataset(oneAccount(txn("T1", "-99.00", "GROCER CHANGED"), txn("T2", "-4.00", "KIOSK CHANGED")))
	got, err := s.run(t, s.newSync(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if got.TransactionsUpdated != 1 || got.TransactionsSkipped < 1 {
		t.Fatalf("counts: %+v, want T2 updated and T1 skipped", got.SyncCounts)
	}
	rows = byExternalID(s.imported(t))
	if r := rows["T1"]; r.Amount != locked.Amount || r.Name != locked.Name || r.ReconciliationID == nil {
		t.Fatalf("the locked row changed: amount %v name %q reconciliation %v", r.Amount, r.Name, r.ReconciliationID)
	}
	if r := rows["T2"]; r.Amount == free.Amount || r.Name != "KIOSK CHANGED" {
		t.Fatalf("the unlocked row was not updated: amount %v name %q", r.Amount, r.Name)
	}
}
