package simplefin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/money"
)

func TestSyncImportsAndResyncWritesNothing(t *testing.T) {
	s := newSyncSetup(t)
	now := time.Now().UTC()
	data := bridgetest.Generate(7, 3, 200, 80, now)
	s.bridge.SetDataset(data)
	balances := jobs.UseBalances(s.store, s.h.Queue, s.h.Log) // as the worker's store
	// The balance tasks the syncs queue go with the test.
	t.Cleanup(func() {
		tasks, _ := s.insp.ListScheduledTasks(jobs.QueueDefault, asynq.PageSize(1000))
		for _, ti := range tasks {
			if ti.Type == jobs.TypeAccountBalance && strings.Contains(string(ti.Payload), s.f.Family.ID.String()) {
				_ = s.insp.DeleteTask(jobs.QueueDefault, ti.ID)
			}
		}
	})
	got, err := s.run(t, s.first)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != models.SyncCompleted || len(got.Children) != 3 {
		t.Fatalf("first sync: status %s error %v, %d steps", got.Status, got.Error, len(got.Children))
	}
	rows := s.imported(t)
	if len(rows) != data.Count() || got.TransactionsCreated != data.Count() || got.AccountsCreated != 3 {
		t.Fatalf("imported %d rows, counts %+v; want %d", len(rows), got.SyncCounts, data.Count())
	}
	// The ledger sign: a purchase the Bridge sends as negative is positive.
	for _, r := range rows {
		if r.Amount <= 0 {
			t.Fatalf("row %s amount %v, want positive", *r.ExternalID, r.Amount)
		}
	}
	// Per account: its own currency, and sums that are the negation of the
	// Bridge's; names from payee, notes from memo, pending flags as sent.
	pas, _ := s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	byRemote := map[string]models.ProviderAccount{}
	for _, pa := range pas {
		byRemote[pa.RemoteID] = pa
	}
	stored := map[string]models.Transaction{}
	for _, r := range rows {
		stored[r.AccountID.String()+"/"+*r.ExternalID] = r
	}
	for _, acct := range data.Accounts {
		pa := byRemote[acct.ID]
		if pa.Currency != acct.Currency || pa.AccountID == nil {
			t.Fatalf("remote account %s: currency %s, linked %v", acct.ID, pa.Currency, pa.AccountID)
		}
		var remote, ledger money.Amount
		for _, tx := range acct.Transactions {
			a, _, err := bridge.ParseRemoteAmount(tx.Amount)
			if err != nil {
				t.Fatal(err)
			}
			remote += a
			r, ok := stored[pa.AccountID.String()+"/"+tx.ID]
			if !ok {
				t.Fatalf("transaction %s not imported", tx.ID)
			}
			ledger += r.Amount
			notes := ""
			if r.Notes != nil {
				notes = *r.Notes
			}
			if r.Currency != acct.Currency || r.Name != tx.Payee || notes != tx.Memo || r.Pending != tx.Pending {
				t.Fatalf("transaction %s: %s %q %q pending %v; sent %s %q %q pending %v", tx.ID, r.Currency, r.Name, notes, r.Pending,
					acct.Currency, tx.Payee, tx.Memo, tx.Pending)
			}
		}
		if ledger != -remote {
			t.Fatalf("account %s sums to %v, the Bridge's to %v", acct.ID, ledger, remote)
		}
	}
	if n, q := s.bridge.AccountsRequests(); n != 1 || q.Get("pending") != "1" {
		t.Fatalf("%d requests, last %v", n, q)
	}
	c := reload(t, s.store, s.conn)
	if c.LastSyncedAt == nil || c.Status != models.ConnActive {
		t.Fatalf("connection after sync: %+v", c)
	}
	// The sync handed each ledger account to the one balance policy, which
	// queued its recalculation; once that has run, each shows the bank's
	// balance. (A sync that queued by itself, as it once did, would leave
	// the count at 0.)
	if queued, settled := balances.Counts(); queued != int64(len(pas)) || settled != 0 {
		t.Fatalf("the policy queued %d and settled %d balances, want %d queued", queued, settled, len(pas))
	}
	jh := &jobs.Handlers{Store: s.store, Log: s.h.Log}
	for _, pa := range pas {
		info, err := s.insp.GetTaskInfo(jobs.QueueDefault, "account:balance:"+pa.AccountID.String())
		if err != nil {
			t.Fatalf("balance of %s not queued: %v", pa.RemoteID, err)
		}
		if err := jh.AccountBalance(context.Background(), asynq.NewTask(info.Type, info.Payload)); err != nil {
			t.Fatal(err)
		}
		_ = s.insp.DeleteTask(jobs.QueueDefault, info.ID)
		a, _ := s.store.Account(context.Background(), s.f.Family.ID, *pa.AccountID)
		if a.Balance != *pa.Balance {
			t.Fatalf("account %s balance %v, bank says %v", a.Name, a.Balance, *pa.Balance)
		}
	}

	again, err := s.run(t, s.newSync(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != models.SyncCompleted || again.TransactionsCreated != 0 || again.TransactionsUpdated != 0 ||
		again.TransactionsSkipped != data.Count() {
		t.Fatalf("re-sync: status %s counts %+v", again.Status, again.SyncCounts)
	}
	after := s.imported(t)
	for i := range after {
		if !after[i].UpdatedAt.Equal(rows[i].UpdatedAt) {
			t.Fatalf("row %s was rewritten", *after[i].ExternalID)
		}
	}
}

func TestSyncFetchFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		behaviour bridgetest.AccountsBehaviour
		status    string // of the connection afterwards
		sync      string
		deferred  bool
		requests  int
	}{
		{"payment required", bridgetest.Accounts402, models.ConnPaymentRequired, models.SyncFailed, false, 1},
		{"html 403 is a block, not a revocation", bridgetest.AccountsHTML403, models.ConnRateLimited, models.SyncPending, true, 1},
		{"429 with Retry-After", bridgetest.Accounts429, models.ConnRateLimited, models.SyncPending, true, 1},
		{"html 429 without Retry-After", bridgetest.AccountsHTML429, models.ConnRateLimited, models.SyncPending, true, 1},
		{"quota message in a 200", bridgetest.AccountsQuota, models.ConnRateLimited, models.SyncPending, true, 1},
		{"gen.auth with no accounts", bridgetest.AccountsGenAuth, models.ConnRequiresReconnect, models.SyncFailed, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSyncSetup(t)
			s.bridge.SetAccounts(tc.behaviour, "")
			got, err := s.run(t, s.first)
			var de *jobs.DeferError
			if tc.deferred != errors.As(err, &de) {
				t.Fatalf("error %v, deferred want %v", err, tc.deferred)
			}
			if !tc.deferred && err != nil {
				t.Fatal(err)
			}
			c := reload(t, s.store, s.conn)
			if c.Status != tc.status || got.Status != tc.sync {
				t.Fatalf("connection %s, sync %s; want %s, %s", c.Status, got.Status, tc.status, tc.sync)
			}
			if n, _ := s.bridge.AccountsRequests(); n != tc.requests {
				t.Fatalf("%d requests, want %d", n, tc.requests)
			}
			if tc.deferred && (c.RetryAfter == nil || !got.NotBefore.Equal(*c.RetryAfter) || !de.Until.Equal(*c.RetryAfter)) {
				t.Fatalf("retry_after %v, not_before %v, deferred to %v", c.RetryAfter, got.NotBefore, de.Until)
			}
			// Retry-After: 120 is clamped up to 15 min; without it, the
			// base cooldown of an hour.
			if tc.deferred {
				wait := time.Hour
				if tc.behaviour == bridgetest.Accounts429 {
					wait = 15 * time.Minute
				}
				if d := time.Until(*c.RetryAfter); d < wait-time.Minute || d > wait {
					t.Fatalf("retry_after in %v, want %v", d, wait)
				}
			}
			// A refusal inside a 200 keeps what the Bridge said.
			if tc.behaviour == bridgetest.AccountsQuota &&
				(len(c.ProviderErrors) != 1 || !strings.Contains(c.ProviderErrors[0].Message, "make fewer requests")) {
				t.Fatalf("provider errors %+v", c.ProviderErrors)
			}
		})
	}
}

func TestSyncRevokedAccessURL(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(s *syncSetup)
	}{
		{"plain 403", func(s *syncSetup) { s.bridge.Revoke("c1") }},
		{"JSON 403", func(s *syncSetup) { s.bridge.SetAccounts(bridgetest.AccountsJSON403, "") }},
		{"401", func(s *syncSetup) { s.bridge.SetAccounts(bridgetest.Accounts401, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSyncSetup(t)
			tc.revoke(s)
			got, err := s.run(t, s.first)
			if err != nil {
				t.Fatal(err)
			}
			c := reload(t, s.store, s.conn)
			if c.Status != models.ConnRequiresReconnect || got.Status != models.SyncFailed {
				t.Fatalf("connection %s, sync %s", c.Status, got.Status)
			}
			if n, _ := s.bridge.AccountsRequests(); n != 1 {
				t.Fatalf("%d requests, want 1 (no retry)", n)
			}
		})
	}
}

// TestIncrementalWindow: after a completed sync, the next one reads from
// the overlap before the day the last one started, in one request.
func TestIncrementalWindow(t *testing.T) {
	s := newSyncSetup(t)
	s.h.Options.OverlapDays = 7
	first := s.synced(t, bridgetest.Generate(12, 1, 20, 60, time.Now().UTC()))
	second, err := s.run(t, s.newSync(t, false))
	if err != nil || second.Status != models.SyncCompleted {
		t.Fatalf("second: %v", err)
	}
	y, m, d := first.StartedAt.UTC().Date()
	if want := time.Date(y, m, d-7, 0, 0, 0, 0, time.UTC); !second.WindowStart.Equal(want) {
		t.Fatalf("window starts %v, want %v", second.WindowStart, want)
	}
	if second.RequestsUsed != 1 || second.TransactionsCreated != 0 {
		t.Fatalf("second: %d requests, counts %+v", second.RequestsUsed, second.SyncCounts)
	}
}

// TestLateArrivals (spec §14.3, scenario 3): the next day's regular sync
// starts 7 days before the day the last one started, so a transaction
// that appears late, dated 5 days back, is imported, and one dated 20
// days back is not.
func TestLateArrivals(t *testing.T) {
	clock := bridgetest.NewClock(time.Now().UTC().Add(-72 * time.Hour))
	s := newSyncSetupWith(t, bridgetest.Options{Now: clock.Now})
	data := s.bridge.Generate(13, 1, 20, 30)
	first, err := s.run(t, s.first)
	if err != nil || first.Status != models.SyncCompleted {
		t.Fatalf("first: %v %s", err, first.Status)
	}
	clock.Advance(24 * time.Hour)
	now := clock.Now()
	late := func(id string, days int) bridgetest.Txn {
		at := now.Add(-time.Duration(days) * 24 * time.Hour).Unix()
		return bridgetest.Txn{ID: id, Posted: at, Amount: "-9.99", Description: "LATE " + id}
	}
	data.Accounts[0].Transactions = append(data.Accounts[0].Transactions, late("LATE-5", 5), late("LATE-20", 20))
	second, err := s.run(t, s.newSync(t, false))
	if err != nil || second.Status != models.SyncCompleted || second.TransactionsCreated != 1 {
		t.Fatalf("second: %v %s %+v", err, second.Status, second.SyncCounts)
	}
	y, m, d := first.StartedAt.UTC().Date()
	if want := time.Date(y, m, d-7, 0, 0, 0, 0, time.UTC); !second.WindowStart.Equal(want) {
		t.Fatalf("window starts %v, want %v", second.WindowStart, want)
	}
	rows := byExternalID(s.imported(t))
	if _, ok := rows["LATE-5"]; !ok {
		t.Error("the transaction 5 days late was not imported")
	}
	if _, ok := rows["LATE-20"]; ok {
		t.Error("the transaction 20 days back was imported by a regular sync")
	}
}
