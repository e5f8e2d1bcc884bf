package simplefin_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestDisconnectWhileSyncing: a disconnect between the fetch and the
// import ends the sync as failed "disconnected", nothing is imported and
// the access URL is never used again; the data already imported stays
// until a purge, which removes the imported rows and the accounts they
// filled but not manual rows.
func TestDisconnectWhileSyncing(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.bridge.SetDataset(bridgetest.Generate(9, 2, 20, 20, time.Now().UTC()))
	if got, err := s.run(t, s.first); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("first: %v", err)
	}
	second := s.newSync(t, false)
	if err := s.h.Sync(ctx, task(t, syncTask(second))); err != nil {
		t.Fatal(err)
	}
	ended, err := s.store.DisconnectConnection(ctx, s.f.Family.ID, s.conn.ID)
	if err != nil || len(ended) != 3 { // the parent and its two steps
		t.Fatalf("disconnect: %v, %d active syncs", err, len(ended))
	}
	got, err := s.run(t, second)
	if err != nil || got.Status != models.SyncFailed || *got.Error != "disconnected" {
		t.Fatalf("after disconnect: %v %s %v", err, got.Status, got.Error)
	}
	for _, c := range got.Children {
		if c.Status != models.SyncPending && c.Status != models.SyncFailed {
			t.Fatalf("step %s ran: %s", c.ID, c.Status)
		}
	}
	if len(s.imported(t)) != 40 {
		t.Fatalf("%d rows kept, want 40", len(s.imported(t)))
	}
	requests, _ := s.bridge.AccountsRequests()
	third, _, _ := s.store.CreateSync(ctx, &models.Sync{FamilyID: s.f.Family.ID, ConnectionID: s.conn.ID, Trigger: models.TriggerManual})
	if got, _ := s.run(t, third); got.Status != models.SyncFailed {
		t.Fatalf("sync of a disconnected connection: %s", got.Status)
	}
	if n, _ := s.bridge.AccountsRequests(); n != requests {
		t.Fatal("a disconnected connection's access URL was used")
	}

	manual := &models.Transaction{FamilyID: s.f.Family.ID, AccountID: s.f.Account.ID, Date: "2026-01-01", Amount: 100, Currency: "USD", Name: "cash"}
	if _, err := s.store.CreateTransaction(ctx, manual, nil); err != nil {
		t.Fatal(err)
	}
	purge, _ := simplefin.NewPurgeTask(s.f.Family.ID, s.conn.ID)
	for i := 0; i < 2; i++ {
		if err := s.h.Purge(ctx, asynq.NewTask(purge.Type(), purge.Payload())); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.imported(t)); n != 0 {
		t.Fatalf("%d imported rows left", n)
	}
	pas, _ := s.store.ProviderAccounts(ctx, s.f.Family.ID, s.conn.ID)
	accts, total, _ := s.store.Accounts(ctx, s.f.Family.ID, models.Page{Number: 1, Size: 10})
	if len(pas) != 0 || total != 1 || accts[0].ID != s.f.Account.ID {
		t.Fatalf("%d remote accounts, %d ledger accounts left", len(pas), total)
	}
}
