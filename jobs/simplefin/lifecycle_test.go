package simplefin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

func oneAccount(txs ...bridgetest.Txn) *bridgetest.Dataset {
	return &bridgetest.Dataset{Accounts: []bridgetest.Account{{ID: "A1", Name: "Checking", Currency: "USD", Balance: "10.00",
		BalanceDate: time.Now().Unix(), Org: "Bank", Transactions: txs}}}
}

// TestPendingLifecycle: a pending row that posts under a new id is
// settled in place (the user's category stays, the old id becomes an
// alias so the bank re-sending it adds nothing); a tip changes the amount
// so nothing merges; an id that flips to posted is updated in place.
func TestPendingLifecycle(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	day := time.Now().UTC().Add(-72 * time.Hour)
	pend := func(id, amount, desc string) bridgetest.Txn {
		return bridgetest.Txn{ID: id, TransactedAt: day.Unix(), Pending: true, Amount: amount, Description: desc}
	}
	posted := func(id, amount, desc string, after time.Duration) bridgetest.Txn {
		return bridgetest.Txn{ID: id, Posted: day.Add(after).Unix(), TransactedAt: day.Unix(), Amount: amount, Description: desc}
	}
	s.bridge.SetDataset(oneAccount(pend("P1", "-20.00", "POS COFFEE BAR 1234"), pend("P2", "-50.00", "DINER"), pend("P3", "-9.00", "KIOSK")))
	if got, err := s.run(t, s.first); err != nil || got.TransactionsCreated != 3 {
		t.Fatalf("first: %v %+v", err, got.SyncCounts)
	}
	cat := &models.Category{FamilyID: s.f.Family.ID, Name: "Coffee", Color: "#000000", Icon: "cup", Classification: "expense"}
	if err := s.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.DB().NewUpdate().Table("transactions").Set("category_id = ?", cat.ID).
		Where("family_id = ?", s.f.Family.ID).Where("external_id = 'P1'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// P1 posts as Q1 two days later and the bank still sends P1; P2 posts
	// with a tip; P3 keeps its id.
	s.bridge.SetDataset(oneAccount(pend("P1", "-20.00", "POS COFFEE BAR 1234"), posted("Q1", "-20.00", "COFFEE BAR", 48*time.Hour),
		posted("Q2", "-60.00", "DINER", 24*time.Hour), posted("P3", "-9.00", "KIOSK", 24*time.Hour)))
	got, err := s.run(t, s.newSync(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if got.PendingReconciled != 1 || got.TransactionsCreated != 1 || got.TransactionsUpdated != 1 {
		t.Fatalf("second: %+v %v", got.SyncCounts, got.Warnings)
	}
	rows := byExternalID(s.imported(t))
	if len(rows) != 4 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	q1 := rows["Q1"]
	if q1.Pending || q1.CategoryID == nil || *q1.CategoryID != cat.ID || q1.Name != "COFFEE BAR" {
		t.Fatalf("settled row: %+v", q1)
	}
	if rows["P3"].Pending || !rows["P2"].Pending || rows["Q2"].Pending {
		t.Fatalf("P3 %v P2 %v Q2 %v", rows["P3"].Pending, rows["P2"].Pending, rows["Q2"].Pending)
	}
	// Again: nothing changes.
	again, err := s.run(t, s.newSync(t, false))
	if err != nil || again.TransactionsCreated+again.TransactionsUpdated+again.PendingReconciled != 0 {
		t.Fatalf("third: %v %+v", err, again.SyncCounts)
	}
}

// TestReissuedIDsAndUserEdits: a block of re-keyed ids adds no rows; two
// genuine identical purchases stay two rows; a locked field keeps the
// user's value; a tombstoned row never comes back.
func TestReissuedIDsAndUserEdits(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	day := time.Now().UTC().Add(-96 * time.Hour).Unix()
	txn := func(id, amount, desc string) bridgetest.Txn {
		return bridgetest.Txn{ID: id, Posted: day, Amount: amount, Description: desc}
	}
	base := []bridgetest.Txn{txn("T1", "-1.00", "ONE"), txn("T2", "-2.00", "TWO"), txn("T3", "-3.00", "THREE"),
		txn("TW1", "-4.00", "TWIN"), txn("TW2", "-4.00", "TWIN"), txn("T5", "-5.00", "FIVE")}
	s.bridge.SetDataset(oneAccount(base...))
	if got, err := s.run(t, s.first); err != nil || got.TransactionsCreated != 6 {
		t.Fatalf("first: %v %+v", err, got.SyncCounts)
	}
	set := func(ext, expr string, args ...any) {
		t.Helper()
		if _, err := s.store.DB().NewUpdate().Table("transactions").Set(expr, args...).
			Where("family_id = ?", s.f.Family.ID).Where("external_id = ?", ext).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	set("T2", "name = ?", "My name")
	set("T2", "locked_fields = ?", `["name"]`)
	set("T5", "deleted_at = ?", time.Now().UTC())
	// The Bridge re-keys T1..T3 and T5 and renames T2's description.
	renamed := txn("N2", "-2.00", "TWO")
	s.bridge.SetDataset(oneAccount(txn("N1", "-1.00", "ONE"), renamed, txn("N3", "-3.00", "THREE"),
		txn("TW1", "-4.00", "TWIN"), txn("TW2", "-4.00", "TWIN"), txn("N5", "-5.00", "FIVE")))
	got, err := s.run(t, s.newSync(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if got.ReissuedSuppressed != 4 || got.TransactionsCreated != 0 {
		t.Fatalf("re-keyed: %+v", got.SyncCounts)
	}
	rows := byExternalID(s.imported(t))
	if len(rows) != 6 || rows["T2"].Name != "My name" || rows["T5"].DeletedAt == nil {
		t.Fatalf("rows after re-key: %d, T2 %q", len(rows), rows["T2"].Name)
	}
	// A genuine third twin (a new id while both old ones are present) is kept.
	s.bridge.SetDataset(oneAccount(txn("TW1", "-4.00", "TWIN"), txn("TW2", "-4.00", "TWIN"), txn("TW3", "-4.00", "TWIN")))
	if got, err := s.run(t, s.newSync(t, false)); err != nil || got.TransactionsCreated != 1 || got.ReissuedSuppressed != 0 {
		t.Fatalf("twins: %v %+v", err, got.SyncCounts)
	}
}

// TestStalePendingExcluded: a pending row that never posts is excluded
// after 14 days and counted once.
func TestStalePendingExcluded(t *testing.T) {
	s := newSyncSetup(t)
	old := time.Now().UTC().AddDate(0, 0, -20).Unix()
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "OLD", TransactedAt: old, Pending: true, Amount: "-3.00", Description: "X"}))
	got, err := s.run(t, s.first)
	if err != nil || got.StalePendingExcluded != 1 {
		t.Fatalf("%v %+v", err, got.SyncCounts)
	}
	if r := s.imported(t)[0]; !r.Excluded || r.ExcludedReason == nil || *r.ExcludedReason != "stale_pending" {
		t.Fatalf("row: %+v", r)
	}
	again, err := s.run(t, s.newSync(t, false))
	if err != nil || again.StalePendingExcluded != 0 || again.TransactionsUpdated != 0 {
		t.Fatalf("again: %v %+v", err, again.SyncCounts)
	}
}

// TestWorkerKilledMidImport: a step whose worker died holding the lease
// is taken again once the lease runs out, and the end state is the same
// as an undisturbed run: no duplicates, the parent finished once.
func TestWorkerKilledMidImport(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	data := bridgetest.Generate(3, 2, 50, 30, time.Now().UTC())
	s.bridge.SetDataset(data)
	if err := s.h.Sync(ctx, task(t, syncTask(s.first))); err != nil {
		t.Fatal(err)
	}
	parent, _ := s.store.Sync(ctx, s.f.Family.ID, s.first.ID)
	// A worker takes the first step and dies before committing.
	if _, err := s.store.LeaseSync(ctx, s.f.Family.ID, parent.Children[0].ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The re-delivery finds the lease held: it does nothing.
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncRunning {
		t.Fatalf("while leased: %v %s", err, got.Status)
	}
	realNow := s.store.Now
	s.store.Now = func() time.Time { return realNow().Add(2 * time.Minute) }
	got, err = s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != data.Count() {
		t.Fatalf("after the lease ran out: %v %s %+v", err, got.Status, got.SyncCounts)
	}
	if n := len(s.imported(t)); n != data.Count() {
		t.Fatalf("%d rows, want %d", n, data.Count())
	}
	if n, _ := s.bridge.AccountsRequests(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

// TestTwoWorkersOneSync: the same sync delivered twice at once is fetched
// once.
func TestTwoWorkersOneSync(t *testing.T) {
	s := newSyncSetup(t)
	s.bridge.SetDataset(bridgetest.Generate(4, 1, 10, 10, time.Now().UTC()))
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.h.Sync(context.Background(), task(t, syncTask(s.first))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n, _ := s.bridge.AccountsRequests(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

// TestNetworkFaults: a reset mid-body is retried inside the request
// (each attempt counted); a 5xx, a truncated or an invalid body writes
// nothing and is retried by asynq.
func TestNetworkFaults(t *testing.T) {
	// faulty is a sync setup whose fake answers /accounts as script says,
	// then normally, with one account of ten rows.
	faulty := func(t *testing.T, script ...bridgetest.AccountsBehaviour) *syncSetup {
		s := newSyncSetup(t)
		s.bridge.SetDataset(bridgetest.Generate(5, 1, 10, 10, time.Now().UTC()))
		s.bridge.Script(script...)
		return s
	}
	t.Run("500, 503, then 200", func(t *testing.T) {
		s := faulty(t, bridgetest.Accounts500, bridgetest.Accounts5xxOnce)
		// A 5xx is an answer: no retry within the run, an asynq retry later.
		for run := 1; run <= 2; run++ {
			got, err := s.run(t, s.first)
			if err == nil || got.Status != models.SyncPending || got.RequestsUsed != run || len(s.imported(t)) != 0 {
				t.Fatalf("run %d: %v %s requests %d", run, err, got.Status, got.RequestsUsed)
			}
		}
		got, err := s.run(t, s.first)
		if err != nil || got.Status != models.SyncCompleted || got.RequestsUsed != 3 || len(s.imported(t)) != 10 {
			t.Fatalf("third run: %v %s requests %d", err, got.Status, got.RequestsUsed)
		}
	})
	// A fault that is not an answer is retried inside the request: the run
	// completes on its second request.
	for _, tc := range []struct {
		name    string
		fault   bridgetest.AccountsBehaviour
		timeout time.Duration // the client's /accounts deadline, when not the setup's
	}{
		{"reset before the headers", bridgetest.AccountsResetEarly, 0},
		{"a body dripping past the deadline", bridgetest.AccountsDrip, 300 * time.Millisecond},
		{"reset mid-body", bridgetest.AccountsReset, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := faulty(t, tc.fault)
			if tc.timeout != 0 {
				s.h.Bridge = bridge.NewClient(bridge.Options{AllowHTTP: true, AllowPrivateHosts: true,
					AccountsTimeout: tc.timeout, RetryInitial: time.Millisecond})
			}
			got, err := s.run(t, s.first)
			if err != nil || got.Status != models.SyncCompleted || got.RequestsUsed != 2 || len(s.imported(t)) != 10 {
				t.Fatalf("%v %s requests %d", err, got.Status, got.RequestsUsed)
			}
		})
	}
	for _, b := range []bridgetest.AccountsBehaviour{bridgetest.AccountsTruncated, bridgetest.AccountsBadJSON,
		bridgetest.AccountsEmpty, bridgetest.Accounts502, bridgetest.Accounts504} {
		s := faulty(t, b)
		got, err := s.run(t, s.first)
		if err == nil || got.Status != models.SyncPending || len(s.imported(t)) != 0 || reload(t, s.store, s.conn).Status != models.ConnActive {
			t.Fatalf("behaviour %d: %v %s, %d rows", b, err, got.Status, len(s.imported(t)))
		}
		if got, err = s.run(t, s.first); err != nil || got.Status != models.SyncCompleted {
			t.Fatalf("retry: %v %s", err, got.Status)
		}
	}
}

// TestBudgetNeverExceeded: with the budget used up, a sync sends nothing
// and is deferred to the first free slot.
func TestBudgetNeverExceeded(t *testing.T) {
	s := newSyncSetup(t)
	s.h.Options.DailyBudget = 2
	s.bridge.SetDataset(bridgetest.Generate(6, 1, 5, 5, time.Now().UTC()))
	for i := 0; i < 2; i++ {
		sy := s.first
		if i > 0 {
			sy = s.newSync(t, false)
		}
		if got, err := s.run(t, sy); err != nil || got.Status != models.SyncCompleted {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	third := s.newSync(t, false)
	got, err := s.run(t, third)
	if err == nil || got.Status != models.SyncPending || got.NotBefore.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("over budget: %v %s not_before %v", err, got.Status, got.NotBefore)
	}
	if n, _ := s.bridge.AccountsRequests(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// TestImportCancelledMidway: an import whose worker context ends writes
// nothing; its step goes back to pending and the re-delivery completes it
// with the same rows and counts as an undisturbed run.
func TestImportCancelledMidway(t *testing.T) {
	s := newSyncSetup(t)
	data := bridgetest.Generate(10, 1, 30, 20, time.Now().UTC())
	s.bridge.SetDataset(data)
	if err := s.h.Sync(context.Background(), task(t, syncTask(s.first))); err != nil {
		t.Fatal(err)
	}
	parent, _ := s.store.Sync(context.Background(), s.f.Family.ID, s.first.ID)
	step := parent.Children[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.h.Import(ctx, task(t, func() (*asynq.Task, error) { return simplefin.NewImportTask(step.FamilyID, step.ID) })); err == nil {
		t.Fatal("a cancelled import reported success")
	}
	if n := len(s.imported(t)); n != 0 {
		t.Fatalf("%d rows written by a cancelled import", n)
	}
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted || got.TransactionsCreated != data.Count() || len(s.imported(t)) != data.Count() {
		t.Fatalf("re-delivery: %v %s %+v", err, got.Status, got.SyncCounts)
	}
}

// TestDisconnectWhileSyncing: a disconnect between the fetch and the
// import ends the sync as failed "disconnected", nothing is imported and
// the access URL is never used again; the data already imported stays
// until a purge, which removes the imported rows and the accounts they
// filled but not manual rows.
func TestDisconnectWhileSyncing(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.synced(t, bridgetest.Generate(9, 2, 20, 20, time.Now().UTC()))
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
	if _, _, err := s.store.CreateTransaction(ctx, manual, nil); err != nil {
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

// TestPendingTipNotMerged is lifecycle (2): a pending 10.00 that posts as
// 12.00 (a 20 % tip) under a new id three days later is not merged, so
// both rows stay; the pending one is excluded as stale once 14 days old.
func TestPendingTipNotMerged(t *testing.T) {
	s := newSyncSetup(t)
	start := time.Now().UTC()
	day := start.AddDate(0, 0, -10)
	pending := bridgetest.Txn{ID: "P", TransactedAt: day.Unix(), Pending: true, Amount: "-10.00", Description: "BISTRO"}
	s.bridge.SetDataset(oneAccount(pending))
	if got, err := s.run(t, s.first); err != nil || got.TransactionsCreated != 1 {
		t.Fatalf("first: %v %+v", err, got.SyncCounts)
	}
	posted := bridgetest.Txn{ID: "Q", Posted: day.AddDate(0, 0, 3).Unix(), TransactedAt: day.Unix(), Amount: "-12.00", Description: "BISTRO"}
	s.bridge.SetDataset(oneAccount(posted))
	got, err := s.run(t, s.newSync(t, false))
	if err != nil || got.PendingReconciled != 0 || got.TransactionsCreated != 1 || got.StalePendingExcluded != 0 {
		t.Fatalf("posted: %v %+v", err, got.SyncCounts)
	}
	rows := byExternalID(s.imported(t))
	if p, q := rows["P"], rows["Q"]; len(rows) != 2 || !p.Pending || p.Excluded || q.Pending || q.Amount.String() != "12.0000" {
		t.Fatalf("after posting: %+v", rows)
	}
	// Five days on, the pending row is 15 days old.
	later := func() time.Time { return time.Now().UTC().AddDate(0, 0, 5) }
	s.h.Now, s.store.Now = later, later
	s.bridge.SetDataset(oneAccount())
	got, err = s.run(t, s.newSync(t, false))
	if err != nil || got.StalePendingExcluded != 1 {
		t.Fatalf("15 days on: %v %+v", err, got.SyncCounts)
	}
	rows = byExternalID(s.imported(t))
	if p := rows["P"]; !p.Excluded || p.ExcludedReason == nil || *p.ExcludedReason != "stale_pending" {
		t.Fatalf("pending row: %+v", p)
	}
	if q := rows["Q"]; q.Excluded || q.Pending {
		t.Fatalf("posted row: %+v", q)
	}
}

// TestTwinPendingBothPost is lifecycle (6): two identical pending rows
// that both post under new ids are ambiguous, so nothing merges and both
// posted rows are kept.
func TestTwinPendingBothPost(t *testing.T) {
	s := newSyncSetup(t)
	day := time.Now().UTC().AddDate(0, 0, -4)
	pend := func(id string) bridgetest.Txn {
		return bridgetest.Txn{ID: id, TransactedAt: day.Unix(), Pending: true, Amount: "-4.50", Description: "COFFEE CART"}
	}
	post := func(id string) bridgetest.Txn {
		return bridgetest.Txn{ID: id, Posted: day.AddDate(0, 0, 1).Unix(), TransactedAt: day.Unix(), Amount: "-4.50", Description: "COFFEE CART"}
	}
	s.bridge.SetDataset(oneAccount(pend("P1"), pend("P2")))
	if got, err := s.run(t, s.first); err != nil || got.TransactionsCreated != 2 {
		t.Fatalf("first: %v %+v", err, got.SyncCounts)
	}
	s.bridge.SetDataset(oneAccount(post("Q1"), post("Q2")))
	got, err := s.run(t, s.newSync(t, false))
	if err != nil || got.PendingReconciled != 0 || got.TransactionsCreated != 2 || got.ReissuedSuppressed != 0 {
		t.Fatalf("posted: %v %+v %v", err, got.SyncCounts, got.Warnings)
	}
	rows := byExternalID(s.imported(t))
	if len(rows) != 4 || !rows["P1"].Pending || !rows["P2"].Pending || rows["Q1"].Pending || rows["Q2"].Pending {
		t.Fatalf("rows: %+v", rows)
	}
}

// TestUserEditsSurviveFullResync (spec §14.3, scenario 2): a row whose
// name, date, amount, notes and category the user edited keeps them
// through a full re-sync of the same data, which writes nothing.
func TestUserEditsSurviveFullResync(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.synced(t, bridgetest.Generate(17, 1, 10, 20, time.Now().UTC()))
	cat := &models.Category{FamilyID: s.f.Family.ID, Name: "Books", Color: "#336699", Icon: "book", Classification: "expense"}
	if err := s.store.CreateCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	row := s.imported(t)[0]
	notes := "mine"
	row.Name, row.Date, row.Amount, row.Notes, row.CategoryID = "My name", "2020-01-02", 123400, &notes, &cat.ID
	if _, err := s.store.UpdateTransaction(ctx, &row, []string{"name", "date", "amount", "notes", "category_id"}, nil); err != nil {
		t.Fatal(err)
	}
	again, err := s.run(t, s.newSync(t, true))
	if err != nil || again.Status != models.SyncCompleted || again.TransactionsCreated+again.TransactionsUpdated != 0 {
		t.Fatalf("full re-sync: %v %+v", err, again.SyncCounts)
	}
	got := byExternalID(s.imported(t))[*row.ExternalID]
	if got.Name != "My name" || got.Date != "2020-01-02" || got.Amount != 123400 || got.Notes == nil || *got.Notes != "mine" ||
		got.CategoryID == nil || *got.CategoryID != cat.ID {
		t.Fatalf("after the re-sync: %q %s %v %v %v", got.Name, got.Date, got.Amount, got.Notes, got.CategoryID)
	}
}
