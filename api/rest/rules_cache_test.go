package rest_test

import (
	"testing"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/api/rest"
	"coffer/models"
)

// TestRulesCacheEverywhere: a web process keeps a family's compiled rules
// while the family its key read names the same rules version. Another
// process (its own store and caches) that saves, changes or deletes a rule,
// or deletes a category a rule names, is seen by the next create here.
func TestRulesCacheEverywhere(t *testing.T) {
	e := apitest.NewEnv(t)
	store := models.NewStore(e.Store.DB())
	store.Secrets = e.Store.Secrets
	store.OnAuthChange(rest.AnnounceAuthChange(e.RDB, e.Opts.AuthWatch))
	o := e.Opts
	o.Store = store
	app, err := api.New(o)
	if err != nil {
		t.Fatal(err)
	}
	other := *e
	other.App = app
	other.Store = store

	cat, _ := apitest.RuleFixtures(t, e)
	create := func(name string) map[string]any {
		t.Helper()
		body := `{"transaction": {"account_id": "` + e.Alpha.Account.ID.String() + `", "date": "2024-04-01", "amount": "4.50", "name": "` + name + `"}}`
		return other.Do("POST", "/api/v1/transactions", e.Alpha.Key, body).WantJSON(t, 201)
	}
	category := func(tx map[string]any) any {
		if c, ok := tx["category"].(map[string]any); ok {
			return c["name"]
		}
		return nil
	}
	// Twice: the second create takes the (empty) rules from the cache.
	for _, name := range []string{"Starbucks a", "Starbucks b"} {
		if c := category(create(name)); c != nil {
			t.Fatalf("before any rule: %v", c)
		}
	}
	rule := e.Do("POST", "/api/v1/rules", e.Alpha.Key, coffeeRule(cat.ID.String())).WantJSON(t, 201)["data"].(map[string]any)
	id := rule["id"].(string)
	for _, name := range []string{"Starbucks c", "Starbucks d"} {
		if c := category(create(name)); c != "Coffee" {
			t.Fatalf("after the rule was saved elsewhere: %v", c)
		}
	}
	e.Do("PATCH", "/api/v1/rules/"+id, e.Alpha.Key, map[string]any{"rule": map[string]any{"active": false}}).WantJSON(t, 200)
	if c := category(create("Starbucks e")); c != nil {
		t.Fatalf("after the rule was switched off elsewhere: %v", c)
	}
	e.Do("PATCH", "/api/v1/rules/"+id, e.Alpha.Key, map[string]any{"rule": map[string]any{"active": true}}).WantJSON(t, 200)
	if c := category(create("Starbucks f")); c != "Coffee" {
		t.Fatalf("after the rule was switched on again: %v", c)
	}
	if err := e.Store.DeleteCategory(t.Context(), e.Alpha.Family.ID, cat.ID); err != nil {
		t.Fatal(err)
	}
	if c := category(create("Starbucks g")); c != nil {
		t.Fatalf("after its category was deleted elsewhere: %v", c)
	}
	if r := e.Do("DELETE", "/api/v1/rules/"+id, e.Alpha.Key, nil); r.Status != 200 && r.Status != 204 {
		t.Fatalf("delete rule: %d", r.Status)
	}
	if c := category(create("Starbucks h")); c != nil {
		t.Fatalf("after the rule was deleted: %v", c)
	}
}
