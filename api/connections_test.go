package api_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"coffer/api"
	"coffer/jobs/simplefin/simplefintest"
)

func TestProviderConnections(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.SimpleFINAllowHTTP = true })
	bridge := simplefintest.New(t)
	token := bridge.Token("api")

	r := e.do("POST", "/api/v1/provider_connections", e.alpha.Key, map[string]any{"setup_token": token, "name": "My banks"})
	if r.status != 202 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	conn := r.json(t)
	if conn["status"] != "claiming" || conn["name"] != "My banks" || strings.Contains(string(r.body), token) {
		t.Fatalf("created: %s", r.body)
	}
	id := conn["id"].(string)
	// The claim was queued for a worker.
	insp := asynq.NewInspector(e.redis)
	defer insp.Close()
	if _, err := insp.GetTaskInfo("critical", "simplefin:claim:"+id+":1"); err != nil {
		t.Errorf("claim not queued: %v", err)
	}
	t.Cleanup(func() { _ = insp.DeleteTask("critical", "simplefin:claim:"+id+":1") })

	// Wrapped like other write bodies.
	if r := e.do("POST", "/api/v1/provider_connections", e.alpha.Key, map[string]any{"provider_connection": map[string]any{"setup_token": bridge.Token("two")}}); r.status != 202 {
		t.Errorf("wrapped body: %d %s", r.status, r.body)
	} else {
		t.Cleanup(func() { _ = insp.DeleteTask("critical", "simplefin:claim:"+r.json(t)["id"].(string)+":1") })
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
		wantError(t, e.do("POST", "/api/v1/provider_connections", e.alpha.Key, map[string]any{"setup_token": token}), 422, code)
	}
	wantError(t, e.do("POST", "/api/v1/provider_connections", e.alpha.Key, map[string]any{"setup_token": 5}), 422, "validation_failed")
	wantError(t, e.do("POST", "/api/v1/provider_connections", e.alpha.ReadKey, map[string]any{"setup_token": token}), 403, "insufficient_scope")

	list := e.do("GET", "/api/v1/provider_connections", e.alpha.Key, nil).json(t)
	if n := len(list["provider_connections"].([]any)); n != 2 {
		t.Errorf("%d connections", n)
	}
	if n := len(e.do("GET", "/api/v1/provider_connections", e.beta.Key, nil).json(t)["provider_connections"].([]any)); n != 0 {
		t.Errorf("another family sees %d connections", n)
	}
	wantError(t, e.do("GET", "/api/v1/provider_connections/"+id, e.beta.Key, nil), 404, "not_found")
	wantError(t, e.do("DELETE", "/api/v1/provider_connections/"+id, e.beta.Key, nil), 404, "not_found")

	if r := e.do("DELETE", "/api/v1/provider_connections/"+id, e.alpha.Key, nil); r.status != 200 {
		t.Fatalf("disconnect: %d %s", r.status, r.body)
	}
	got := e.do("GET", "/api/v1/provider_connections/"+id, e.alpha.Key, nil).json(t)
	if got["status"] != "disconnected" || got["disconnected_at"] == nil {
		t.Errorf("after disconnect: %v", got)
	}
	stored, _ := e.store.Connection(t.Context(), e.alpha.Family.ID, uuid.MustParse(id))
	if stored.SetupTokenEnc != nil || stored.AccessURLEnc != nil {
		t.Error("credentials kept after disconnect")
	}
}
