package assistant_test

import (
	"context"
	"encoding/json"
	"testing"

	"coffer/jobs/assistant"
	"coffer/models"
	"coffer/models/modelstest"
)

// TestToolTable: names are unique, every schema is an object schema, and
// the write tools are exactly the three the reference offers.
func TestToolTable(t *testing.T) {
	seen := map[string]bool{}
	var writes []string
	for _, tool := range assistant.Tools() {
		if seen[tool.Name] || tool.Description == "" || tool.Run == nil || tool.Schema["type"] != "object" {
			t.Errorf("tool %q: duplicate or incomplete", tool.Name)
		}
		seen[tool.Name] = true
		if _, err := json.Marshal(tool.Schema); err != nil {
			t.Errorf("tool %q: schema: %v", tool.Name, err)
		}
		if tool.Write {
			writes = append(writes, tool.Name)
		}
	}
	if got, _ := json.Marshal(writes); string(got) != `["update_transaction","create_category","create_tag"]` {
		t.Fatalf("write tools %s", got)
	}
	if n := len(assistant.Offered(assistant.Caller{})); n != 7 {
		t.Fatalf("a caller without writes is offered %d tools", n)
	}
}

// TestToolsReadTheLedger runs the read tools on a small ledger: money is
// exact as the API shows it, and another family's records stay out.
func TestToolsReadTheLedger(t *testing.T) {
	store := modelstest.NewStore(t)
	ctx := context.Background()
	f := modelstest.NewFamily(t, store, "tools")
	other := modelstest.NewFamily(t, store, "tools-other")
	for _, tx := range []models.Transaction{
		{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2026-10-02", Amount: -25_000_000, Currency: "USD", Name: "Salary"},
		{FamilyID: f.Family.ID, AccountID: f.Account.ID, Date: "2026-10-05", Amount: 123_4500, Currency: "USD", Name: "Coffee beans"},
		{FamilyID: other.Family.ID, AccountID: other.Account.ID, Date: "2026-10-05", Amount: 99_0000, Currency: "USD", Name: "Secret"},
	} {
		if _, _, err := store.CreateTransaction(ctx, &tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, fam := range []*modelstest.FamilyFixture{f, other} {
		if err := store.RecalculateBalance(ctx, fam.Family.ID, fam.Account.ID); err != nil {
			t.Fatal(err)
		}
	}
	c := assistant.Caller{FamilyID: f.Family.ID, UserID: f.User.ID, Role: models.RoleAdmin}
	call := func(name, args string) map[string]any {
		t.Helper()
		raw, err := assistant.Call(ctx, store, c, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %s", name, raw)
		}
		return out
	}
	acc := call("get_accounts", "")["accounts"].([]any)
	if len(acc) != 1 || acc[0].(map[string]any)["balance"] != "$2,376.55" {
		t.Fatalf("accounts %v", acc)
	}
	txs := call("get_transactions", `{"search": "coffee"}`)
	if txs["total_results"] != 1.0 || txs["transactions"].([]any)[0].(map[string]any)["amount"] != "$123.45" {
		t.Fatalf("transactions %v", txs)
	}
	if got := call("get_transactions", `{"types": ["income"], "accounts": ["checking"]}`); got["total_results"] != 1.0 {
		t.Fatalf("income %v", got)
	}
	if got := call("get_transactions", `{"amount": "123.45", "amount_operator": "equal"}`); got["total_results"] != 1.0 {
		t.Fatalf("by amount %v", got)
	}
	if got := call("get_transactions", `{"accounts": ["Nope"]}`); got["error"] != "not_found" {
		t.Fatalf("unknown account name %v", got)
	}
	is := call("get_income_statement", `{"start_date": "2026-10-01", "end_date": "2026-10-31"}`)
	if is["income"].(map[string]any)["total"] != "$2,500.00" || is["expense"].(map[string]any)["total"] != "$123.45" || is["net"] != "$2,376.55" {
		t.Fatalf("income statement %v", is)
	}
	if got := call("get_income_statement", `{"start_date": "2026-10-31", "end_date": "2026-10-01"}`); got["error"] != "validation_failed" {
		t.Fatalf("reversed period %v", got)
	}
	bs := call("get_balance_sheet", "{}")
	if bs["net_worth"] != "$2,376.55" || bs["assets"] != "$2,376.55" {
		t.Fatalf("balance sheet %v", bs)
	}
}

// FuzzToolCall throws any tool name and arguments at the tool table: the
// answer is always a JSON result for the model (never a service error),
// and a caller without write permission never changes a thing.
func FuzzToolCall(f *testing.F) {
	store := modelstest.NewStore(f)
	fam := modelstest.NewFamily(f, store, "fuzz")
	ctx := context.Background()
	tx := &models.Transaction{FamilyID: fam.Family.ID, AccountID: fam.Account.ID, Date: "2026-10-02", Amount: 10_000, Currency: "USD", Name: "x"}
	if _, _, err := store.CreateTransaction(ctx, tx, nil); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{"get_accounts", ""}, {"get_transactions", `{"page": 2, "page_size": 1000}`},
		{"get_transactions", `{"start_date": "2026-02-30", "amount": "1e5", "amount_operator": "less"}`},
		{"get_transactions", `{"account_ids": ["` + fam.Account.ID.String() + `"], "tags": ["a"]}`},
		{"get_income_statement", `{"start_date": "0000-01-01", "end_date": "9999-12-31"}`},
		{"update_transaction", `{"id": "` + tx.ID.String() + `", "amount": -5}`}, {"create_tag", `{"name": "x"}`},
		{"get_categories", "[]"}, {"nope", "{"}, {"get_merchants", `{"a": {"b": [1, 2, null]}}`},
	} {
		f.Add(seed[0], seed[1])
	}
	c := assistant.Caller{FamilyID: fam.Family.ID, UserID: fam.User.ID, Role: models.RoleMember}
	f.Fuzz(func(t *testing.T, name, args string) {
		raw, err := assistant.Call(ctx, store, c, name, args)
		if err != nil {
			t.Fatalf("%s %q: service error %v", name, args, err)
		}
		if !json.Valid(raw) {
			t.Fatalf("%s %q: result is not JSON: %s", name, args, raw)
		}
		got, err := store.Transaction(ctx, fam.Family.ID, tx.ID)
		if err != nil || got.Name != "x" || got.Amount != 10_000 {
			t.Fatalf("%s %q changed the ledger: %v %v", name, args, got, err)
		}
		if tags, _ := store.Tags(ctx, fam.Family.ID); len(tags) != 0 {
			t.Fatalf("%s %q created a tag", name, args)
		}
	})
}
