package rest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api/apitest"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

// activeConnection is a connection of alpha whose claim succeeded, with
// its initial (pending) sync.
func activeConnection(t *testing.T, e *apitest.Env, bridge *bridgetest.Server) (*models.Connection, *models.Sync) {
	t.Helper()
	c := &models.Connection{FamilyID: e.Alpha.Family.ID, Name: "Bridge"}
	if err := e.Store.CreateConnection(t.Context(), c, bridge.Token("sync")); err != nil {
		t.Fatal(err)
	}
	sy, err := e.Store.ClaimSucceeded(t.Context(), c, bridge.AccessURL("sync"))
	if err != nil {
		t.Fatal(err)
	}
	return c, sy
}

// idleConnection is an active connection whose initial sync is over
// (failed), so that no sync is under way.
func idleConnection(t *testing.T, e *apitest.Env, bridge *bridgetest.Server) *models.Connection {
	t.Helper()
	c, first := activeConnection(t, e, bridge)
	if err := e.Store.FailSync(t.Context(), first, "test"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSyncEndpoints(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn, first := activeConnection(t, e, bridge)
	cid := conn.ID.String()

	list := e.Do("GET", "/api/v1/syncs", e.Alpha.Key, nil).JSON(t)
	if syncs := list["syncs"].([]any); len(syncs) != 1 || syncs[0].(map[string]any)["trigger"] != "connect" {
		t.Fatalf("list: %v", list)
	}
	if n := len(e.Do("GET", "/api/v1/syncs", e.Beta.Key, nil).JSON(t)["syncs"].([]any)); n != 0 {
		t.Errorf("another family sees %d syncs", n)
	}
	if got := e.Do("GET", "/api/v1/syncs?status=pending&provider_connection_id="+cid, e.Alpha.Key, nil).JSON(t); len(got["syncs"].([]any)) != 1 {
		t.Errorf("filtered: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs?status=bogus", e.Alpha.Key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs?provider_connection_id=xyz", e.Alpha.Key, nil), 422, "validation_failed")
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs?page=0", e.Alpha.Key, nil), 400, "bad_request")
	if got := e.Do("GET", "/api/v1/syncs/latest", e.Alpha.Key, nil).JSON(t); got["id"] != first.ID.String() || got["children"] == nil {
		t.Errorf("latest: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs/latest", e.Beta.Key, nil), 404, "not_found")
	if got := e.Do("GET", "/api/v1/syncs/"+first.ID.String(), e.Alpha.Key, nil).JSON(t); got["status"] != "pending" {
		t.Errorf("show: %v", got)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs/"+first.ID.String(), e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("GET", "/api/v1/syncs/nope", e.Alpha.Key, nil), 404, "not_found")

	// Sync now while the first sync is queued: the same sync, no new row.
	r := e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Alpha.Key, nil)
	if r.Status != 200 || r.JSON(t)["id"] != first.ID.String() {
		t.Fatalf("sync now while queued: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Alpha.ReadKey, nil), 403, "insufficient_scope")
	if err := e.Store.FailSync(t.Context(), first, "test"); err != nil {
		t.Fatal(err)
	}
	r = e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Alpha.Key, map[string]any{"full": true})
	if r.Status != 202 {
		t.Fatalf("sync now: %d %s", r.Status, r.Body)
	}
	created := r.JSON(t)
	if created["full"] != true || created["trigger"] != "manual" {
		t.Errorf("new sync: %v", created)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("default", "simplefin:sync:"+created["id"].(string)); err != nil {
		t.Errorf("sync not queued: %v", err)
	}
	if again := e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Alpha.Key, nil); again.Status != 200 || again.JSON(t)["id"] != created["id"] {
		t.Errorf("second click: %d %s", again.Status, again.Body)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections/"+cid+"/sync", e.Alpha.Key, map[string]any{"full": "yes"}), 422, "validation_failed")
}

func TestConnectionSettingsAndAccounts(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn, _ := activeConnection(t, e, bridge)
	base := "/api/v1/provider_connections/" + conn.ID.String()

	r := e.Do("PATCH", base, e.Alpha.Key, map[string]any{"name": "Banks", "include_pending": false, "lookback_days": 365})
	if got := r.JSON(t); r.Status != 200 || got["name"] != "Banks" || got["include_pending"] != false || got["lookback_days"] != float64(365) {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("PATCH", base, e.Alpha.Key, map[string]any{"lookback_days": 0}), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", base, e.Alpha.Key, map[string]any{"name": ""}), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", base, e.Beta.Key, map[string]any{"name": "x"}), 404, "not_found")
	apitest.WantError(t, e.Do("POST", base+"/retry_claim", e.Alpha.Key, nil), 409, "conflict")

	pa, _, err := e.Store.SaveProviderAccount(t.Context(), e.Alpha.Family.ID, conn.ID, models.RemoteAccount{RemoteID: "ACT-1",
		Name: "Checking", Currency: "USD", BalanceDate: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	show := e.Do("GET", base, e.Alpha.Key, nil)
	got := show.JSON(t)
	if accts := got["accounts"].([]any); len(accts) != 1 || got["request_budget"] != float64(24) || got["requests_last_24h"] == nil {
		t.Fatalf("show: %s", show.Body)
	}
	if strings.Contains(string(show.Body), "s3cret") {
		t.Fatal("the access URL leaked into a response")
	}
	acct := base + "/accounts/" + pa.ID.String()
	if r := e.Do("PATCH", acct, e.Alpha.Key, map[string]any{"account_id": e.Alpha.Account.ID.String(), "import_enabled": false}); r.Status != 200 ||
		r.JSON(t)["account_id"] != e.Alpha.Account.ID.String() || r.JSON(t)["import_enabled"] != false {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("PATCH", acct, e.Alpha.Key, map[string]any{"account_id": e.Beta.Account.ID.String()}), 422, "validation_failed")
	apitest.WantError(t, e.Do("PATCH", acct, e.Beta.Key, map[string]any{"import_enabled": true}), 404, "not_found")
	apitest.WantError(t, e.Do("PATCH", base+"/accounts/nope", e.Alpha.Key, map[string]any{"import_enabled": true}), 404, "not_found")

	// Reconnect with a new token: claiming (202), and a second one is a 409.
	r = e.Do("PATCH", base, e.Alpha.Key, map[string]any{"setup_token": bridge.Token("again")})
	if r.Status != 202 || r.JSON(t)["status"] != "claiming" {
		t.Fatalf("reconnect: %d %s", r.Status, r.Body)
	}
	apitest.WantError(t, e.Do("PATCH", base, e.Alpha.Key, map[string]any{"setup_token": bridge.Token("third")}), 409, "conflict")
	apitest.WantError(t, e.Do("POST", base+"/sync", e.Alpha.Key, nil), 409, "conflict")
	apitest.WantError(t, e.Do("PATCH", base, e.Alpha.Key, map[string]any{"setup_token": "@@@"}), 422, "setup_token_not_base64")
}

func TestDisconnectDeletingTransactions(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn, _ := activeConnection(t, e, bridge)
	base := "/api/v1/provider_connections/" + conn.ID.String()
	member := &models.User{FamilyID: e.Alpha.Family.ID, Email: "member-" + conn.ID.String()[:8] + "@example.com", Role: models.RoleMember}
	if err := e.Store.CreateUser(t.Context(), member); err != nil {
		t.Fatal(err)
	}
	key, err := e.Store.CreateAPIKey(t.Context(), e.Alpha.Family.ID, &models.APIKey{UserID: member.ID, Name: "m", Scope: models.ScopeReadWrite})
	if err != nil {
		t.Fatal(err)
	}
	apitest.WantError(t, e.Do("DELETE", base+"?delete_transactions=true", key, nil), 403, "forbidden")
	apitest.WantError(t, e.Do("DELETE", base+"?delete_transactions=maybe", e.Alpha.Key, nil), 422, "validation_failed")
	if r := e.Do("DELETE", base+"?delete_transactions=true", e.Alpha.Key, nil); r.Status != 200 {
		t.Fatalf("disconnect and delete: %d %s", r.Status, r.Body)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("low", "simplefin:purge:"+conn.ID.String()); err != nil {
		t.Errorf("purge not queued: %v", err)
	}
	if got := e.Do("GET", "/api/v1/syncs/latest", e.Alpha.Key, nil).JSON(t); got["status"] != "failed" || got["error"] != "disconnected" {
		t.Errorf("active sync after disconnect: %v", got)
	}
}

// TestSyncNowOverBudget: with 24 requests in the last day, Sync now sends
// nothing and answers 202 with a sync waiting for the first free slot.
func TestSyncNowOverBudget(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	conn := idleConnection(t, e, bridge)
	oldest := time.Now().Add(-20 * time.Hour)
	for i := 0; i < 24; i++ {
		at := oldest.Add(time.Duration(i) * time.Minute)
		e.RDB.ZAdd(t.Context(), "simplefin:budget:{"+conn.ID.String()+"}", redis.Z{Score: float64(at.UnixMilli()), Member: i})
	}
	r := e.Do("POST", "/api/v1/provider_connections/"+conn.ID.String()+"/sync", e.Alpha.Key, nil)
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	notBefore, _ := time.Parse(time.RFC3339, r.JSON(t)["not_before"].(string))
	if want := oldest.Add(24 * time.Hour); notBefore.Sub(want).Abs() > 2*time.Second {
		t.Fatalf("not_before %v, want %v", notBefore, want)
	}
	if n, _ := bridge.AccountsRequests(); n != 0 {
		t.Fatal("a request was sent")
	}
}
