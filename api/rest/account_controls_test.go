package rest_test

import (
	"context"
	"testing"

	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/models"
)

// memberKey adds a member of role to the family, with a read_write key.
func memberKey(t *testing.T, e *apitest.Env, f *models.Family, email, role string) (*models.User, string) {
	t.Helper()
	u := apitest.Member(t, e, f, email, role)
	key, err := e.Store.CreateAPIKey(context.Background(), f.ID, &models.APIKey{UserID: u.ID, Name: "app", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	return u, key
}

// TestDeleteMe: the app's "Delete account" deletes the user; the last
// admin of a family with other members is refused, as the admin screens
// refuse it, and a read key cannot; the deleted user's key stops working.
func TestDeleteMe(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	apitest.WantError(t, e.Do("DELETE", "/api/v1/users/me", a.ReadKey, nil), 403, "insufficient_scope")
	_, memberKey := memberKey(t, e, a.Family, "member-"+a.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	refused := apitest.WantError(t, e.Do("DELETE", "/api/v1/users/me", a.Key, nil), 422, "validation_failed")
	if refused["message"] != "Failed to delete account" || len(refused["errors"].([]any)) != 1 {
		t.Fatalf("last admin: %v", refused)
	}
	if got := e.Do("DELETE", "/api/v1/users/me", memberKey, nil).WantJSON(t, 200); got["message"] != "Account has been deleted" {
		t.Fatalf("member: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/accounts", memberKey, nil), 401, "unauthorized")
	// Alone now, the admin may go; the family is purged in the background.
	e.Do("DELETE", "/api/v1/users/me", a.Key, nil).WantJSON(t, 200)
	if _, err := e.Store.User(context.Background(), a.Family.ID, a.User.ID); err == nil {
		t.Fatal("the admin is still there")
	}
}

// TestResetFamily: a family admin's reset removes the family's financial
// data by a job and keeps its people; the status says what is left; a
// member is refused; the other family is untouched.
func TestResetFamily(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	ctx := context.Background()
	e.Do("POST", "/api/v1/transactions", a.Key, map[string]any{"transaction": map[string]any{"account_id": a.Account.ID.String(),
		"date": "2024-03-01", "amount": "10", "name": "Coffee", "nature": "expense"}}).WantJSON(t, 201)
	e.Do("POST", "/api/v1/categories", a.Key, map[string]any{"category": map[string]any{"name": "Food", "classification": "expense"}}).WantJSON(t, 201)
	e.Do("POST", "/api/v1/recurring_transactions", a.Key, map[string]any{"recurring_transaction": map[string]any{"name": "Rent",
		"amount": "1500", "currency": "USD", "last_occurrence_date": "2024-03-01", "next_expected_date": "2024-04-01"}}).WantJSON(t, 201)
	_, memberKey := memberKey(t, e, a.Family, "m-"+a.Family.ID.String()[:8]+"@example.com", models.RoleMember)
	denied := apitest.WantError(t, e.Do("DELETE", "/api/v1/users/reset", memberKey, nil), 403, "forbidden")
	if denied["message"] != "You are not authorized to perform this action" {
		t.Fatalf("member: %v", denied)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/users/reset/status", memberKey, nil), 403, "forbidden")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/users/reset", a.ReadKey, nil), 403, "insufficient_scope")

	before := e.Do("GET", "/api/v1/users/reset/status", a.ReadKey, nil).WantJSON(t, 200)
	counts := before["counts"].(map[string]any)
	if before["status"] != "data_remaining" || counts["transactions"] != float64(1) || counts["accounts"] != float64(1) ||
		counts["categories"] != float64(1) || before["reset_complete"] != false {
		t.Fatalf("before: %v", before)
	}
	queued := e.Do("DELETE", "/api/v1/users/reset", a.Key, nil).WantJSON(t, 200)
	if queued["status"] != "queued" || queued["status_url"] != "/api/v1/users/reset/status" || queued["job_id"] == "" ||
		queued["family_id"] != a.Family.ID.String() {
		t.Fatalf("queued: %v", queued)
	}
	// The worker's handler, as it runs the queued task.
	task, err := jobs.NewFamilyResetTask(a.Family.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&jobs.Handlers{Store: e.Store, Log: e.Logger()}).FamilyReset(ctx, task); err != nil {
		t.Fatal(err)
	}
	after := e.Do("GET", "/api/v1/users/reset/status", a.Key, nil).WantJSON(t, 200)
	if after["status"] != "complete" || after["reset_complete"] != true {
		t.Fatalf("after: %v", after)
	}
	if _, err := e.Store.User(ctx, a.Family.ID, a.User.ID); err != nil {
		t.Fatalf("the admin went too: %v", err)
	}
	if _, n, err := e.Store.RecurringTransactions(ctx, a.Family.ID, models.RecurringFilter{}, models.Page{Number: 1, Size: 1}); err != nil || n != 0 {
		t.Fatalf("%d recurring transactions left, %v", n, err)
	}
	e.Do("GET", "/api/v1/usage", memberKey, nil).WantJSON(t, 200) // the people and their keys stay
	if _, err := e.Store.Account(ctx, e.Beta.Family.ID, e.Beta.Account.ID); err != nil {
		t.Fatalf("the other family lost its data: %v", err)
	}
}

// TestUsageAndFamilySettings: the credential with its scopes and this
// hour's use; the family's settings in the reference's snapshot shape.
func TestUsageAndFamilySettings(t *testing.T) {
	e := apitest.NewEnv(t)
	a := e.Alpha
	u := e.Do("GET", "/api/v1/usage", a.ReadKey, nil).WantJSON(t, 200)
	key := u["api_key"].(map[string]any)
	if u["authentication_method"] != "api_key" || key["name"] != "read" || key["scopes"].([]any)[0] != "read" {
		t.Fatalf("usage: %v", u)
	}
	if rl, ok := u["rate_limit"].(map[string]any); ok && rl["current_count"].(float64) < 1 {
		t.Fatalf("rate limit: %v", rl)
	}
	eur := &models.Account{FamilyID: a.Family.ID, Name: "Savings", AccountType: "depository", Currency: "EUR"}
	if err := e.Store.CreateAccount(context.Background(), eur); err != nil {
		t.Fatal(err)
	}
	fs := e.Do("GET", "/api/v1/family_settings", a.ReadKey, nil).WantJSON(t, 200)
	cur := fs["enabled_currencies"].([]any)
	if fs["id"] != a.Family.ID.String() || fs["currency"] != "USD" || fs["name"] != a.Family.Name || len(cur) != 2 ||
		cur[0] != "USD" || cur[1] != "EUR" {
		t.Fatalf("family settings: %v", fs)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/family_settings", "", nil), 401, "unauthorized")
}

// TestSyncFamily: POST /sync starts a sync of every connection that can
// sync, in the reference's shape; a family without connections gets none.
func TestSyncFamily(t *testing.T) {
	e := apitest.NewEnv(t)
	got := e.Do("POST", "/api/v1/sync", e.Alpha.Key, nil).WantJSON(t, 202)
	if got["syncable_type"] != "Family" || got["syncable_id"] != e.Alpha.Family.ID.String() || got["id"] != nil ||
		len(got["syncs"].([]any)) != 0 {
		t.Fatalf("no connections: %v", got)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/sync", e.Alpha.ReadKey, nil), 403, "insufficient_scope")
}
