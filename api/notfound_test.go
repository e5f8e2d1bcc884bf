package api_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestMissingRouteAndMissingRecord: GET /api/v1/syncs/latest before any
// sync answered exactly like a route that does not exist. A missing route
// now has its own code and names itself; a missing record says what it is.
func TestMissingRouteAndMissingRecord(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path, key string
		code, message     string
	}{
		{"GET", "/api/v1/nope", e.alpha.Key, "route_not_found", "No route GET /api/v1/nope"},
		{"GET", "/api/v1/nope", "", "route_not_found", "No route GET /api/v1/nope"},
		{"POST", "/api/v1/syncs/latest/x", e.alpha.Key, "route_not_found", "No route POST /api/v1/syncs/latest/x"},
		{"GET", "/api/v1/syncs/latest", e.alpha.Key, "not_found", "Sync not found"},
		{"GET", "/api/v1/syncs/" + uuid.NewString(), e.alpha.Key, "not_found", "Sync not found"},
		{"GET", "/api/v1/accounts/" + e.beta.Account.ID.String(), e.alpha.Key, "not_found", "Account not found"},
		{"GET", "/api/v1/accounts/not-a-uuid", e.alpha.Key, "not_found", "Account not found"},
		{"DELETE", "/api/v1/transactions/" + uuid.NewString(), e.alpha.Key, "not_found", "Transaction not found"},
		{"GET", "/api/v1/provider_connections/" + uuid.NewString(), e.alpha.Key, "not_found", "Provider connection not found"},
		{"PATCH", "/api/v1/provider_connections/" + uuid.NewString() + "/accounts/x", e.alpha.Key, "not_found", "Provider account not found"},
		{"GET", "/api/v1/budgets/" + uuid.NewString(), e.alpha.Key, "not_found", "Budget not found"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			m := wantError(t, e.do(tc.method, tc.path, tc.key, nil), 404, tc.code)
			if m["message"] != tc.message {
				t.Errorf("message %q, want %q", m["message"], tc.message)
			}
		})
	}
	// A path that takes other methods is still a 405.
	wantError(t, e.do("PATCH", "/api/v1/syncs", e.alpha.Key, "{}"), 405, "method_not_allowed")
	// A long path is echoed short.
	m := wantError(t, e.do("GET", "/api/v1/"+strings.Repeat("a", 5000), e.alpha.Key, nil), 404, "route_not_found")
	if msg := m["message"].(string); len(msg) > 300 {
		t.Errorf("message of %d bytes", len(msg))
	}
	// A screen that does not exist is still the HTML "Page not found".
	if r := e.browser(t).get("/nope"); r.status != 404 || !strings.Contains(string(r.body), "Page not found") {
		t.Errorf("screen: %d", r.status)
	}
}
