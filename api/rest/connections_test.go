package rest_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/jobs"
	"coffer/jobs/simplefin"
	"coffer/jobs/simplefin/bridge/bridgetest"
	"coffer/models"
)

func TestProviderConnections(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	token := bridge.Token("api")

	r := e.Do("POST", "/api/v1/provider_connections", e.Alpha.Key, map[string]any{"setup_token": token, "name": "My banks"})
	if r.Status != 202 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	conn := r.JSON(t)
	if conn["status"] != "claiming" || conn["name"] != "My banks" || conn["request_budget"] != 24.0 || strings.Contains(string(r.Body), token) {
		t.Fatalf("created: %s", r.Body)
	}
	id := conn["id"].(string)
	// The claim was queued for a worker.
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("critical", "simplefin:claim:"+id+":1"); err != nil {
		t.Errorf("claim not queued: %v", err)
	}
	t.Cleanup(func() { _ = insp.DeleteTask("critical", "simplefin:claim:"+id+":1") })

	// Wrapped like other write bodies.
	if r := e.Do("POST", "/api/v1/provider_connections", e.Alpha.Key, map[string]any{"provider_connection": map[string]any{"setup_token": bridge.Token("two")}}); r.Status != 202 {
		t.Errorf("wrapped body: %d %s", r.Status, r.Body)
	} else {
		t.Cleanup(func() { _ = insp.DeleteTask("critical", "simplefin:claim:"+r.JSON(t)["id"].(string)+":1") })
	}

	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for token, code := range map[string]string{
		"":                                    "setup_token_blank",
		"@@@":                                 "setup_token_not_base64",
		b64("not a url"):                      "setup_token_not_url",
		b64("ftp://bridge.example/claim/x"):   "claim_url_scheme",
		b64("https://u:p@bridge.example/c"):   "claim_url_invalid",
		b64("https://bridge.example/claim#x"): "claim_url_invalid",
	} {
		apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections", e.Alpha.Key, map[string]any{"setup_token": token}), 422, code)
	}
	apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections", e.Alpha.Key, map[string]any{"setup_token": 5}), 422, "validation_failed")
	apitest.WantError(t, e.Do("POST", "/api/v1/provider_connections", e.Alpha.ReadKey, map[string]any{"setup_token": token}), 403, "insufficient_scope")

	list := e.Do("GET", "/api/v1/provider_connections", e.Alpha.Key, nil).JSON(t)
	if n := len(list["provider_connections"].([]any)); n != 2 {
		t.Errorf("%d connections", n)
	}
	if n := len(e.Do("GET", "/api/v1/provider_connections", e.Beta.Key, nil).JSON(t)["provider_connections"].([]any)); n != 0 {
		t.Errorf("another family sees %d connections", n)
	}
	apitest.WantError(t, e.Do("GET", "/api/v1/provider_connections/"+id, e.Beta.Key, nil), 404, "not_found")
	apitest.WantError(t, e.Do("DELETE", "/api/v1/provider_connections/"+id, e.Beta.Key, nil), 404, "not_found")

	if r := e.Do("DELETE", "/api/v1/provider_connections/"+id, e.Alpha.Key, nil); r.Status != 200 {
		t.Fatalf("disconnect: %d %s", r.Status, r.Body)
	}
	got := e.Do("GET", "/api/v1/provider_connections/"+id, e.Alpha.Key, nil).JSON(t)
	if got["status"] != "disconnected" || got["disconnected_at"] == nil {
		t.Errorf("after disconnect: %v", got)
	}
	stored, _ := e.Store.Connection(t.Context(), e.Alpha.Family.ID, uuid.MustParse(id))
	if stored.SetupTokenEnc != nil || stored.AccessURLEnc != nil {
		t.Error("credentials kept after disconnect")
	}
}

// TestDeletePurgesOnlyCreatedAccounts: a disconnect with
// delete_transactions=true purges the empty ledger accounts the
// connection created, but never an account the user already had and
// linked through PATCH, nor one holding a manual transaction.
func TestDeletePurgesOnlyCreatedAccounts(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t)
	ctx, fam := t.Context(), e.Alpha.Family.ID
	conn := &models.Connection{FamilyID: fam, Name: "Banks"}
	if err := e.Store.CreateConnection(ctx, conn, bridge.Token("purge")); err != nil {
		t.Fatal(err)
	}
	remote := map[string]*models.ProviderAccount{}
	for _, id := range []string{"R1", "R2", "R3"} {
		pa, created, err := e.Store.SaveProviderAccount(ctx, fam, conn.ID, models.RemoteAccount{RemoteID: id, Name: id, Currency: "USD"})
		if err != nil || !created {
			t.Fatalf("remote account %s: %v", id, err)
		}
		remote[id] = pa
	}
	// The user links R2 to the empty account they already had, and keeps a
	// cash row in the account created for R1.
	mine := e.Alpha.Account.ID
	r := e.Do("PATCH", "/api/v1/provider_connections/"+conn.ID.String()+"/accounts/"+remote["R2"].ID.String(), e.Alpha.Key,
		map[string]any{"account_id": mine.String()})
	if r.Status != 200 || r.JSON(t)["account_id"] != mine.String() {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	manual := &models.Transaction{FamilyID: fam, AccountID: *remote["R1"].AccountID, Date: "2026-01-01", Amount: 100, Currency: "USD", Name: "cash"}
	if _, _, err := e.Store.CreateTransaction(ctx, manual, nil); err != nil {
		t.Fatal(err)
	}

	if r := e.Do("DELETE", "/api/v1/provider_connections/"+conn.ID.String()+"?delete_transactions=true", e.Alpha.Key, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	insp := asynq.NewInspector(e.Redis)
	defer insp.Close()
	info, err := insp.GetTaskInfo(jobs.QueueLow, "simplefin:purge:"+conn.ID.String())
	if err != nil {
		t.Fatalf("purge not queued: %v", err)
	}
	h := &simplefin.Handlers{Store: e.Store}
	for i := 0; i < 2; i++ { // a second run finds nothing left
		if err := h.Purge(ctx, asynq.NewTask(info.Type, info.Payload)); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(id uuid.UUID) bool {
		_, err := e.Store.Account(ctx, fam, id)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	for name, tc := range map[string]struct {
		id   uuid.UUID
		kept bool
	}{
		"the user's own linked account":          {mine, true},
		"a created account with a cash row":      {*remote["R1"].AccountID, true},
		"a created account unlinked by the user": {*remote["R2"].CreatedAccountID, false},
		"a created empty account":                {*remote["R3"].AccountID, false},
	} {
		if got := exists(tc.id); got != tc.kept {
			t.Errorf("%s: kept %v, want %v", name, got, tc.kept)
		}
	}
	if _, err := e.Store.Transaction(ctx, fam, manual.ID); err != nil {
		t.Errorf("manual transaction: %v", err)
	}
	if pas, _ := e.Store.ProviderAccounts(ctx, fam, conn.ID); len(pas) != 0 {
		t.Errorf("%d remote accounts left", len(pas))
	}
}

// TestUntypedAccount: the ledger account a connection creates has no type
// (spec §8); the API shows account_type null and counts it as an asset,
// and the user can type it later.
func TestUntypedAccount(t *testing.T) {
	e := apitest.NewEnv(t)
	ctx, fam := t.Context(), e.Alpha.Family.ID
	conn := &models.Connection{FamilyID: fam, Name: "Banks"}
	if err := e.Store.CreateConnection(ctx, conn, bridgetest.New(t).Token("untyped")); err != nil {
		t.Fatal(err)
	}
	pa, _, err := e.Store.SaveProviderAccount(ctx, fam, conn.ID, models.RemoteAccount{RemoteID: "R1", Name: "Joint", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	id := pa.AccountID.String()
	spent := &models.Transaction{FamilyID: fam, AccountID: *pa.AccountID, Date: "2026-01-01", Amount: 250000, Currency: "USD", Name: "rent"}
	if _, _, err := e.Store.CreateTransaction(ctx, spent, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.RecalculateBalance(ctx, fam, *pa.AccountID); err != nil {
		t.Fatal(err)
	}
	a := e.Do("GET", "/api/v1/accounts/"+id, e.Alpha.Key, nil).JSON(t)
	if a["account_type"] != nil || a["classification"] != "asset" || a["balance"] != "-$25.00" {
		t.Fatalf("untyped account: %v", a)
	}
	list := e.Do("GET", "/api/v1/transactions?account_id="+id, e.Alpha.Key, nil).JSON(t)["transactions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["account"].(map[string]any)["account_type"] != nil {
		t.Fatalf("transactions: %v", list)
	}
	r := e.Do("PATCH", "/api/v1/accounts/"+id, e.Alpha.Key, map[string]any{"account": map[string]any{"account_type": "credit_card"}})
	if got := r.JSON(t); r.Status != 200 || got["account_type"] != "credit_card" || got["classification"] != "liability" {
		t.Fatalf("typed: %d %s", r.Status, r.Body)
	}
}

// TestConnectionListAccountsAndNextSync: the list shows each connection's
// remote accounts and next_sync_at, as a single connection does: the
// queued sync's time, else the next scheduled run, else null.
func TestConnectionListAccountsAndNextSync(t *testing.T) {
	e, bridge := apitest.BridgeEnv(t, func(o *api.Options) { o.SimpleFINSyncCron = "22 2 * * *" })
	ctx, fam := t.Context(), e.Alpha.Family.ID
	active := &models.Connection{FamilyID: fam, Name: "Active"}
	if err := e.Store.CreateConnection(ctx, active, bridge.Token("a")); err != nil {
		t.Fatal(err)
	}
	first, err := e.Store.ClaimSucceeded(ctx, active, bridge.AccessURL("a"))
	if err != nil {
		t.Fatal(err)
	}
	pa, _, err := e.Store.SaveProviderAccount(ctx, fam, active.ID, models.RemoteAccount{RemoteID: "R1", Name: "Checking", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	claiming := &models.Connection{FamilyID: fam, Name: "Claiming"}
	if err := e.Store.CreateConnection(ctx, claiming, bridge.Token("b")); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.ConnectionFetched(ctx, active, []models.ProviderError{
		{Message: "Bank B: sign in again", Code: "con.auth", ConnID: "CON-B"}}); err != nil {
		t.Fatal(err)
	}
	e.RDB.ZAdd(ctx, "simplefin:budget:{"+active.ID.String()+"}", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "one"})

	list := e.Do("GET", "/api/v1/provider_connections", e.Alpha.Key, nil).JSON(t)["provider_connections"].([]any)
	if len(list) != 2 {
		t.Fatalf("%d connections", len(list))
	}
	a, c := list[0].(map[string]any), list[1].(map[string]any)
	accounts := a["accounts"].([]any)
	if len(accounts) != 1 || accounts[0].(map[string]any)["id"] != pa.ID.String() {
		t.Errorf("accounts: %v", a["accounts"])
	}
	if a["next_sync_at"] != first.NotBefore.UTC().Format("2006-01-02T15:04:05Z") {
		t.Errorf("next_sync_at %v, want the queued sync's %v", a["next_sync_at"], first.NotBefore)
	}
	if errs := fmt.Sprint(a["provider_errors"]); errs != "[map[code:con.auth conn_id:CON-B message:Bank B: sign in again]]" {
		t.Errorf("provider_errors: %s", errs)
	}
	if a["requests_last_24h"] != 1.0 || a["request_budget"] != 24.0 || c["requests_last_24h"] != 0.0 {
		t.Errorf("budget in the list: %v of %v, %v", a["requests_last_24h"], a["request_budget"], c["requests_last_24h"])
	}
	if c["next_sync_at"] != nil || len(c["accounts"].([]any)) != 0 {
		t.Errorf("claiming: next_sync_at %v, accounts %v", c["next_sync_at"], c["accounts"])
	}

	// With nothing queued, the next run is the daily one.
	if err := e.Store.FailSync(ctx, first, "test"); err != nil {
		t.Fatal(err)
	}
	show := e.Do("GET", "/api/v1/provider_connections/"+active.ID.String(), e.Alpha.Key, nil).JSON(t)
	next, err := time.Parse(time.RFC3339, show["next_sync_at"].(string))
	if now := time.Now(); err != nil || !next.After(now) || next.After(now.Add(24*time.Hour+30*time.Minute)) {
		t.Fatalf("next_sync_at %v %v", show["next_sync_at"], err)
	}
	if next.UTC().Hour() != 2 || next.UTC().Minute() < 22 || next.UTC().Minute() > 52 {
		t.Errorf("next_sync_at %v is not the 02:22 UTC run plus at most 30 minutes", next)
	}
	r := e.Do("PATCH", "/api/v1/provider_connections/"+active.ID.String(), e.Alpha.Key, map[string]any{"name": "Renamed"})
	if got := r.JSON(t); r.Status != 200 || got["name"] != "Renamed" || got["next_sync_at"] != show["next_sync_at"] || len(got["accounts"].([]any)) != 1 {
		t.Errorf("patch: %d %s", r.Status, r.Body)
	}
}
