package simplefin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

// TestSyncAfterFileHistoryDoubles: a family imports its bank's history
// from a file (here: written without the bank's ids, then renamed, as a
// person tidies up) and then connects the bank; the first sync sends the
// same movements again with its own ids. They doubled; now each is
// recognised by its fingerprint, tied to the existing row, and skipped on
// every later sync too, while a movement the file did not have comes in.
func TestSyncAfterFileHistoryDoubles(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	day := time.Now().UTC().Add(-72 * time.Hour).Truncate(24 * time.Hour).Add(12 * time.Hour)
	answer := func(txs string) string {
		return `{"errors":[],"accounts":[{"id":"A1","name":"Checking","currency":"USD","balance":"100.00","balance-date":` +
			fmt.Sprint(day.Unix()) + `,"org":{"name":"Bank"},"transactions":[` + txs + `]}]}`
	}
	s.bridge.SetAccounts(bridgetest.AccountsNormally, answer(""))
	if got, err := s.run(t, s.first); err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("first sync: %v %+v", err, got)
	}
	pas, err := s.store.ProviderAccounts(ctx, s.f.Family.ID, s.conn.ID)
	if err != nil || len(pas) != 1 || pas[0].AccountID == nil {
		t.Fatalf("provider accounts %+v, %v", pas, err)
	}
	account := *pas[0].AccountID
	for _, r := range []struct {
		name   string
		amount int64
	}{{"GROCERY OUTLET 1123", 524500}, {"CITY WATER UTIL", 610000}} {
		row, _, err := s.store.CreateTransaction(ctx, &models.Transaction{FamilyID: s.f.Family.ID, AccountID: account,
			Date: civil.DateOf(day), Amount: money.Amount(r.amount), Currency: "USD", Name: r.name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		row.Name = "Tidied " + r.name
		if _, err := s.store.UpdateTransaction(ctx, row, []string{"name"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	tx := func(id, amount, text string) string {
		return fmt.Sprintf(`{"id":%q,"posted":%d,"amount":%q,"description":%q}`, id, day.Unix(), amount, text)
	}
	body := answer(tx("s1", "-52.45", "GROCERY OUTLET 1123") + "," + tx("s2", "-61.00", "CITY WATER UTIL") + "," +
		tx("s3", "-9.99", "STREAMING CO"))
	for run := range 2 {
		s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
		got, err := s.run(t, s.newSync(t, run == 1))
		if err != nil || got.Status != models.SyncCompleted {
			t.Fatalf("sync %d: %v %+v", run, err, got)
		}
		var rows []models.Transaction
		if err := s.store.DB().NewSelect().Model(&rows).Where("family_id = ?", s.f.Family.ID).Where("account_id = ?", account).
			Where("deleted_at IS NULL").OrderExpr("name").Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 || rows[0].Name != "STREAMING CO" || rows[1].Name != "Tidied CITY WATER UTIL" {
			t.Fatalf("sync %d: %d rows %+v", run, len(rows), rows)
		}
	}
}
