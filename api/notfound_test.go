package api_test

import (
	"strings"
	"testing"

	"coffer/api/apitest"
	"github.com/google/uuid"
)

// TestMissingRouteAndMissingRecord: GET /api/v1/syncs/latest before any
// sync answered exactly like a route that does not exist. A missing route
// now has its own code and names itself; a missing record says what it is.
func TestMissingRouteAndMissingRecord(t *testing.T) {
	e := apitest.NewEnv(t)
	for _, tc := range []struct {
		method, path, key string
		code, message     string
	}{
		{"GET", "/api/v1/nope", e.Alpha.Key, "route_not_found", "No route GET /api/v1/nope"},
		{"GET", "/api/v1/nope", "", "route_not_found", "No route GET /api/v1/nope"},
		{"POST", "/api/v1/syncs/latest/x", e.Alpha.Key, "route_not_found", "No route POST /api/v1/syncs/latest/x"},
		{"GET", "/api/v1/syncs/latest", e.Alpha.Key, "not_found", "Sync not found"},
		{"GET", "/api/v1/syncs/" + uuid.NewString(), e.Alpha.Key, "not_found", "Sync not found"},
		{"GET", "/api/v1/accounts/" + e.Beta.Account.ID.String(), e.Alpha.Key, "not_found", "Account not found"},
		{"GET", "/api/v1/accounts/not-a-uuid", e.Alpha.Key, "not_found", "Account not found"},
		{"DELETE", "/api/v1/transactions/" + uuid.NewString(), e.Alpha.Key, "not_found", "Transaction not found"},
		{"GET", "/api/v1/provider_connections/" + uuid.NewString(), e.Alpha.Key, "not_found", "Provider connection not found"},
		{"PATCH", "/api/v1/provider_connections/" + uuid.NewString() + "/accounts/x", e.Alpha.Key, "not_found", "Provider account not found"},
		{"GET", "/api/v1/budgets/" + uuid.NewString(), e.Alpha.Key, "not_found", "Budget not found"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			m := apitest.WantError(t, e.Do(tc.method, tc.path, tc.key, nil), 404, tc.code)
			if m["message"] != tc.message {
				t.Errorf("message %q, want %q", m["message"], tc.message)
			}
		})
	}
	// A path that takes other methods is still a 405.
	apitest.WantError(t, e.Do("PATCH", "/api/v1/syncs", e.Alpha.Key, "{}"), 405, "method_not_allowed")
	// A long path is echoed short.
	m := apitest.WantError(t, e.Do("GET", "/api/v1/"+strings.Repeat("a", 5000), e.Alpha.Key, nil), 404, "route_not_found")
	if msg := m["message"].(string); len(msg) > 300 {
		t.Errorf("message of %d bytes", len(msg))
	}
	// A screen that does not exist is still the HTML "Page not found".
	if r := e.Browser(t).Get("/nope"); r.Status != 404 || !strings.Contains(string(r.Body), "Page not found") {
		t.Errorf("screen: %d", r.Status)
	}
}
