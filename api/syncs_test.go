package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// activeConnection is a connection of alpha whose claim succeeded, with
// its initial (pending) sync.
func activeConnection(t *testing.T, e *env, bridge *bridgetest.Server) (*models.Connection, *models.Sync) {
	t.Helper()
	c := &models.Connection{FamilyID: e.alpha.Family.ID, Name: "Bridge"}
	if err := e.store.CreateConnection(t.Context(), c, bridge.Token("sync")); err != nil {
		t.Fatal(err)
	}
	sy, err := e.store.ClaimSucceeded(t.Context(), c, bridge.AccessURL("sync"))
	if err != nil {
		t.Fatal(err)
	}
	return c, sy
}

// idleConnection is an active connection whose initial sync is over
// (failed), so that no sync is under way.
func idleConnection(t *testing.T, e *env, bridge *bridgetest.Server) *models.Connection {
	t.Helper()
	c, first := activeConnection(t, e, bridge)
	if err := e.store.FailSync(t.Context(), first, "test"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSyncEndpoints(t *testing.T) {
	e, bridge := bridgeEnv(t)
	conn, first := activeConnection(t, e, bridge)
	cid := conn.ID.String()

	list := e.do("GET", "/api/v1/syncs", e.alpha.Key, nil).json(t)
	if syncs := list["syncs"].([]any); len(syncs) != 1 || syncs[0].(map[string]any)["trigger"] != "connect" {
		t.Fatalf("list: %v", list)
	}
	if n := len(e.do("GET", "/api/v1/syncs", e.beta.Key, nil).json(t)["syncs"].([]any)); n != 0 {
		t.Errorf("another family sees %d syncs", n)
	}
	if got := e.do("GET", "/api/v1/syncs?status=pending&provider_connection_id="+cid, e.alpha.Key, nil).json(t); len(got["syncs"].([]any)) != 1 {
		t.Errorf("filtered: %v", got)
	}
	wantError(t, e.do("GET", "/api/v1/syncs?status=bogus", e.alpha.Key, nil), 422, "validation_failed")
	wantError(t, e.do("GET", "/api/v1/syncs?provider_connection_id=xyz", e.alpha.Key, nil), 422, "validation_failed")
	wantError(t, e.do("GET", "/api/v1/syncs?page=0", e.alpha.Key, nil), 400, "bad_request")
	if got := e.do("GET", "/api/v1/syncs/latest", e.alpha.Key, nil).json(t); got["id"] != first.ID.String() || got["children"] == nil {
		t.Errorf("latest: %v", got)
	}
	wantError(t, e.do("GET", "/api/v1/syncs/latest", e.beta.Key, nil), 404, "not_found")
	if got := e.do("GET", "/api/v1/syncs/"+first.ID.String(), e.alpha.Key, nil).json(t); got["status"] != "pending" {
		t.Errorf("show: %v", got)
	}
	wantError(t, e.do("GET", "/api/v1/syncs/"+first.ID.String(), e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("GET", "/api/v1/syncs/nope", e.alpha.Key, nil), 404, "not_found")

	// Sync now while the first sync is queued: the same sync, no new row.
	r := e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.alpha.Key, nil)
	if r.status != 200 || r.json(t)["id"] != first.ID.String() {
		t.Fatalf("sync now while queued: %d %s", r.status, r.body)
	}
	wantError(t, e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.alpha.ReadKey, nil), 403, "insufficient_scope")
	if err := e.store.FailSync(t.Context(), first, "test"); err != nil {
		t.Fatal(err)
	}
	r = e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.alpha.Key, map[string]any{"full": true})
	if r.status != 202 {
		t.Fatalf("sync now: %d %s", r.status, r.body)
	}
	created := r.json(t)
	if created["full"] != true || created["trigger"] != "manual" {
		t.Errorf("new sync: %v", created)
	}
	insp := asynq.NewInspector(e.redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("default", "simplefin:sync:"+created["id"].(string)); err != nil {
		t.Errorf("sync not queued: %v", err)
	}
	if again := e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.alpha.Key, nil); again.status != 200 || again.json(t)["id"] != created["id"] {
		t.Errorf("second click: %d %s", again.status, again.body)
	}
	wantError(t, e.do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.alpha.Key, map[string]any{"full": "yes"}), 422, "validation_failed")
}

func TestConnectionSettingsAndAccounts(t *testing.T) {
	e, bridge := bridgeEnv(t)
	conn, _ := activeConnection(t, e, bridge)
	base := "/api/v1/provider_connections/" + conn.ID.String()

	r := e.do("PATCH", base, e.alpha.Key, map[string]any{"name": "Banks", "include_pending": false, "lookback_days": 365})
	if got := r.json(t); r.status != 200 || got["name"] != "Banks" || got["include_pending"] != false || got["lookback_days"] != float64(365) {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	wantError(t, e.do("PATCH", base, e.alpha.Key, map[string]any{"lookback_days": 0}), 422, "validation_failed")
	wantError(t, e.do("PATCH", base, e.alpha.Key, map[string]any{"name": ""}), 422, "validation_failed")
	wantError(t, e.do("PATCH", base, e.beta.Key, map[string]any{"name": "x"}), 404, "not_found")
	wantError(t, e.do("POST", base+"/retry_claim", e.alpha.Key, nil), 409, "conflict")

	pa, _, err := e.store.SaveProviderAccount(t.Context(), e.alpha.Family.ID, conn.ID, models.RemoteAccount{RemoteID: "ACT-1",
		Name: "Checking", Currency: "USD", BalanceDate: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	show := e.do("GET", base, e.alpha.Key, nil)
	got := show.json(t)
	if accts := got["accounts"].([]any); len(accts) != 1 || got["request_budget"] != float64(24) || got["requests_last_24h"] == nil {
		t.Fatalf("show: %s", show.body)
	}
	if strings.Contains(string(show.body), "s3cret") {
		t.Fatal("the access URL leaked into a response")
	}
	acct := base + "/accounts/" + pa.ID.String()
	if r := e.do("PATCH", acct, e.alpha.Key, map[string]any{"account_id": e.alpha.Account.ID.String(), "import_enabled": false}); r.status != 200 ||
		r.json(t)["account_id"] != e.alpha.Account.ID.String() || r.json(t)["import_enabled"] != false {
		t.Fatalf("link: %d %s", r.status, r.body)
	}
	wantError(t, e.do("PATCH", acct, e.alpha.Key, map[string]any{"account_id": e.beta.Account.ID.String()}), 422, "validation_failed")
	wantError(t, e.do("PATCH", acct, e.beta.Key, map[string]any{"import_enabled": true}), 404, "not_found")
	wantError(t, e.do("PATCH", base+"/accounts/nope", e.alpha.Key, map[string]any{"import_enabled": true}), 404, "not_found")

	// Reconnect with a new token: claiming (202), and a second one is a 409.
	r = e.do("PATCH", base, e.alpha.Key, map[string]any{"setup_token": bridge.Token("again")})
	if r.status != 202 || r.json(t)["status"] != "claiming" {
		t.Fatalf("reconnect: %d %s", r.status, r.body)
	}
	wantError(t, e.do("PATCH", base, e.alpha.Key, map[string]any{"setup_token": bridge.Token("third")}), 409, "conflict")
	wantError(t, e.do("POST", base+"/sync", e.alpha.Key, nil), 409, "conflict")
	wantError(t, e.do("PATCH", base, e.alpha.Key, map[string]any{"setup_token": "@@@"}), 422, "setup_token_not_base64")
}

func TestDisconnectDeletingTransactions(t *testing.T) {
	e, bridge := bridgeEnv(t)
	conn, _ := activeConnection(t, e, bridge)
	base := "/api/v1/provider_connections/" + conn.ID.String()
	member := &models.User{FamilyID: e.alpha.Family.ID, Email: "member-" + conn.ID.String()[:8] + "@example.com", Role: models.RoleMember}
	if err := e.store.CreateUser(t.Context(), member); err != nil {
		t.Fatal(err)
	}
	key, err := e.store.CreateAPIKey(t.Context(), e.alpha.Family.ID, &models.APIKey{UserID: member.ID, Name: "m", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("DELETE", base+"?delete_transactions=true", key, nil), 403, "forbidden")
	wantError(t, e.do("DELETE", base+"?delete_transactions=maybe", e.alpha.Key, nil), 422, "validation_failed")
	if r := e.do("DELETE", base+"?delete_transactions=true", e.alpha.Key, nil); r.status != 200 {
		t.Fatalf("disconnect and delete: %d %s", r.status, r.body)
	}
	insp := asynq.NewInspector(e.redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("low", "simplefin:purge:"+conn.ID.String()); err != nil {
		t.Errorf("purge not queued: %v", err)
	}
	if got := e.do("GET", "/api/v1/syncs/latest", e.alpha.Key, nil).json(t); got["status"] != "failed" || got["error"] != "disconnected" {
		t.Errorf("active sync after disconnect: %v", got)
	}
}

// TestSyncNowOverBudget: with 24 requests in the last day, Sync now sends
// nothing and answers 202 with a sync waiting for the first free slot.
func TestSyncNowOverBudget(t *testing.T) {
	e, bridge := bridgeEnv(t)
	conn := idleConnection(t, e, bridge)
	oldest := time.Now().Add(-20 * time.Hour)
	for i := 0; i < 24; i++ {
		at := oldest.Add(time.Duration(i) * time.Minute)
		e.rdb.ZAdd(t.Context(), "simplefin:budget:{"+conn.ID.String()+"}", redis.Z{Score: float64(at.UnixMilli()), Member: i})
	}
	r := e.do("POST", "/api/v1/provider_connections/"+conn.ID.String()+"/sync", e.alpha.Key, nil)
	if r.status != 202 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	notBefore, _ := time.Parse(time.RFC3339, r.json(t)["not_before"].(string))
	if want := oldest.Add(24 * time.Hour); notBefore.Sub(want).Abs() > 2*time.Second {
		t.Fatalf("not_before %v, want %v", notBefore, want)
	}
	if n, _ := bridge.AccountsRequests(); n != 0 {
		t.Fatal("a request was sent")
	}
}
