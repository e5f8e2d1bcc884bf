package rest_test

import (
	"coffer/api/apitest"
	"testing"
)

func TestAccounts(t *testing.T) {
	e := apitest.NewEnv(t)
	r := e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{
		"name": "Visa", "account_type": "credit_card", "currency": "usd", "balance": "150.25"}})
	a := r.WantJSON(t, 201)
	if a["balance"] != "$150.25" || a["balance_cents"] != 15025.0 || a["classification"] != "liability" || a["status"] != "active" || a["currency"] != "USD" {
		t.Errorf("created: %s", r.Body)
	}
	path := "/api/v1/accounts/" + a["id"].(string)
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{"account_type": "boat"}}), 422, "validation_failed")
	up := e.Do("PATCH", path, e.Alpha.Key, map[string]any{"account": map[string]any{"status": "disabled", "name": "Old Visa"}})
	if up.Status != 200 || up.JSON(t)["status"] != "disabled" {
		t.Errorf("update: %d %s", up.Status, up.Body)
	}
	// A disabled account takes no new transactions.
	m := apitest.WantError(t, e.Do("POST", "/api/v1/transactions", e.Alpha.Key, txBody(map[string]any{"account_id": a["id"], "date": "2024-01-01", "amount": 1, "name": "x"})), 422, "validation_failed")
	if m["errors"].([]any)[0] != "Account is not active" {
		t.Errorf("errors %v", m["errors"])
	}
	list := e.Do("GET", "/api/v1/accounts", e.Alpha.Key, nil).JSON(t)
	if len(list["accounts"].([]any)) != 2 {
		t.Errorf("list: %v", list)
	}
	apitest.WantError(t, e.Do("DELETE", path, e.Beta.Key, nil), 404, "not_found")
	if r := e.Do("DELETE", path, e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("delete: %d", r.Status)
	}
}

func TestCategoriesTagsMerchants(t *testing.T) {
	e := apitest.NewEnv(t)
	parent := e.Do("POST", "/api/v1/categories", e.Alpha.Key, map[string]any{"category": map[string]any{"name": "Food", "color": "#AABBCC", "icon": "utensils"}})
	if parent.Status != 201 {
		t.Fatalf("%d %s", parent.Status, parent.Body)
	}
	pid := parent.JSON(t)["id"].(string)
	child := e.Do("POST", "/api/v1/categories", e.Alpha.Key, map[string]any{"category": map[string]any{"name": "Groceries", "parent_id": pid}})
	if child.Status != 201 || child.JSON(t)["parent"].(map[string]any)["name"] != "Food" {
		t.Fatalf("child: %d %s", child.Status, child.Body)
	}
	if got := e.Do("GET", "/api/v1/categories/"+pid, e.Alpha.Key, nil).JSON(t); got["subcategories_count"] != 1.0 || got["color"] != "#aabbcc" {
		t.Errorf("parent: %v", got)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/categories", e.Alpha.Key, map[string]any{"category": map[string]any{"name": "food"}}), 409, "conflict")
	apitest.WantError(t, e.Do("POST", "/api/v1/categories", e.Alpha.Key, map[string]any{"category": map[string]any{"name": "x", "color": "red"}}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/categories", e.Beta.Key, map[string]any{"category": map[string]any{"name": "x", "parent_id": pid}}), 422, "validation_failed")
	if r := e.Do("GET", "/api/v1/categories", e.Alpha.Key, nil); len(r.JSON(t)["categories"].([]any)) != 2 {
		t.Errorf("categories: %s", r.Body)
	}

	tag := e.Do("POST", "/api/v1/tags", e.Alpha.Key, map[string]any{"tag": map[string]any{"name": "Trip"}})
	if tag.Status != 201 {
		t.Fatalf("%d %s", tag.Status, tag.Body)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/tags", e.Alpha.Key, map[string]any{"tag": map[string]any{"name": "trip"}}), 409, "conflict")
	if r := e.Do("POST", "/api/v1/tags", e.Beta.Key, map[string]any{"tag": map[string]any{"name": "trip"}}); r.Status != 201 {
		t.Errorf("same name in another family: %d", r.Status)
	}
	tags := e.Do("GET", "/api/v1/tags", e.Alpha.Key, nil)
	if string(tags.Body[0]) != "[" {
		t.Errorf("tags is not a bare array: %s", tags.Body)
	}
	tid := tag.JSON(t)["id"].(string)
	if r := e.Do("PATCH", "/api/v1/tags/"+tid, e.Alpha.Key, map[string]any{"tag": map[string]any{"color": "#000000"}}); r.Status != 200 || r.JSON(t)["name"] != "Trip" {
		t.Errorf("tag update: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("DELETE", "/api/v1/tags/"+tid, e.Beta.Key, nil), 404, "not_found")

	m := e.Do("POST", "/api/v1/merchants", e.Alpha.Key, map[string]any{"merchant": map[string]any{"name": "Shop"}})
	if m.Status != 201 {
		t.Fatalf("%d %s", m.Status, m.Body)
	}
	mid := m.JSON(t)["id"].(string)
	if r := e.Do("GET", "/api/v1/merchants", e.Alpha.Key, nil); string(r.Body[0]) != "[" {
		t.Errorf("merchants: %s", r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/merchants/"+mid, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("PUT", "/api/v1/merchants/"+mid, e.Alpha.Key, map[string]any{"merchant": map[string]any{"name": ""}}), 422, "validation_failed")
	if r := e.Do("DELETE", "/api/v1/merchants/"+mid, e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("delete merchant: %d", r.Status)
	}
	if r := e.Do("DELETE", "/api/v1/categories/"+pid, e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("delete category: %d", r.Status)
	}
}

func TestTransfers(t *testing.T) {
	e := apitest.NewEnv(t)
	sav := e.Do("POST", "/api/v1/accounts", e.Alpha.Key, map[string]any{"account": map[string]any{"name": "Savings", "account_type": "depository"}}).JSON(t)
	r := e.Do("POST", "/api/v1/transfers", e.Alpha.Key, map[string]any{"transfer": map[string]any{
		"from_account_id": e.Alpha.Account.ID.String(), "to_account_id": sav["id"], "amount": "500", "date": "2024-02-01"}})
	tr := r.WantJSON(t, 201)
	if tr["amount"] != "$500.00" || tr["outflow_transaction"].(map[string]any)["amount"] != "$500.00" || tr["inflow_transaction"].(map[string]any)["amount"] != "-$500.00" {
		t.Errorf("transfer: %s", r.Body)
	}
	inflow := tr["inflow_transaction"].(map[string]any)["id"].(string)
	tx := e.Do("GET", "/api/v1/transactions/"+inflow, e.Alpha.Key, nil).JSON(t)
	link := tx["transfer"].(map[string]any)
	if link["id"] != tr["id"] || link["other_account"].(map[string]any)["id"] != e.Alpha.Account.ID.String() {
		t.Errorf("transaction transfer: %v", link)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/transfers", e.Alpha.Key, map[string]any{"transfer": map[string]any{
		"from_account_id": e.Alpha.Account.ID.String(), "to_account_id": e.Beta.Account.ID.String(), "amount": "5", "date": "2024-02-01"}}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/transfers", e.Alpha.Key, map[string]any{"transfer": map[string]any{}}), 422, "validation_failed")
	if l := e.Do("GET", "/api/v1/transfers", e.Alpha.Key, nil).JSON(t); len(l["transfers"].([]any)) != 1 {
		t.Errorf("list: %v", l)
	}
	path := "/api/v1/transfers/" + tr["id"].(string)
	apitest.WantError(t, e.Do("GET", path, e.Beta.Key, nil), 404, "not_found")
	if r := e.Do("DELETE", path, e.Alpha.Key, nil); r.Status != 200 {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/transactions/"+inflow, e.Alpha.Key, nil), 404, "not_found")
}
