package rest_test

import (
	"context"
	"testing"
	"time"

	"coffer/api/apitest"
	"coffer/models"
	"coffer/models/civil"
	"coffer/models/money"
)

func recurringBody(fields map[string]any) map[string]any {
	return map[string]any{"recurring_transaction": fields}
}

// TestRecurringTransactionsAPI: create by hand, show, list with filters,
// confirm and end by PATCH, delete; the read key refused; Beta's key 404
// on Alpha's record; the 422s of a zero amount, a cadence outside the
// list, missing dates and a bad account_id filter.
func TestRecurringTransactionsAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	acct := e.Alpha.Account.ID.String()
	body := recurringBody(map[string]any{"name": "Rent", "amount": "1500.00", "currency": "USD", "cadence": "monthly",
		"account_id": acct, "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"})
	created := e.Do("POST", "/api/v1/recurring_transactions", e.Alpha.Key, body).WantJSON(t, 201)
	account, _ := created["account"].(map[string]any)
	if created["name"] != "Rent" || created["amount"] != "$1,500.00" || created["amount_cents"] != float64(150000) ||
		created["status"] != "active" || created["manual"] != true || created["expected_day_of_month"] != float64(1) ||
		created["cadence"] != "monthly" || account["id"] != acct || created["merchant"] != nil {
		t.Errorf("created %v", created)
	}
	id := created["id"].(string)

	shown := e.Do("GET", "/api/v1/recurring_transactions/"+id, e.Alpha.Key, nil).WantJSON(t, 200)
	if shown["id"] != id || shown["next_expected_date"] != "2026-07-01" {
		t.Errorf("show %v", shown)
	}
	list := e.Do("GET", "/api/v1/recurring_transactions?status=active&account_id="+acct, e.Alpha.Key, nil).WantJSON(t, 200)
	if rs, _ := list["recurring_transactions"].([]any); len(rs) != 1 {
		t.Errorf("list %v", list)
	}
	if p, _ := list["pagination"].(map[string]any); p["total_count"] != float64(1) {
		t.Errorf("pagination %v", list["pagination"])
	}
	none := e.Do("GET", "/api/v1/recurring_transactions?status=suggested", e.Alpha.Key, nil).WantJSON(t, 200)
	if rs, _ := none["recurring_transactions"].([]any); len(rs) != 0 {
		t.Errorf("suggested %v", none)
	}

	ended := e.Do("PATCH", "/api/v1/recurring_transactions/"+id, e.Alpha.Key,
		recurringBody(map[string]any{"status": "ended", "notes": "Moved out"})).WantJSON(t, 200)
	if ended["status"] != "ended" || ended["notes"] != "Moved out" || ended["name"] != "Rent" {
		t.Errorf("ended %v", ended)
	}

	// Refusals.
	apitest.WantError(t, e.Do("POST", "/api/v1/recurring_transactions", e.Alpha.ReadKey, body), 403, "insufficient_scope")
	apitest.WantError(t, e.Do("GET", "/api/v1/recurring_transactions/"+id, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/recurring_transactions/"+id, e.Beta.Key, recurringBody(map[string]any{"status": "active"})), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/recurring_transactions/"+id, e.Beta.Key, nil), 404, "not_found")
	if rs, _ := e.Do("GET", "/api/v1/recurring_transactions", e.Beta.Key, nil).WantJSON(t, 200)["recurring_transactions"].([]any); len(rs) != 0 {
		t.Errorf("beta lists %v", rs)
	}
	betaAcct := recurringBody(map[string]any{"name": "Rent", "amount": "1500.00", "currency": "USD",
		"account_id": e.Beta.Account.ID.String(), "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"})
	apitest.WantError(t, e.Do("POST", "/api/v1/recurring_transactions", e.Alpha.Key, betaAcct), 404, "not_found")

	for name, fields := range map[string]map[string]any{
		"zero amount":    {"name": "Gym", "amount": "0", "currency": "USD", "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
		"daily cadence":  {"name": "Gym", "amount": "30", "currency": "USD", "cadence": "daily", "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
		"no dates":       {"name": "Gym", "amount": "30", "currency": "USD"},
		"no amount":      {"name": "Gym", "currency": "USD", "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
		"no name":        {"amount": "30", "currency": "USD", "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
		"bad day":        {"name": "Gym", "amount": "30", "currency": "USD", "expected_day_of_month": 40, "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
		"unknown status": {"name": "Gym", "amount": "30", "currency": "USD", "status": "done", "last_occurrence_date": "2026-06-01", "next_expected_date": "2026-07-01"},
	} {
		t.Run(name, func(t *testing.T) {
			apitest.WantError(t, e.Do("POST", "/api/v1/recurring_transactions", e.Alpha.Key, recurringBody(fields)), 422, "validation_failed")
		})
	}
	apitest.WantError(t, e.Do("PATCH", "/api/v1/recurring_transactions/"+id, e.Alpha.Key, recurringBody(map[string]any{"amount": 0})), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", "/api/v1/recurring_transactions/"+id, e.Alpha.Key, recurringBody(map[string]any{"next_expected_date": nil})), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/recurring_transactions?account_id=nope", e.Alpha.Key, nil), 422, "validation_failed")

	gone := e.Do("DELETE", "/api/v1/recurring_transactions/"+id, e.Alpha.Key, nil).WantJSON(t, 200)
	if gone["message"] != "Recurring transaction deleted successfully" {
		t.Errorf("delete %v", gone)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/recurring_transactions/"+id, e.Alpha.Key, nil), 404, "not_found")
}

// TestRecurringTransactionsDetectedAPI: what the detector stored is listed
// as suggested, with its price change.
func TestRecurringTransactionsDetectedAPI(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx := context.Background()
	today := e.Store.Now().UTC()
	for i := 4; i >= 1; i-- {
		d := today.AddDate(0, -i, 0)
		amount := int64(99900)
		if i == 1 {
			amount = 159900
		}
		tx := &models.Transaction{FamilyID: e.Alpha.Family.ID, AccountID: e.Alpha.Account.ID, Date: civilDate(d),
			Amount: moneyAmount(amount), Currency: "USD", Name: "NETFLIX.COM"}
		if _, _, err := e.Store.CreateTransaction(ctx, tx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := e.Store.DetectRecurring(ctx, e.Alpha.Family.ID); err != nil || res.Created != 1 {
		t.Fatalf("detect %+v, %v", res, err)
	}
	list := e.Do("GET", "/api/v1/recurring_transactions?status=suggested", e.Alpha.Key, nil).WantJSON(t, 200)
	rs, _ := list["recurring_transactions"].([]any)
	if len(rs) != 1 {
		t.Fatalf("list %v", list)
	}
	r := rs[0].(map[string]any)
	if r["name"] != "NETFLIX.COM" || r["amount_cents"] != float64(1599) || r["previous_amount_cents"] != float64(999) ||
		r["manual"] != false || r["occurrence_count"] != float64(4) {
		t.Errorf("suggested %v", r)
	}
}

func civilDate(t time.Time) civil.Date { return civil.DateOf(t) }
func moneyAmount(n int64) money.Amount { return money.Amount(n) }
