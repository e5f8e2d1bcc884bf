package api_test

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"

	"coffer/api"
	"coffer/api/apitest"
	"coffer/models"
)

// failFrom sends a wrong password for email with this X-Forwarded-For
// header and returns the status.
func failFrom(b *apitest.Browser, email, forwarded string) int {
	b.T.Helper()
	b.Get("/sessions/new")
	form := url.Values{"email": {email}, "password": {"wrong password!"}, "csrf_token": {b.CSRF}}
	return b.Send("POST", "/sessions", form, map[string]string{"X-Forwarded-For": forwarded}).Status
}

// failedFrom is the address of the only login_failed record.
func failedFrom(t *testing.T, e *apitest.Env) string {
	t.Helper()
	logs, _, err := e.Store.AuditLogs(t.Context(), models.AuditFilter{EventType: models.EventLoginFailed}, models.Page{Number: 1, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].IP == nil {
		t.Fatalf("%d login_failed records, want 1 with an address", len(logs))
	}
	return *logs[0].IP
}

// TestClientIPSpoofedForwardedFor: the client writes the left of
// X-Forwarded-For, so the client's address is the rightmost entry that is
// not a trusted proxy (app.Test's peer, 0.0.0.0, is the proxy here), and
// without TRUSTED_PROXIES the header means nothing.
func TestClientIPSpoofedForwardedFor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		proxies   []string
		forwarded string
		want      string
	}{
		{"spoofed leftmost entry", []string{"0.0.0.0"}, "203.0.113.66, 198.51.100.20", "198.51.100.20"},
		{"a chain of trusted proxies", []string{"0.0.0.0", "10.0.0.0/8"}, "203.0.113.66, 198.51.100.20, 10.1.1.1, 10.2.2.2", "198.51.100.20"},
		{"no trusted proxies: the header is ignored", nil, "198.51.100.20", "0.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apitest.NewEnv(t, func(o *api.Options) { o.Web.TrustedProxies = tc.proxies })
			if s := failFrom(e.Browser(t), e.Alpha.User.Email, tc.forwarded); s != 422 {
				t.Fatalf("status %d", s)
			}
			if got := failedFrom(t, e); got != tc.want {
				t.Errorf("recorded from %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("a new leftmost entry each time does not dodge the per-IP lockout", func(t *testing.T) {
		e := apitest.NewEnv(t, func(o *api.Options) { o.Web.MaxFailuresIP = 3 })
		b := e.Browser(t)
		for i := range 4 {
			email := fmt.Sprintf("nobody-%d@example.com", rand.Int())
			s := failFrom(b, email, fmt.Sprintf("198.51.100.%d, %s", i+1, b.IP))
			if want := map[bool]int{true: 422, false: 429}[i < 3]; s != want {
				t.Fatalf("attempt %d: %d, want %d", i+1, s, want)
			}
		}
	})
}
