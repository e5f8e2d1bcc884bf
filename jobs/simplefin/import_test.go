package simplefin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

func byExternalID(rows []models.Transaction) map[string]models.Transaction {
	out := map[string]models.Transaction{}
	for _, r := range rows {
		out[*r.ExternalID] = r
	}
	return out
}

// TestImportBadInput is the amount, date, id and currency rows of the
// spec's "bad input" table, in one answer.
func TestImportBadInput(t *testing.T) {
	s := newSyncSetup(t)
	day := time.Now().UTC().Add(-48 * time.Hour).Unix()
	tx := func(id, amount string, extra string) string {
		return fmt.Sprintf(`{"id":%q,"posted":%d,"amount":%s,"description":"SHOP %s"%s}`, id, day, amount, id, extra)
	}
	body := `{"errors":["Other Bank: <script>alert(1)</script>sign-in needs attention","` + strings.Repeat("long ", 1000) + `"],"accounts":[
	  {"id":"A1","name":"Checking","currency":"usd","balance":"100.00","balance-date":` + fmt.Sprint(day) + `,"org":{"name":"Bank"},"transactions":[` +
		strings.Join([]string{
			tx("e1", `"1e3"`, ""), tx("e2", `"NaN"`, ""), tx("e3", `"1,000.00"`, ""), tx("e4", `""`, ""),
			tx("r1", `"12.345678"`, ""), tx("r2", `"-0.5"`, ""), tx("r3", `"0.00"`, ""), tx("r4", `" 42 "`, ""), tx("r5", `12.5`, ""), tx("r6", `"1.23456789"`, ""),
			fmt.Sprintf(`{"id":"p1","amount":"-5.00","description":"CAFE","pending":true,"transacted_at":%d}`, day-86400),
			`{"id":"d1","amount":"-5.00","description":"NO DATE"}`,
			`{"id":"d2","posted":"unavailable","amount":"-5.00","description":"BAD DATE"}`,
			`{"id":"d3","posted":4102444800,"amount":"-5.00","description":"FUTURE"}`,
			fmt.Sprintf(`{"id":"dup","posted":0,"transacted_at":%d,"pending":true,"amount":"-7.00","description":"DUP"}`, day),
			fmt.Sprintf(`{"id":"dup","posted":%d,"amount":"-7.00","description":"DUP"}`, day),
			fmt.Sprintf(`{"id":"same","posted":%d,"amount":"-1.00","description":"SAME"}`, day),
		}, ",") + `]},
	  {"id":"A2","name":"Points","currency":"https://bank.example/currency/points","balance":"oops","balance-date":` + fmt.Sprint(day) + `,"transactions":[` +
		fmt.Sprintf(`{"id":"same","posted":%d,"amount":"-1.00","description":"SAME"}`, day) + `]},
	  {"id":"A3","name":"Odd","currency":"ZZZ","balance":"1","balance-date":` + fmt.Sprint(day) + `,"transactions":[]},
	  {"name":"No id","currency":"USD","balance":"1","balance-date":1}
	]}`
	s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("sync: %v %s %v", err, got.Status, got.Error)
	}
	rows := byExternalID(s.imported(t))
	for id, want := range map[string]string{"r1": "-12.3457", "r2": "0.5000", "r3": "0.0000", "r4": "-42.0000", "r5": "-12.5000", "r6": "-1.2346", "p1": "5.0000", "dup": "7.0000"} {
		r, ok := rows[id]
		if !ok || r.Amount.String() != want {
			t.Errorf("%s: %v, want %s", id, r.Amount, want)
		}
	}
	for _, id := range []string{"e1", "e2", "e3", "e4", "d1", "d2", "d3"} {
		if _, ok := rows[id]; ok {
			t.Errorf("%s was imported", id)
		}
	}
	if p := rows["p1"]; !p.Pending || string(p.Date) != time.Unix(day-86400, 0).UTC().Format(time.DateOnly) {
		t.Errorf("p1: pending %v date %s", p.Pending, p.Date)
	}
	if rows["dup"].Pending {
		t.Error("the pending version of dup won over the posted one")
	}
	if got.TransactionsRejected != 7 || got.TransactionsSkipped != 1 || got.AccountsSkipped != 1 || got.AccountsCreated != 3 {
		t.Errorf("counts %+v", got.SyncCounts)
	}
	var same int
	for _, r := range s.imported(t) {
		if *r.ExternalID == "same" {
			same++
		}
	}
	if same != 2 {
		t.Errorf("%d rows for an id in two accounts, want 2", same)
	}
	warnings := strings.Join(got.Warnings, "\n")
	for _, w := range []string{"e1 rejected", "e2 rejected", "e3 rejected", "e4 rejected", "d1 rejected", "d2 rejected", "d3 rejected", "r1: amount rounded", "r6: amount rounded", "currency", "unreadable balance", "without an id"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("no warning %q in %s", w, warnings)
		}
	}
	pas, err := s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	if err != nil || len(pas) != 3 {
		t.Fatalf("provider accounts %d, %v", len(pas), err)
	}
	for _, pa := range pas {
		switch pa.RemoteID {
		case "A1":
			if pa.Currency != "USD" || pa.Balance == nil || *pa.Balance != 1000000 {
				t.Errorf("A1: %s %v", pa.Currency, pa.Balance)
			}
		case "A2", "A3":
			if pa.Currency != "XXX" || pa.CurrencyRaw == nil {
				t.Errorf("%s: %s raw %v", pa.RemoteID, pa.Currency, pa.CurrencyRaw)
			}
		}
	}
	c := reload(t, s.store, s.conn)
	if c.Status != models.ConnActive || len(c.ProviderErrors) != 2 || strings.Contains(c.ProviderErrors[0].Message, "<script>") ||
		len([]rune(c.ProviderErrors[1].Message)) != 500 {
		t.Errorf("connection %s errors %q", c.Status, c.ProviderErrors)
	}

	// An answer whose balance is unreadable keeps the balance known before.
	s.bridge.SetAccounts(bridgetest.AccountsNormally, `{"errors":[],"accounts":[{"id":"A1","name":"Checking","currency":"USD",
	  "balance":"oops","balance-date":`+fmt.Sprint(day+3600)+`,"transactions":[]}]}`)
	again, err := s.run(t, s.newSync(t, false))
	if err != nil || again.Status != models.SyncCompleted || !strings.Contains(strings.Join(again.Warnings, "\n"), "unreadable balance") {
		t.Fatalf("second sync: %v %s %v", err, again.Status, again.Warnings)
	}
	pas, _ = s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	for _, pa := range pas {
		if pa.RemoteID == "A1" && (pa.Balance == nil || *pa.Balance != 1000000) {
			t.Errorf("A1's balance after an unreadable one: %v", pa.Balance)
		}
	}
}

// TestImportNumericIDs: an id sent as a JSON number is its literal text
// (spec §9), for accounts and transactions alike; an account whose id is
// null or an object is skipped with a warning and the others import.
func TestImportNumericIDs(t *testing.T) {
	s := newSyncSetup(t)
	day := time.Now().UTC().Add(-48 * time.Hour).Unix()
	body := fmt.Sprintf(`{"errors":[],"accounts":[
	  {"id":12345,"name":"Numbered","currency":"USD","balance":"5.00","balance-date":%[1]d,"transactions":[
	    {"id":987,"posted":%[1]d,"amount":"-3.00","description":"NUMBERED"},
	    {"id":"T-1","posted":%[1]d,"amount":"-4.00","description":"TEXT"}]},
	  {"id":null,"name":"Null id","currency":"USD","balance":"1","balance-date":%[1]d,"transactions":[]},
	  {"id":{"x":1},"name":"Object id","currency":"USD","balance":"1","balance-date":%[1]d,"transactions":[]},
	  {"id":"ACT-2","name":"Text","currency":"USD","balance":"1","balance-date":%[1]d,"transactions":[
	    {"id":-42,"posted":%[1]d,"amount":"-1.00","description":"NEGATIVE ID"}]}
	]}`, day)
	s.bridge.SetAccounts(bridgetest.AccountsNormally, body)
	got, err := s.run(t, s.first)
	if err != nil || got.Status != models.SyncCompleted {
		t.Fatalf("sync: %v %s %v", err, got.Status, got.Error)
	}
	if got.AccountsCreated != 2 || got.AccountsSkipped != 2 || got.TransactionsCreated != 3 || got.TransactionsRejected != 0 {
		t.Errorf("counts %+v", got.SyncCounts)
	}
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "without an id") {
		t.Errorf("no warning for the skipped accounts: %v", got.Warnings)
	}
	pas, err := s.store.ProviderAccounts(context.Background(), s.f.Family.ID, s.conn.ID)
	if err != nil || len(pas) != 2 || pas[0].RemoteID != "12345" || pas[1].RemoteID != "ACT-2" {
		t.Fatalf("provider accounts %+v, %v", pas, err)
	}
	rows := byExternalID(s.imported(t))
	for id, want := range map[string]string{"987": "3.0000", "T-1": "4.0000", "-42": "1.0000"} {
		if r, ok := rows[id]; !ok || r.Amount.String() != want {
			t.Errorf("%s: %v, want %s", id, r.Amount, want)
		}
	}
	if r := rows["987"]; r.AccountID != *pas[0].AccountID {
		t.Errorf("987 is in account %s, want %s", r.AccountID, *pas[0].AccountID)
	}
}

// TestCreatedAccountUntyped: the ledger account made on a remote account's
// first sight has no type (spec §8), and its balance is the bank's as
// sent, the asset rule of §9 step 9.
func TestCreatedAccountUntyped(t *testing.T) {
	s := newSyncSetup(t)
	ctx := context.Background()
	s.bridge.SetDataset(oneAccount(bridgetest.Txn{ID: "T", Posted: time.Now().Add(-48 * time.Hour).Unix(), Amount: "-3.00", Description: "SHOP"}))
	if got, err := s.run(t, s.first); err != nil || got.AccountsCreated != 1 {
		t.Fatalf("sync: %v %+v", err, got.SyncCounts)
	}
	pas, err := s.store.ProviderAccounts(ctx, s.f.Family.ID, s.conn.ID)
	if err != nil || len(pas) != 1 {
		t.Fatalf("provider accounts %d, %v", len(pas), err)
	}
	if err := s.store.RecalculateBalance(ctx, s.f.Family.ID, *pas[0].AccountID); err != nil {
		t.Fatal(err)
	}
	a, err := s.store.Account(ctx, s.f.Family.ID, *pas[0].AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if a.AccountType != "" || a.Classification() != "asset" || a.Balance.String() != "10.0000" {
		t.Fatalf("created account: type %q, %s, balance %s", a.AccountType, a.Classification(), a.Balance)
	}
	var untyped int
	if err := s.store.DB().NewSelect().Table("accounts").ColumnExpr("count(*)").Where("id = ?", a.ID).
		Where("account_type IS NULL").Scan(ctx, &untyped); err != nil || untyped != 1 {
		t.Fatalf("account_type is not NULL in the table: %d %v", untyped, err)
	}
}
