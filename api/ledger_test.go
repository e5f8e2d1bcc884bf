package api_test

import (
	"testing"
)

func TestAccounts(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/api/v1/accounts", e.alpha.Key, map[string]any{"account": map[string]any{
		"name": "Visa", "account_type": "credit_card", "currency": "usd", "balance": "150.25"}})
	a := r.wantJSON(t, 201)
	if a["balance"] != "$150.25" || a["balance_cents"] != 15025.0 || a["classification"] != "liability" || a["status"] != "active" || a["currency"] != "USD" {
		t.Errorf("created: %s", r.body)
	}
	path := "/api/v1/accounts/" + a["id"].(string)
	wantError(t, e.do("GET", path, e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("POST", "/api/v1/accounts", e.alpha.Key, map[string]any{"account": map[string]any{"account_type": "boat"}}), 422, "validation_failed")
	up := e.do("PATCH", path, e.alpha.Key, map[string]any{"account": map[string]any{"status": "disabled", "name": "Old Visa"}})
	if up.status != 200 || up.json(t)["status"] != "disabled" {
		t.Errorf("update: %d %s", up.status, up.body)
	}
	// A disabled account takes no new transactions.
	m := wantError(t, e.do("POST", "/api/v1/transactions", e.alpha.Key, txBody(map[string]any{"account_id": a["id"], "date": "2024-01-01", "amount": 1, "name": "x"})), 422, "validation_failed")
	if m["errors"].([]any)[0] != "Account is not active" {
		t.Errorf("errors %v", m["errors"])
	}
	list := e.do("GET", "/api/v1/accounts", e.alpha.Key, nil).json(t)
	if len(list["accounts"].([]any)) != 2 {
		t.Errorf("list: %v", list)
	}
	wantError(t, e.do("DELETE", path, e.beta.Key, nil), 404, "not_found")
	if r := e.do("DELETE", path, e.alpha.Key, nil); r.status != 200 {
		t.Errorf("delete: %d", r.status)
	}
}

func TestCategoriesTagsMerchants(t *testing.T) {
	e := newEnv(t)
	parent := e.do("POST", "/api/v1/categories", e.alpha.Key, map[string]any{"category": map[string]any{"name": "Food", "color": "#AABBCC", "icon": "utensils"}})
	if parent.status != 201 {
		t.Fatalf("%d %s", parent.status, parent.body)
	}
	pid := parent.json(t)["id"].(string)
	child := e.do("POST", "/api/v1/categories", e.alpha.Key, map[string]any{"category": map[string]any{"name": "Groceries", "parent_id": pid}})
	if child.status != 201 || child.json(t)["parent"].(map[string]any)["name"] != "Food" {
		t.Fatalf("child: %d %s", child.status, child.body)
	}
	if got := e.do("GET", "/api/v1/categories/"+pid, e.alpha.Key, nil).json(t); got["subcategories_count"] != 1.0 || got["color"] != "#aabbcc" {
		t.Errorf("parent: %v", got)
	}
	wantError(t, e.do("POST", "/api/v1/categories", e.alpha.Key, map[string]any{"category": map[string]any{"name": "food"}}), 409, "conflict")
	wantError(t, e.do("POST", "/api/v1/categories", e.alpha.Key, map[string]any{"category": map[string]any{"name": "x", "color": "red"}}), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/categories", e.beta.Key, map[string]any{"category": map[string]any{"name": "x", "parent_id": pid}}), 422, "validation_failed")
	if r := e.do("GET", "/api/v1/categories", e.alpha.Key, nil); len(r.json(t)["categories"].([]any)) != 2 {
		t.Errorf("categories: %s", r.body)
	}

	tag := e.do("POST", "/api/v1/tags", e.alpha.Key, map[string]any{"tag": map[string]any{"name": "Trip"}})
	if tag.status != 201 {
		t.Fatalf("%d %s", tag.status, tag.body)
	}
	wantError(t, e.do("POST", "/api/v1/tags", e.alpha.Key, map[string]any{"tag": map[string]any{"name": "trip"}}), 409, "conflict")
	if r := e.do("POST", "/api/v1/tags", e.beta.Key, map[string]any{"tag": map[string]any{"name": "trip"}}); r.status != 201 {
		t.Errorf("same name in another family: %d", r.status)
	}
	tags := e.do("GET", "/api/v1/tags", e.alpha.Key, nil)
	if string(tags.body[0]) != "[" {
		t.Errorf("tags is not a bare array: %s", tags.body)
	}
	tid := tag.json(t)["id"].(string)
	if r := e.do("PATCH", "/api/v1/tags/"+tid, e.alpha.Key, map[string]any{"tag": map[string]any{"color": "#000000"}}); r.status != 200 || r.json(t)["name"] != "Trip" {
		t.Errorf("tag update: %d %s", r.status, r.body)
	}
	wantError(t, e.do("DELETE", "/api/v1/tags/"+tid, e.beta.Key, nil), 404, "not_found")

	m := e.do("POST", "/api/v1/merchants", e.alpha.Key, map[string]any{"merchant": map[string]any{"name": "Shop"}})
	if m.status != 201 {
		t.Fatalf("%d %s", m.status, m.body)
	}
	mid := m.json(t)["id"].(string)
	if r := e.do("GET", "/api/v1/merchants", e.alpha.Key, nil); string(r.body[0]) != "[" {
		t.Errorf("merchants: %s", r.body)
	}
	wantError(t, e.do("GET", "/api/v1/merchants/"+mid, e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("PUT", "/api/v1/merchants/"+mid, e.alpha.Key, map[string]any{"merchant": map[string]any{"name": ""}}), 422, "validation_failed")
	if r := e.do("DELETE", "/api/v1/merchants/"+mid, e.alpha.Key, nil); r.status != 200 {
		t.Errorf("delete merchant: %d", r.status)
	}
	if r := e.do("DELETE", "/api/v1/categories/"+pid, e.alpha.Key, nil); r.status != 200 {
		t.Errorf("delete category: %d", r.status)
	}
}

func TestTransfers(t *testing.T) {
	e := newEnv(t)
	sav := e.do("POST", "/api/v1/accounts", e.alpha.Key, map[string]any{"account": map[string]any{"name": "Savings", "account_type": "depository"}}).json(t)
	r := e.do("POST", "/api/v1/transfers", e.alpha.Key, map[string]any{"transfer": map[string]any{
		"from_account_id": e.alpha.Account.ID.String(), "to_account_id": sav["id"], "amount": "500", "date": "2024-02-01"}})
	tr := r.wantJSON(t, 201)
	if tr["amount"] != "$500.00" || tr["outflow_transaction"].(map[string]any)["amount"] != "$500.00" || tr["inflow_transaction"].(map[string]any)["amount"] != "-$500.00" {
		t.Errorf("transfer: %s", r.body)
	}
	inflow := tr["inflow_transaction"].(map[string]any)["id"].(string)
	tx := e.do("GET", "/api/v1/transactions/"+inflow, e.alpha.Key, nil).json(t)
	link := tx["transfer"].(map[string]any)
	if link["id"] != tr["id"] || link["other_account"].(map[string]any)["id"] != e.alpha.Account.ID.String() {
		t.Errorf("transaction transfer: %v", link)
	}
	wantError(t, e.do("POST", "/api/v1/transfers", e.alpha.Key, map[string]any{"transfer": map[string]any{
		"from_account_id": e.alpha.Account.ID.String(), "to_account_id": e.beta.Account.ID.String(), "amount": "5", "date": "2024-02-01"}}), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/transfers", e.alpha.Key, map[string]any{"transfer": map[string]any{}}), 422, "validation_failed")
	if l := e.do("GET", "/api/v1/transfers", e.alpha.Key, nil).json(t); len(l["transfers"].([]any)) != 1 {
		t.Errorf("list: %v", l)
	}
	path := "/api/v1/transfers/" + tr["id"].(string)
	wantError(t, e.do("GET", path, e.beta.Key, nil), 404, "not_found")
	if r := e.do("DELETE", path, e.alpha.Key, nil); r.status != 200 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	wantError(t, e.do("GET", "/api/v1/transactions/"+inflow, e.alpha.Key, nil), 404, "not_found")
}
