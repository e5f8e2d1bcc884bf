package rest_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

func valuationBody(fields map[string]any) map[string]any { return map[string]any{"valuation": fields} }

// TestValuationsAPI is the reference's valuations_controller_test: create,
// show, update, list by account, the read key refused, another family's
// account and valuation 404, and a repeat of the same day and amount
// answered with the existing valuation, not a second row.
func TestValuationsAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	acct := e.Alpha.Account.ID.String()
	tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: "2026-01-10",
		Amount: money.Amount(100_0000), Currency: "USD", Name: "Groceries"}
	if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}

	body := valuationBody(map[string]any{"account_id": acct, "amount": "10000.00", "date": "2026-01-31", "notes": "Quarterly statement"})
	created := e.Do("POST", "/api/v1/valuations", e.Alpha.Key, body).WantJSON(t, 201)
	account, _ := created["account"].(map[string]any)
	if created["date"] != "2026-01-31" || created["amount"] != "$10,000.00" || created["kind"] != "reconciliation" ||
		created["notes"] != "Quarterly statement" || account["id"] != acct || account["account_type"] != "depository" ||
		created["adjustment"] != "$10,100.00" {
		t.Errorf("created %v", created)
	}
	id := created["id"].(string)
	if got := e.Balance(t, e.Alpha.Family.ID, e.Alpha.Account.ID); got != money.Amount(10000_0000) {
		t.Errorf("balance %v right after the create, want 10000", got)
	}

	// The same day and amount again: the existing one, no second row.
	again := e.Do("POST", "/api/v1/valuations", e.Alpha.Key, body).WantJSON(t, 200)
	if again["id"] != id {
		t.Errorf("repeat answered %v", again)
	}
	list := e.Do("GET", "/api/v1/valuations?account_id="+acct, e.Alpha.Key, nil).WantJSON(t, 200)
	vs, _ := list["valuations"].([]any)
	if len(vs) != 2 || vs[0].(map[string]any)["id"] != id || vs[1].(map[string]any)["kind"] != "opening" ||
		vs[1].(map[string]any)["date"] != "2026-01-09" {
		t.Errorf("list %v", list)
	}
	if p, _ := list["pagination"].(map[string]any); p["total_count"] != float64(2) {
		t.Errorf("pagination %v", list["pagination"])
	}

	shown := e.Do("GET", "/api/v1/valuations/"+id, e.Alpha.Key, nil).WantJSON(t, 200)
	if shown["id"] != id || shown["currency"] != "USD" {
		t.Errorf("show %v", shown)
	}
	updated := e.Do("PATCH", "/api/v1/valuations/"+id, e.Alpha.Key, valuationBody(map[string]any{"amount": 15000, "date": "2026-02-01"})).WantJSON(t, 200)
	if updated["amount"] != "$15,000.00" || updated["date"] != "2026-02-01" || updated["notes"] != "Quarterly statement" {
		t.Errorf("update %v", updated)
	}
	notes := e.Do("PUT", "/api/v1/valuations/"+id, e.Alpha.Key, valuationBody(map[string]any{"notes": "Updated notes"})).WantJSON(t, 200)
	if notes["notes"] != "Updated notes" || notes["amount"] != "$15,000.00" {
		t.Errorf("notes only %v", notes)
	}
	if got := e.Balance(t, e.Alpha.Family.ID, e.Alpha.Account.ID); got != money.Amount(15000_0000) {
		t.Errorf("balance %v after the update, want 15000", got)
	}

	// Refusals.
	apitest.WantError(t, e.Do("POST", "/api/v1/valuations", e.Alpha.ReadKey, body), 403, "insufficient_scope")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/valuations/"+id, e.Alpha.ReadKey, valuationBody(map[string]any{"amount": 1})), 403, "insufficient_scope")
	apitest.WantError(t, e.Do("POST", "/api/v1/valuations", "", body), 401, "unauthorized")
	missing := apitest.WantError(t, e.Do("POST", "/api/v1/valuations", e.Alpha.Key, valuationBody(map[string]any{"account_id": acct})), 422, "validation_failed")
	if errs, _ := missing["errors"].([]any); len(errs) != 2 {
		t.Errorf("missing fields: %v", missing)
	}
	foreign := valuationBody(map[string]any{"account_id": e.Beta.Account.ID.String(), "amount": 1, "date": "2026-01-31"})
	if r := apitest.WantError(t, e.Do("POST", "/api/v1/valuations", e.Alpha.Key, foreign), 404, "not_found"); r["message"] != "Account not found" {
		t.Errorf("another family's account: %v", r)
	}
	for _, method := range []string{"GET", "PATCH"} {
		r := apitest.WantError(t, e.Do(method, "/api/v1/valuations/"+id, e.Beta.Key, valuationBody(map[string]any{"amount": 1})), 404, "not_found")
		if r["message"] != "Valuation not found" {
			t.Errorf("%s of another family's valuation: %v", method, r)
		}
	}
	if n := e.Do("GET", "/api/v1/valuations", e.Beta.Key, nil).WantJSON(t, 200)["valuations"].([]any); len(n) != 1 {
		t.Errorf("beta sees %d valuations, want its own opening", len(n))
	}
	bad := apitest.WantError(t, e.Do("POST", "/api/v1/valuations", e.Alpha.Key, valuationBody(map[string]any{"account_id": acct, "amount": "1e3", "date": "2026-02-30"})), 422, "validation_failed")
	if errs, _ := bad["errors"].([]any); len(errs) != 2 {
		t.Errorf("bad values: %v", bad)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/valuations?account_id=nope", e.Alpha.Key, nil), 400, "bad_request")
}

// TestAccountOpeningDateAPI: opening_balance_date on create and update;
// an opening equal to today's bank balance, dated today, stays the
// balance under imported history.
func TestAccountOpeningDateAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	today := civil.DateOf(e.Store.Now())
	created := e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{
		"name": "Bank", "account_type": "depository", "balance": "5000", "opening_balance_date": string(today)}}).WantJSON(t, 201)
	if created["opening_balance_date"] != string(today) {
		t.Errorf("created %v", created)
	}
	id := created["id"].(string)
	rows := []map[string]any{}
	for _, d := range []int{-60, -30, -1} {
		rows = append(rows, map[string]any{"account_id": id, "date": string(civil.DateOf(e.Store.Now().AddDate(0, 0, d))), "amount": "700", "name": "Rent"})
	}
	e.Do("POST", "/api/v1/transactions/bulk", e.Alpha.Key, map[string]any{"transactions": rows}).WantJSON(t, 200)
	e.RunBalanceTasks(t)
	if shown := e.Do("GET", "/api/v1/accounts/"+id, e.Alpha.Key, nil).WantJSON(t, 200); shown["balance"] != "$5,000.00" {
		t.Errorf("balance under imported history %v, want $5,000.00", shown["balance"])
	}
	undated := e.Do("PATCH", "/api/v1/accounts/"+id, e.Alpha.Key, map[string]any{"account": map[string]any{"opening_balance_date": nil}}).WantJSON(t, 200)
	if want := string(civil.DateOf(e.Store.Now().AddDate(0, 0, -61))); undated["opening_balance_date"] != want {
		t.Errorf("undated: %v, want %s", undated["opening_balance_date"], want)
	}
	// (Called directly: the policy's debounce counts the write as covered
	// by the recalculation just run.)
	if err := e.Store.RecalculateBalance(context.Background(), e.Alpha.Family.ID, uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	if shown := e.Do("GET", "/api/v1/accounts/"+id, e.Alpha.Key, nil).WantJSON(t, 200); shown["balance"] != "$2,900.00" {
		t.Errorf("balance counted from before the history %v, want $2,900.00", shown["balance"])
	}
	apitest.WantError(t, e.Do("PATCH", "/api/v1/accounts/"+id, e.Alpha.Key, map[string]any{"account": map[string]any{"opening_balance_date": "soon"}}), 422, "validation_failed")
}
