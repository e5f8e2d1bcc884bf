package rest_test

import (
	"context"
	"strings"
	"testing"

	"coffer/api/apitest"
	"coffer/models"
)

// TestTransfersTwoCurrencies: POST /transfers between accounts of two
// currencies takes what arrived as to_amount; the transfer shows both
// sides in their own currencies, the amount that arrived (as the
// reference does) and the implied rate, and so does each side's
// transaction. to_amount missing, zero or negative is a 422 naming it;
// within one currency nothing changes.
func TestTransfersTwoCurrencies(t *testing.T) {
	e := apitest.NewEnv(t)
	euros := &models.Account{FamilyID: e.Alpha.Family.ID, Name: "Euro savings", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(context.Background(), euros); err != nil {
		t.Fatal(err)
	}
	body := func(extra map[string]any) map[string]any {
		tr := map[string]any{"from_account_id": e.Alpha.Account.ID.String(), "to_account_id": euros.ID.String(),
			"amount": "100", "date": "2026-03-02"}
		for k, v := range extra {
			tr[k] = v
		}
		return map[string]any{"transfer": tr}
	}
	for _, bad := range []map[string]any{nil, {"to_amount": 0}, {"to_amount": "-5"}, {"to_amount": nil}, {"to_amount": "x"}} {
		m := apitest.WantError(t, e.Do("POST", "/api/v1/transfers", e.Alpha.Key, body(bad)), 422, "validation_failed")
		if errs, _ := m["errors"].([]any); len(errs) != 1 || !strings.Contains(errs[0].(string), "to_amount") {
			t.Errorf("to_amount %v: %v", bad, m)
		}
	}
	r := e.Do("POST", "/api/v1/transfers", e.Alpha.Key, body(map[string]any{"to_amount": "92.35"}))
	tr := r.WantJSON(t, 201)
	out, in := tr["outflow_transaction"].(map[string]any), tr["inflow_transaction"].(map[string]any)
	if tr["amount"] != "€92.35" || tr["amount_cents"] != 9235.0 || tr["currency"] != "EUR" || tr["exchange_rate"] != "0.9235" ||
		out["amount"] != "$100.00" || out["currency"] != "USD" || in["amount"] != "-€92.35" || in["currency"] != "EUR" {
		t.Errorf("transfer: %s", r.Body)
	}
	for _, side := range []map[string]any{out, in} {
		tx := e.Do("GET", "/api/v1/transactions/"+side["id"].(string), e.Alpha.Key, nil).WantJSON(t, 200)
		if link := tx["transfer"].(map[string]any); link["exchange_rate"] != "0.9235" || link["amount"] != "€92.35" {
			t.Errorf("transaction %s transfer: %v", side["id"], link)
		}
	}
	path := "/api/v1/transfers/" + tr["id"].(string)
	if got := e.Do("GET", path, e.Alpha.ReadKey, nil).WantJSON(t, 200); got["exchange_rate"] != "0.9235" {
		t.Errorf("show: %v", got)
	}
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/transactions/"+in["id"].(string), e.Beta.Key, nil), 404, "not_found")

	// Within one currency: one amount, no rate.
	sav := e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{"name": "Savings", "account_type": "depository", "currency": "USD"}}).JSON(t)
	same := e.Do("POST", "/api/v1/transfers", e.Alpha.Key, map[string]any{"transfer": map[string]any{
		"from_account_id": e.Alpha.Account.ID.String(), "to_account_id": sav["id"], "amount": "20", "date": "2026-03-02"}}).WantJSON(t, 201)
	if same["amount"] != "$20.00" || same["exchange_rate"] != nil {
		t.Errorf("same currency: %v", same)
	}
}
