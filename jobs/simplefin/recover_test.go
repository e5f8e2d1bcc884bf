package simplefin_test

import (
	"context"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// TestPaymentRequiredRecovers: a 402 fails the sync without a retry; the
// next answer that is an account set makes the connection active again.
func TestPaymentRequiredRecovers(t *testing.T) {
	s := newSyncSetup(t)
	s.bridge.SetAccounts(bridgetest.Accounts402, "")
	if got, err := s.run(t, s.first); err != nil || got.Status != models.SyncFailed {
		t.Fatalf("402: %v %s", err, got.Status)
	}
	if c := reload(t, s.store, s.conn); c.Status != models.ConnPaymentRequired {
		t.Fatalf("status %s", c.Status)
	}
	s.bridge.SetAccounts(bridgetest.AccountsNormally, "")
	s.bridge.SetDataset(bridgetest.Generate(3, 1, 3, 3, time.Now().UTC()))
	if got, err := s.run(t, s.newSync(t, false)); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("probe: %v %s", err, got.Status)
	}
	if c := reload(t, s.store, s.conn); c.Status != models.ConnActive || c.StatusMessage != nil {
		t.Fatalf("after a 200: %s %v", c.Status, c.StatusMessage)
	}
}

// TestReconnectInPlace: a revoked access URL needs a reconnect; a new
// token restores the same connection, its remote accounts and links, and
// the next sync adds no duplicate.
func TestReconnectInPlace(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	data := bridgetest.Generate(4, 2, 10, 10, time.Now().UTC())
	s.synced(t, data)
	before, _ := s.store.ProviderAccounts(ctx, s.f.Family.ID, s.conn.ID)
	s.bridge.Revoke("c1")
	if got, err := s.run(t, s.newSync(t, false)); err != nil || got.Status != models.SyncFailed {
		t.Fatalf("revoked: %v", err)
	}
	c := reload(t, s.store, s.conn)
	if c.Status != models.ConnRequiresReconnect {
		t.Fatalf("status %s", c.Status)
	}
	if err := s.store.ReconnectConnection(ctx, c, s.bridge.Token("c1b")); err != nil {
		t.Fatal(err)
	}
	if err := runClaim(t, s.h, c); err != nil {
		t.Fatal(err)
	}
	c = reload(t, s.store, s.conn)
	if c.Status != models.ConnActive || c.ID != s.conn.ID {
		t.Fatalf("after reconnect: %s", c.Status)
	}
	if access, _ := s.store.AccessURL(c); access != s.bridge.AccessURL("c1b") {
		t.Fatal("the access URL was not replaced")
	}
	s.h.Redis.Del(ctx, "simplefin:budget:{"+c.ID.String()+"}")
	sy, err := s.store.ActiveSync(ctx, s.f.Family.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.run(t, sy)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != 0 {
		t.Fatalf("sync after reconnect: %v %s %+v", err, got.Status, got.SyncCounts)
	}
	after, _ := s.store.ProviderAccounts(ctx, s.f.Family.ID, s.conn.ID)
	if len(after) != len(before) || *after[0].AccountID != *before[0].AccountID || len(s.imported(t)) != data.Count() {
		t.Fatalf("accounts %d -> %d, %d rows", len(before), len(after), len(s.imported(t)))
	}
}

// TestReadTimeout: an answer that never comes is tried 4 times with
// backoff, every attempt counted; then the sync goes back for an asynq
// retry with nothing written.
func TestReadTimeout(t *testing.T) {
	s := newSyncSetup(t)
	s.h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true,
		AccountsTimeout: 100 * time.Millisecond, RetryInitial: time.Millisecond})
	s.bridge.SetAccounts(bridgetest.AccountsHang, "")
	got, err := s.run(t, s.first)
	if err == nil || got.Status != models.SyncPending || got.RequestsUsed != 4 || len(s.imported(t)) != 0 {
		t.Fatalf("%v %s requests %d", err, got.Status, got.RequestsUsed)
	}
	if n, _ := s.bridge.AccountsRequests(); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
	used, _ := s.h.Redis.ZCard(context.Background(), "simplefin:budget:{"+s.conn.ID.String()+"}").Result()
	if used != 4 {
		t.Fatalf("budget counts %d, want 4", used)
	}
}

// TestDialFailureReleasesBudget: a Bridge that refuses connections gets
// 4 attempts that never leave; none of them stays counted in the budget,
// neither for a sync nor for /info.
func TestDialFailureReleasesBudget(t *testing.T) {
	s := newSyncSetup(t)
	s.bridge.Close() // nothing listens there any more: connection refused
	got, err := s.run(t, s.first)
	if err == nil || got.Status != models.SyncPending || got.RequestsUsed != 0 || len(s.imported(t)) != 0 {
		t.Fatalf("%v %s requests %d", err, got.Status, got.RequestsUsed)
	}
	key := "simplefin:budget:{" + s.conn.ID.String() + "}"
	if used, _ := s.h.Redis.ZCard(context.Background(), key).Result(); used != 0 {
		t.Fatalf("budget counts %d after refused connections, want 0", used)
	}
	s.fetchInfo(t)
	if used, _ := s.h.Redis.ZCard(context.Background(), key).Result(); used != 0 {
		t.Fatalf("budget counts %d after a refused /info, want 0", used)
	}
}
